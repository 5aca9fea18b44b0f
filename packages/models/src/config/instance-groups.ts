import type { InstanceGroupConfig } from './model-config.ts';
import { ModelConfigError } from './proto-schema.ts';

/** ONNX Runtime is one of the backends Triton gives two CPU instances by default (TS model_configuration.md). */
export const ORT_DEFAULT_CPU_COUNT = 2;

/**
 * Triton core's NormalizeInstanceGroup for an ONNX Runtime model, which runs even with auto-complete disabled:
 * no groups → one group named after the model; unnamed groups → `<model>_<index>`; KIND_AUTO → KIND_GPU when every
 * listed GPU exists (and there is one), else KIND_CPU; count < 1 → 2 for KIND_CPU, 1 otherwise; KIND_GPU without
 * `gpus` → every available GPU.
 *
 * @param availableGpus device ids this server can use (empty on a CPU-only host).
 * @param cpuCount the count a KIND_CPU group without one gets (Triton's 2 unless the server says otherwise).
 * @throws ModelConfigError for a KIND_GPU group when no (or not the listed) GPUs are available.
 * @example
 * normalizeInstanceGroups([], 'simple', []); // [{ name: 'simple', kind: 'KIND_CPU', count: 2, gpus: [] }]
 */
export function normalizeInstanceGroups(
  groups: readonly InstanceGroupConfig[],
  modelName: string,
  availableGpus: readonly number[] = [],
  cpuCount = ORT_DEFAULT_CPU_COUNT,
): InstanceGroupConfig[] {
  const source: InstanceGroupConfig[] = groups.length
    ? groups.map((g) => ({ ...g, gpus: [...g.gpus] }))
    : [{ name: modelName, kind: 'KIND_AUTO', count: 0, gpus: [] }];
  return source.map((group, i) => {
    const g = { ...group };
    if (!g.name) g.name = `${modelName}_${i}`;
    if (g.kind === 'KIND_AUTO') {
      const allPresent = g.gpus.every((id) => availableGpus.includes(id));
      g.kind = availableGpus.length && allPresent ? 'KIND_GPU' : 'KIND_CPU';
    }
    if (g.count < 1) g.count = g.kind === 'KIND_CPU' ? Math.max(1, cpuCount) : 1;
    if (g.kind === 'KIND_GPU') {
      if (!g.gpus.length) g.gpus = [...availableGpus];
      const missing = g.gpus.filter((id) => !availableGpus.includes(id));
      if (!g.gpus.length || missing.length) {
        const what = g.gpus.length
          ? `GPU ${missing.join(', ')}, which is not available`
          : 'a GPU, and none is available';
        throw new ModelConfigError(
          `failed to load '${modelName}': instance group '${g.name}' (KIND_GPU) needs ${what}`,
        );
      }
    }
    return g;
  });
}
