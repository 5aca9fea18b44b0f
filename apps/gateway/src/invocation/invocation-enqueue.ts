import { AppError } from '@nvcf/protocol';
import { type IdempotencyStore, isRedisUnavailable, newRequestId, type Waiter } from '@nvcf/queue';
import type { FunctionResolver } from './function-resolver.ts';
import type { IdempotentCall } from './idempotency-key.ts';
import type { InvokeRequest } from './invocation-service.ts';
import type { JobAdmission } from './job-admission.ts';
import { queueBytesRefusal } from './queue-guard.ts';
import type { RequestWaits } from './request-waits.ts';

/** A request this call started (with its waiter), or the one an earlier call with its `Idempotency-Key` started. */
export type Started = { requestId: string; waiter: Waiter } | { existing: string };

export interface InvocationEnqueue {
  /**
   * Queues a new request, or — for a retry carrying the `Idempotency-Key` of an earlier call — finds the
   * request that call started (`existing`), so the function never runs twice for one call.
   */
  enqueue(req: InvokeRequest, stream: boolean): Promise<Started>;
}

export interface InvocationEnqueueDeps {
  functions: FunctionResolver;
  idempotency: IdempotencyStore;
  admission: JobAdmission;
  waits: Pick<RequestWaits, 'register' | 'ownerOf'>;
}

/**
 * Claims the call's `Idempotency-Key` for `requestId`; the request an earlier call with it started, when
 * there is one. Throws for a key used on a different request, or one whose first call is not recorded yet.
 */
async function claimKey(
  { idempotency, waits }: InvocationEnqueueDeps,
  req: InvokeRequest,
  idem: IdempotentCall,
  requestId: string,
): Promise<string | undefined> {
  const claim = await idempotency.claim(req.principal, idem.key, idem.fingerprint, requestId).catch((err: unknown) => {
    // The claim may still land once Redis answers; nothing was queued for it, so give it up (the
    // release travels behind the claim on the same connection). Not waited for: the client's
    // answer must not wait out a second command timeout.
    void idempotency.release(req.principal, idem.key, idem.fingerprint, requestId).catch(() => {});
    throw err;
  });
  if (claim.kind === 'existing') {
    // The first call may still be between its claim and its queueing (or have failed there):
    // without a record there is nothing to wait for yet. Come back shortly.
    if (!(await waits.ownerOf(claim.requestId))) {
      throw new AppError('UNAVAILABLE', 'the first call with this Idempotency-Key is not recorded yet; retry', {
        retryAfterSeconds: 1,
      });
    }
    return claim.requestId;
  }
  if (claim.kind === 'mismatch') {
    throw new AppError(
      'UNPROCESSABLE',
      `Idempotency-Key was already used for a different request (request '${claim.requestId}')`,
    );
  }
  return undefined;
}

/** New requests: the version resolved, the call's `Idempotency-Key` claimed, the waiter registered, the job added. */
export function createInvocationEnqueue(deps: InvocationEnqueueDeps): InvocationEnqueue {
  const { idempotency } = deps;

  return {
    async enqueue(req, stream) {
      const { fv } = await deps.functions.resolve(req.functionId, req.versionId, req.ncaId);
      // Its first digits are the version's: the request's records shard with its queue (keys.ts).
      const requestId = newRequestId(fv.versionId);
      const idem = req.idempotency;
      if (idem) {
        const existing = await claimKey(deps, req, idem, requestId);
        if (existing) return { existing };
      }
      // Registered before the add: a fast worker can publish the completion before `enqueue` returns.
      const waiter = deps.waits.register(requestId, req.pollSeconds, req.signal);
      try {
        await deps.admission.queue(req, fv, requestId, stream);
      } catch (err) {
        waiter.settle({ kind: 'aborted' });
        // Refused (a full queue, say): nothing started, a retry with the same key may start it. Redis
        // failing mid-way is another matter: the request may have been queued after all, so the key
        // stays claimed (for a short while only, see the idempotency store) rather than invite a rerun.
        if (idem && !isRedisUnavailable(err)) {
          await idempotency.release(req.principal, idem.key, idem.fingerprint, requestId).catch(() => {});
        }
        throw queueBytesRefusal(err);
      }
      if (idem) await idempotency.confirm(req.principal, idem.key, idem.fingerprint, requestId).catch(() => {});
      return { requestId, waiter };
    },
  };
}
