import type { ModelConfig } from '@nvcf/models';

/**
 * How many jobs a worker holds active at once for a model: enough to fill every instance with a full
 * batch when the model batches dynamically (max_batch_size × instances, so batches can form from the
 * queue), one per instance otherwise, plus one waiting per instance so an instance never idles while a
 * finished job's result is written and the next job is fetched from Redis.
 *
 * @example
 * modelConcurrency({ max_batch_size: 8, dynamic_batching: {...}, instance_group: [{ count: 2 }] }); // 18
 * modelConcurrency({ max_batch_size: 8, instance_group: [{ count: 2 }] });                          // 4
 */
export function modelConcurrency(
  config: Pick<ModelConfig, 'max_batch_size' | 'dynamic_batching' | 'instance_group'>,
): number {
  const instances = config.instance_group.reduce((n, g) => n + Math.max(1, g.count), 0) || 1;
  const perInstance = config.dynamic_batching && config.max_batch_size > 0 ? config.max_batch_size : 1;
  return instances * perInstance + instances;
}
