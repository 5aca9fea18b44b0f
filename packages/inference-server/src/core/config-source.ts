import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import {
  apiDatatype,
  autoCompleteConfig,
  isBuiltInBackend,
  type ModelConfig,
  parseModelConfigJson,
  parseModelConfigText,
  readLabels,
  scanModelRepository,
  selectVersions,
  validateConfigAgainstModel,
} from '@nvcf/models';
import { AppError, type TensorSpec } from '@nvcf/protocol';
import type { LoadedModel } from '../runtime/onnx-runner.ts';
import type { LoadEntry } from '../runtime/session-cache.ts';

/** What the repository says about a model before its sessions exist. */
export interface ModelSource {
  name: string;
  modelDir: string;
  /** config.pbtxt or the load request's override; undefined when neither exists (auto-complete fills it). */
  config: ModelConfig | undefined;
  /** The versions its version policy selects. */
  entries: LoadEntry[];
}

/** A model as served: its completed config, tensor specs in config terms (no batch dim), labels. */
export interface ModelDefinition {
  name: string;
  config: ModelConfig;
  inputs: TensorSpec[];
  outputs: TensorSpec[];
  labels: Map<string, string[]>;
  /** How many executions may run at once (instance_group counts, summed). */
  instanceCount: number;
}

export async function readModelSource(repository: string, name: string, configOverride?: string): Promise<ModelSource> {
  const all = (await scanModelRepository(repository)).filter((e) => e.name === name);
  const modelDir = join(repository, name);
  if (all.length === 0) throw new Error(`failed to load '${name}': no model version found in ${modelDir}`);
  let config: ModelConfig | undefined;
  if (configOverride !== undefined) {
    let json: unknown;
    try {
      json = JSON.parse(configOverride);
      config = parseModelConfigJson(json);
    } catch (err) {
      throw new AppError('INVALID_ARGUMENT', `Invalid config override: ${(err as Error).message}`);
    }
  } else {
    const text = await readFile(join(modelDir, 'config.pbtxt'), 'utf8').catch(() => undefined);
    if (text !== undefined) config = parseModelConfigText(text, 'config.pbtxt');
  }
  const policy = config?.version_policy ?? { latest: { num_versions: 1 } };
  const chosen = new Set(
    selectVersions(
      policy,
      all.map((e) => e.version),
    ),
  );
  const entries = all.filter((e) => chosen.has(e.version));
  if (entries.length === 0) throw new Error(`failed to load '${name}': its version policy selects no version`);
  if (!config || !isBuiltInBackend(config.backend)) return { name, modelDir, config, entries };
  const builtIn = { backend: config.backend, ...builtInTensors(name, config) };
  return { name, modelDir, config, entries: entries.map((e) => ({ ...e, builtIn })) };
}

/** A built-in backend model's tensors from its config, shaped as a session reports them (batch dim first). */
function builtInTensors(name: string, config: ModelConfig): { inputs: TensorSpec[]; outputs: TensorSpec[] } {
  const spec = (t: { name: string; data_type: ModelConfig['input'][number]['data_type']; dims: number[] }) => {
    const datatype = apiDatatype(t.data_type);
    if (!datatype) throw new Error(`failed to load '${name}': tensor '${t.name}' has data_type TYPE_INVALID`);
    return { name: t.name, datatype, shape: config.max_batch_size > 0 ? [-1, ...t.dims] : [...t.dims] };
  };
  return { inputs: config.input.map(spec), outputs: config.output.map(spec) };
}

/** Completes the config from the loaded sessions (Triton's auto-complete) and checks it against them. */
export async function defineModel(
  source: ModelSource,
  models: LoadedModel[],
  opts: { cpuInstances?: number } = {},
): Promise<ModelDefinition> {
  const newest = models.at(-1);
  if (!newest) throw new Error(`failed to load '${source.name}': no version loaded`);
  const config = autoCompleteConfig(
    source.config,
    { name: source.name, inputs: newest.inputs, outputs: newest.outputs },
    opts.cpuInstances === undefined ? {} : { cpuInstances: opts.cpuInstances },
  );
  for (const m of models) validateConfigAgainstModel(config, m);
  const labels = new Map<string, string[]>();
  for (const out of config.output) {
    if (out.label_filename) labels.set(out.name, await readLabels(source.modelDir, out.label_filename));
  }
  const spec = (t: { name: string; data_type: ModelConfig['input'][number]['data_type']; dims: number[] }) => {
    const datatype = apiDatatype(t.data_type);
    if (!datatype) throw new Error(`failed to load '${source.name}': tensor '${t.name}' has data_type TYPE_INVALID`);
    return { name: t.name, datatype, shape: [...t.dims] };
  };
  const instanceCount = config.instance_group.reduce((n, g) => n + Math.max(1, g.count), 0) || 1;
  return {
    name: source.name,
    config,
    inputs: config.input.map(spec),
    outputs: config.output.map(spec),
    labels,
    instanceCount,
  };
}
