import { AppError } from '@nvcf/protocol';
import type { Tracer } from '@opentelemetry/api';
import type { ModelDefinition } from './config-source.ts';
import type { CoreInferRequest, CoreInferResponse } from './core-types.ts';
import type { BatchedAnswer } from './dynamic-batcher.ts';
import { batchSize, failureReason, now, ns, postProcess, runAlone, timeoutUs } from './execution-steps.ts';
import type { ModelRepository } from './model-repository.ts';
import type { ModelStatistics, ModelStatisticsSnapshot } from './model-statistics.ts';
import { traceDecoupledRun, traceRun } from './run-span.ts';
import type { SequenceTicket } from './sequence-scheduler.ts';
import { decoupled, type ServedVersion } from './served-model.ts';

/**
 * Runs requests on the repository's loaded versions (Triton's schedulers and backend calls): alone on an instance
 * slot, through the version's dynamic batcher, or in order within a sequence; decoupled models stream their
 * responses. It counts every request in the version's statistics and reads them back. Its state is the
 * repository's: each version carries its own slots, batcher, sequence scheduler and counters.
 */
export class ModelExecutor {
  readonly #repository: ModelRepository;
  readonly #tracer: Tracer | undefined;

  constructor(repository: ModelRepository, tracer: Tracer | undefined) {
    this.#repository = repository;
    this.#tracer = tracer;
  }

  async infer(req: CoreInferRequest): Promise<CoreInferResponse> {
    const arrived = now();
    const sv = this.#repository.version(req.modelName, req.modelVersion);
    const def = this.#repository.served(req.modelName).definition;
    if (decoupled(def)) {
      throw new AppError(
        'UNIMPLEMENTED',
        `model '${req.modelName}' is decoupled (it answers with a stream of responses): use a streaming call`,
      );
    }
    sv.stats.started();
    let batch: number | undefined;
    let ticket: SequenceTicket | undefined;
    try {
      batch = batchSize(def, req.inputs, req.modelName);
      ticket = sv.sequences?.admit(req.parameters, batch);
      if (ticket) {
        // One request of a sequence at a time, in order: its state is what the previous one left.
        await ticket.turn;
        // The control and state inputs join the request's own (the client never sends them).
        req = { ...req, inputs: [...req.inputs, ...ticket.inputs()] };
      }
      const requested = req.outputs?.map((o) => o.name);
      // State outputs are fetched too (after the requested ones, so indexes line up), then kept, not answered.
      const outputNames = ticket?.stateOutputs.length && requested ? [...requested, ...ticket.stateOutputs] : requested;
      const ran = await this.#dispatch(sv, req, batch, outputNames);
      ticket?.keep(ran.outputs);
      return answer(sv, def, req, ran, { arrived, batch, stateOutputs: ticket?.stateOutputs ?? [] });
    } catch (err) {
      sv.stats.failed(ns(arrived, now()), failureReason(err), batch);
      throw err;
    } finally {
      ticket?.done();
    }
  }

  async inferDecoupled(req: CoreInferRequest, onResponse: (response: CoreInferResponse) => void): Promise<void> {
    const sv = this.#repository.version(req.modelName, req.modelVersion);
    const def = this.#repository.served(req.modelName).definition;
    const run = sv.model.runDecoupled?.bind(sv.model);
    if (!decoupled(def) || !run) {
      onResponse(await this.infer(req));
      return;
    }
    const arrived = now();
    sv.stats.started();
    await sv.slots.acquire();
    const queued = now();
    try {
      if (req.signal?.aborted) throw new AppError('CANCELLED', 'request cancelled before it ran');
      await traceDecoupledRun(this.#tracer, { model: req.modelName, version: sv.version }, (responded) =>
        run(
          req.inputs,
          (outputs) => {
            responded();
            onResponse({
              modelName: req.modelName,
              modelVersion: sv.version,
              ...(req.id !== undefined ? { id: req.id } : {}),
              outputs,
            });
          },
          req.signal,
        ),
      );
      const done = now();
      const timings = {
        queueNs: ns(arrived, queued),
        computeInputNs: 0,
        computeInferNs: ns(queued, done),
        computeOutputNs: 0,
        totalNs: ns(arrived, done),
      };
      sv.stats.executed(1, timings);
      sv.stats.succeeded(1, timings);
    } catch (err) {
      sv.stats.failed(
        ns(arrived, now()),
        err instanceof AppError && err.code === 'INVALID_ARGUMENT' ? 'OTHER' : 'BACKEND',
        1,
      );
      throw err;
    } finally {
      sv.slots.release();
    }
  }

  /** Every loaded version, or one model's versions, or one version. Unknown model → INVALID_ARGUMENT. */
  statistics(name?: string, v?: string): ModelStatisticsSnapshot[] {
    if (name === undefined || name === '') {
      return this.#repository.loadedVersions().map((sv) => sv.stats.snapshot());
    }
    const m = this.#repository.served(name);
    if (v === undefined || v === '') return [...m.versions.values()].map((sv) => sv.stats.snapshot());
    return [this.#repository.version(name, v).stats.snapshot()];
  }

  /** The live statistics of every loaded version. */
  servedVersions(): ModelStatistics[] {
    return this.#repository.loadedVersions().map((sv) => sv.stats);
  }

  /** Runs the request through the version's dynamic batcher, or alone when it has none. */
  #dispatch(sv: ServedVersion, req: CoreInferRequest, rows: number, outputNames: string[] | undefined) {
    const { batcher } = sv;
    const facts = { model: req.modelName, version: sv.version, rows, batched: batcher !== undefined };
    return traceRun(this.#tracer, facts, (span) =>
      batcher
        ? batcher.submit({
            inputs: req.inputs,
            rows,
            outputNames,
            timeoutUs: timeoutUs(req.parameters),
            signal: req.signal,
            owned: req.inputsOwned === true,
            ...(span ? { span } : {}),
          })
        : runAlone(sv, req, rows, outputNames),
    );
  }
}

/** The response to a run: its state outputs kept back, classification applied, the request counted. */
function answer(
  sv: ServedVersion,
  def: ModelDefinition,
  req: CoreInferRequest,
  ran: BatchedAnswer,
  at: { arrived: bigint; batch: number; stateOutputs: string[] },
): CoreInferResponse {
  const { stateOutputs } = at;
  const answered = stateOutputs.length ? ran.outputs.filter((t) => !stateOutputs.includes(t.name)) : ran.outputs;
  const postStart = now();
  const shaped = answered.map((t, i) => postProcess(def, t, req.outputs?.[i]?.classification));
  const done = now();
  const timings = {
    queueNs: ran.queueNs,
    computeInputNs: ran.computeInputNs,
    computeInferNs: ran.computeInferNs,
    computeOutputNs: ran.computeOutputNs + ns(postStart, done),
    totalNs: ns(at.arrived, done),
  };
  // The batcher reports its executions itself; alone, this request was one.
  if (!sv.batcher) sv.stats.executed(at.batch, timings);
  sv.stats.succeeded(at.batch, timings);
  return {
    modelName: req.modelName,
    modelVersion: sv.version,
    ...(req.id !== undefined ? { id: req.id } : {}),
    outputs: shaped,
  };
}
