import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { PROGRESS_FILE } from './request-dirs.ts';
import type { SharedTicker } from './shared-ticker.ts';

const ProgressFile = z.object({
  id: z.string(),
  progress: z.number(),
  partialResponse: z.unknown().optional(),
});

/**
 * Watches a request's progress file (NVCF worker: `progress` in the large-output dir, `{"id","progress",
 * "partialResponse"}`): each write with a newer mtime and the request's id is reported, so the client's next
 * 202 carries `NVCF-PERCENT-COMPLETE` and the partial body. A file that does not parse, or names another
 * request, is ignored, as NVCF's worker ignores it.
 */
export function watchProgressFile(
  largeOutputDir: string,
  requestId: string,
  report: (percent: number, partial: Buffer) => Promise<unknown>,
  ticker: SharedTicker,
): { stop(): Promise<void> } {
  const path = join(largeOutputDir, PROGRESS_FILE);
  let seen = 0;
  const poll = async () => {
    const info = await stat(path).catch(() => undefined);
    if (!info || info.mtimeMs <= seen) return;
    seen = info.mtimeMs;
    let parsed: z.infer<typeof ProgressFile>;
    try {
      parsed = ProgressFile.parse(JSON.parse(await readFile(path, 'utf8')));
    } catch {
      // Half written, or not the format: the next write is read again.
      seen = 0;
      return;
    }
    if (parsed.id !== requestId) return;
    const partial = parsed.partialResponse === undefined ? '' : JSON.stringify(parsed.partialResponse);
    await report(parsed.progress, Buffer.from(partial));
  };
  return { stop: ticker.every(poll) };
}
