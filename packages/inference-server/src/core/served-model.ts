import { sequenceBatchingOf } from '@nvcf/models';
import type { LoadedModel } from '../runtime/onnx-runner.ts';
import type { ModelDefinition } from './config-source.ts';
import { DynamicBatcher } from './dynamic-batcher.ts';
import { InstanceSlots } from './instance-slots.ts';
import type { ModelStatistics } from './model-statistics.ts';
import { SequenceScheduler } from './sequence-scheduler.ts';

/** One loaded version and what runs it; the repository builds it at load, the executor runs requests on it. */
export interface ServedVersion {
  version: string;
  model: LoadedModel;
  stats: ModelStatistics;
  slots: InstanceSlots;
  /** Present when the config asks for dynamic batching (and the model batches). */
  batcher: DynamicBatcher | undefined;
  /** Present when the config asks for sequence batching: it orders a sequence's requests, feeds controls and state. */
  sequences: SequenceScheduler | undefined;
}

export interface ServedModel {
  definition: ModelDefinition;
  /** Numeric version order, newest last. */
  versions: Map<string, ServedVersion>;
}

/** A loaded session made servable: its instance slots, and its batcher and sequence scheduler when configured. */
export function serveVersion(
  name: string,
  definition: ModelDefinition,
  model: LoadedModel,
  stats: ModelStatistics,
): ServedVersion {
  const slots = new InstanceSlots(definition.instanceCount);
  const sequencing = sequenceBatchingOf(definition.config);
  const sequences = sequencing
    ? new SequenceScheduler(name, sequencing, definition.config.max_batch_size > 0)
    : undefined;
  return {
    version: model.version,
    model,
    stats,
    slots,
    batcher: batcherFor(definition, model, slots, stats),
    sequences,
  };
}

/** The version's dynamic batcher, when its config asks for one and the model batches. */
function batcherFor(
  def: ModelDefinition,
  model: LoadedModel,
  slots: InstanceSlots,
  stats: ModelStatistics,
): DynamicBatcher | undefined {
  const config = def.config.dynamic_batching;
  if (!config || def.config.max_batch_size <= 0) return undefined;
  return new DynamicBatcher({
    maxBatchSize: def.config.max_batch_size,
    config,
    inputs: model.inputs,
    slots,
    run: (inputs, outputNames, owned) => model.run(inputs, outputNames, { moveInputs: owned }),
    onExecution: (e) => {
      if (e.ok) stats.executed(e.batchSize, e);
    },
  });
}

/** Triton's decoupled transaction policy: one request, any number of responses. */
export function decoupled(def: ModelDefinition): boolean {
  return (def.config.extra.model_transaction_policy as { decoupled?: boolean } | undefined)?.decoupled === true;
}

export const unloadedMessage = (name: string, v: string) => `model '${name}' version ${v} is unloaded`;
