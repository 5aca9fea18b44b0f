import type { Transport } from './transport.ts';

/** How long an abandoned call's clean-up may take before it is given up (the call itself is already over). */
const CLEANUP_MS = 10_000;

/** Every answer but the retried ones (429, 503), which the transport retries as usual. */
export const answered = (status: number) => status !== 429 && status !== 503;

/** The route that cancels a request (the gateway's; NVCF documents no cancel). */
export const cancelPath = (requestId: string) => `/v2/nvcf/pexec/status/${encodeURIComponent(requestId)}`;

/** What an aborted or abandoned call knows of the request it started. */
export interface Abandoned {
  /** `NVCF-REQID`, once an answer carried it. */
  requestId?: string;
  /**
   * Without an id yet (aborted during the first long poll): sends the invocation again with its `Idempotency-Key` and
   * a 1-second window, which names the request the first call started (or starts one, which is cancelled in turn).
   */
  resend?: (window: { signal: AbortSignal }) => Promise<Response>;
}

/**
 * Cancels the request a call left behind (`DELETE /v2/nvcf/pexec/status/{reqId}`), so an aborted invocation stops
 * using the function: best effort, bounded in time, never throws. A request that answered meanwhile is left as is.
 */
export async function cancelAbandoned(transport: Transport, abandoned: Abandoned): Promise<void> {
  const signal = AbortSignal.timeout(CLEANUP_MS);
  try {
    let requestId = abandoned.requestId;
    if (!requestId && abandoned.resend) {
      const res = await abandoned.resend({ signal });
      await res.body?.cancel();
      // Anything but 202 means nothing runs any more (answered, or never accepted).
      if (res.status !== 202) return;
      requestId = res.headers.get('nvcf-reqid') ?? undefined;
    }
    if (!requestId) return;
    const res = await transport.send('DELETE', cancelPath(requestId), { signal, accept: answered });
    await res.body?.cancel();
  } catch {
    // The caller already has its answer (the abort): a failed clean-up only leaves the request to finish on its own.
  }
}
