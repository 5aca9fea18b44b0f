import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateExampleRepository, parseModelConfigText } from '@nvcf/models';

/** The example model every variant is a copy of. */
export const COMPUTE_SOURCE_MODEL = 'densenet_onnx';
const LABELS_FILE = 'densenet_labels.txt';

/** One copy of the model under its own name: same model.onnx, its own instance_group and batching. */
export interface ComputeVariant {
  name: string;
  instances: number;
  /** `max_queue_delay_microseconds` when the variant asks for dynamic batching; absent: no batcher. */
  queueDelayUs?: number;
}

/**
 * The four variants of the compute section. Every one runs on KIND_CPU instances, each a thread with one
 * ORT session at 1 intra-op thread: (a) compares batching on vs off at 1 instance each, so both have the
 * same compute (one core) and only the scheduler differs; (b) compares 2 instances vs 1 without batching.
 * `densenet_plain` and `densenet_1x` share a config: separate names keep each comparison's statistics apart.
 */
export function computeVariants(queueDelayUs: number): Record<'batched' | 'plain' | 'one' | 'two', ComputeVariant> {
  return {
    batched: { name: 'densenet_batched', instances: 1, queueDelayUs },
    plain: { name: 'densenet_plain', instances: 1 },
    one: { name: 'densenet_1x', instances: 1 },
    two: { name: 'densenet_2x', instances: 2 },
  };
}

/** The variant's config.pbtxt: the example's config renamed, plus what a Triton user would add to it. */
export function variantConfigText(base: string, v: ComputeVariant): string {
  const renamed = base.replace(/^name: "[^"]*"$/m, `name: "${v.name}"`);
  if (renamed === base) throw new Error(`${COMPUTE_SOURCE_MODEL} config.pbtxt has no top-level name line`);
  let text = `${renamed}instance_group [ { count: ${v.instances}, kind: KIND_CPU } ]\n`;
  if (v.queueDelayUs !== undefined) text += `dynamic_batching { max_queue_delay_microseconds: ${v.queueDelayUs} }\n`;
  // Parsed back here so that a config the worker would read differently fails before any figure is taken.
  const parsed = parseModelConfigText(text, `${v.name}/config.pbtxt`);
  const instances = parsed.instance_group.reduce((n, g) => n + g.count, 0);
  if (
    parsed.name !== v.name ||
    instances !== v.instances ||
    (parsed.dynamic_batching !== undefined) !== (v.queueDelayUs !== undefined)
  ) {
    throw new Error(
      `${v.name}: config.pbtxt parses as ${parsed.name}, ${instances} instances, batching ${parsed.dynamic_batching !== undefined}`,
    );
  }
  if (parsed.max_batch_size <= 0)
    throw new Error(`${COMPUTE_SOURCE_MODEL}: max_batch_size ${parsed.max_batch_size}, nothing to batch`);
  return text;
}

/**
 * Writes each variant into `repository` (Triton layout, version 1) from a freshly generated `densenet_onnx`,
 * and returns the model's max_batch_size.
 */
export async function writeComputeRepository(repository: string, variants: ComputeVariant[]): Promise<number> {
  const scratch = await mkdtemp(join(tmpdir(), 'nvcf-bench-densenet-'));
  try {
    await generateExampleRepository(scratch, { includeDensenet: true });
    const source = join(scratch, COMPUTE_SOURCE_MODEL);
    const base = await readFile(join(source, 'config.pbtxt'), 'utf8');
    for (const v of variants) {
      const dir = join(repository, v.name);
      await mkdir(join(dir, '1'), { recursive: true });
      await copyFile(join(source, '1', 'model.onnx'), join(dir, '1', 'model.onnx'));
      await copyFile(join(source, LABELS_FILE), join(dir, LABELS_FILE));
      await writeFile(join(dir, 'config.pbtxt'), variantConfigText(base, v));
    }
    return parseModelConfigText(base).max_batch_size;
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}
