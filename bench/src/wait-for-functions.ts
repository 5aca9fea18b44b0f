import type { HttpClient } from './http-client.ts';

/** What the readiness checks read of `GET /v2/nvcf/functions`. */
export interface ListedFunction {
  id: string;
  status: string;
  activeInstances?: { instanceId: string }[];
}

/**
 * Polls `GET /v2/nvcf/functions` until `waitingFor` finds nothing left to wait for (it returns undefined), or
 * throws after `timeoutMs` with the last thing it was waiting for: a figure must not start while a worker loads.
 */
export async function waitForFunctions(
  client: HttpClient,
  waitingFor: (functions: ListedFunction[]) => string | undefined,
  opts: { timeoutMs: number; what: string; intervalMs?: number },
): Promise<void> {
  const deadline = Date.now() + opts.timeoutMs;
  let last = 'gateway not answering';
  while (Date.now() < deadline) {
    try {
      const res = await client.request('GET', '/v2/nvcf/functions');
      if (res.status === 200) {
        const { functions } = JSON.parse(res.body.toString()) as { functions: ListedFunction[] };
        const pending = waitingFor(functions);
        if (pending === undefined) return;
        last = pending;
      } else {
        last = `GET /v2/nvcf/functions answered ${res.status}`;
      }
    } catch (err) {
      last = (err as Error).message;
    }
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 100));
  }
  throw new Error(`${opts.what} not ready within ${opts.timeoutMs} ms: ${last}`);
}
