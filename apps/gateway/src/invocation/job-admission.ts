import type { FunctionVersion } from '@nvcf/control-store';
import { type EnqueueOptions, type InvocationJob, sequenceFlagsOf } from '@nvcf/queue';
import { kserveHeaderOf, type PlacedInput, placeInput, verbatimInput } from './input-placement.ts';
import type { InvocationEventEmitter } from './invocation-events.ts';
import type { InvocationDeps, InvokeRequest } from './invocation-service.ts';

/** Admits a request to its version's queue and adds it. */
export interface JobAdmission {
  /** Admits the request to its version's queue and adds it: the record, the kept input and the job, in one step. */
  queue(req: InvokeRequest, fv: FunctionVersion, requestId: string, stream: boolean): Promise<void>;
}

type AdmissionDeps = Pick<
  InvocationDeps,
  'queueGuard' | 'producer' | 'completions' | 'maxJobInputBytes' | 'maxInlineResultBytes' | 'sequences' | 'traceContext'
>;

/** What the job carries besides the request's own fields. */
interface JobContext {
  requestId: string;
  input: InvocationJob['input'];
  reply: InvocationJob['reply'];
  stream: boolean;
  trace: InvocationJob['trace'];
}

/** The job a worker runs for `req` on `fv`. */
function invocationJobOf(req: InvokeRequest, fv: FunctionVersion, ctx: JobContext): InvocationJob {
  return {
    requestId: ctx.requestId,
    functionId: fv.id,
    versionId: fv.versionId,
    input: ctx.input,
    headers: fv.container && req.containerHeaders ? req.containerHeaders() : req.headers,
    ...(req.assetIds && req.assetIds.length > 0 ? { assetIds: req.assetIds } : {}),
    reply: ctx.reply,
    ...(req.directOnly ? { directOnly: true } : {}),
    ...(req.respond ? { respond: req.respond } : {}),
    ...(ctx.stream ? { stream: true } : {}),
    ...(ctx.trace ? { trace: ctx.trace } : {}),
  };
}

/** The add's options: whose request it is, the worker it must reach, and its input kept beside the job. */
function enqueueOptionsOf(req: InvokeRequest, worker: string | undefined, placed: PlacedInput): EnqueueOptions {
  const { stored, entryBytes } = placed;
  return {
    principal: req.principal,
    account: req.ncaId,
    ...(worker ? { worker } : {}),
    ...(stored ? { input: stored } : {}),
    ...(entryBytes ? { entryBytes } : {}),
  };
}

/** The admission checks and the add, reporting `accepted`, then `queued` or `failed`, to `events`. */
export function createJobAdmission(deps: AdmissionDeps, events: InvocationEventEmitter): JobAdmission {
  /** The worker a sequence model's request must reach (the one holding its sequence), if the request names one. */
  async function sequenceWorker(versionId: string, req: InvokeRequest): Promise<string | undefined> {
    const flags = sequenceFlagsOf(kserveHeaderOf(req.input, req.headers, req.body));
    return flags && deps.sequences ? deps.sequences.route(versionId, flags) : undefined;
  }

  return {
    async queue(req, fv, requestId, stream) {
      await deps.queueGuard.admit(fv.versionId);
      const worker = fv.model?.sequence ? await sequenceWorker(fv.versionId, req) : undefined;
      const placed = placeInput(
        fv.container ? verbatimInput(req.input, req.body) : req.input,
        req.body,
        deps.maxJobInputBytes,
      );
      const { stored, entryBytes } = placed;
      await deps.queueGuard.admitBytes(req.ncaId, (stored ?? entryBytes ?? req.body)?.byteLength ?? 0);
      const trace = deps.traceContext?.();
      const labels = { requestId, functionId: fv.id, versionId: fv.versionId };
      events.emit('accepted', { ...labels, at: Date.now() });
      const reply = { gatewayId: deps.completions.gatewayId, maxInlineBytes: deps.maxInlineResultBytes };
      const job = invocationJobOf(req, fv, { requestId, input: placed.input, reply, stream, trace });
      // One step: the record, the kept input and the job are written together (one script, one round trip).
      const queued = await deps.producer.enqueue(job, enqueueOptionsOf(req, worker, placed)).catch((error: unknown) => {
        events.emit('failed', { requestId, error });
        throw error;
      });
      if (queued) events.emit('queued', labels);
      else events.emit('failed', { requestId });
    },
  };
}
