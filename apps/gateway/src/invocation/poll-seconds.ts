import { AppError, MAX_POLL_SECONDS } from '@nvcf/protocol';

/**
 * `NVCF-POLL-SECONDS` (NVCF API; NVCF behaviour: polling): an integer; above 3600 or not an integer → 400;
 * below 1 is clamped to 1. Absent → the configured default.
 */
export function parsePollSeconds(header: string | undefined, defaultSeconds: number): number {
  if (header === undefined) return defaultSeconds;
  const text = header.trim();
  if (!/^[+-]?\d+$/.test(text)) throw new AppError('INVALID_ARGUMENT', 'NVCF-POLL-SECONDS must be an integer');
  const value = Number(text);
  if (value > MAX_POLL_SECONDS) {
    throw new AppError('INVALID_ARGUMENT', `NVCF-POLL-SECONDS must be <= ${MAX_POLL_SECONDS}`);
  }
  return Math.max(1, value);
}
