import { z } from 'zod';
import { Parameters } from './openapi-schemas.ts';

/**
 * Shapes of Triton's HTTP extensions for this server's OpenAPI document, named after the `$…` objects of
 * Triton's extension docs (https://github.com/triton-inference-server/server: docs/protocol/extension_*.md). Their
 * routes parse by hand, keeping Triton's error texts; these only document.
 */

const ModelState = z.enum(['READY', 'UNAVAILABLE', 'LOADING', 'UNLOADING']);

export const RepositoryIndexRequest = z
  .object({ ready: z.boolean().optional().describe('Only the models that are ready.') })
  .meta({ id: 'repository_index_request', description: 'Optional: an empty body lists every model.' });

export const RepositoryIndexResponse = z
  .array(
    z.object({
      name: z.string(),
      version: z.string().optional(),
      state: ModelState,
      reason: z.string(),
    }),
  )
  .meta({ id: 'repository_index_response' });

export const RepositoryLoadRequest = z
  .object({
    parameters: z
      .object({ config: z.string().optional().describe('A ModelConfig in JSON that replaces config.pbtxt.') })
      .optional(),
  })
  .meta({ id: 'repository_load_request', description: 'Optional; `file:` overrides are not supported.' });

export const RepositoryUnloadRequest = z
  .object({ parameters: z.object({ unload_dependents: z.boolean().optional() }).optional() })
  .meta({ id: 'repository_unload_request', description: 'Optional.' });

const DurationStat = z.object({ count: z.int(), ns: z.int() }).meta({ id: 'duration_stat' });

export const StatsModelResponse = z
  .object({
    model_stats: z.array(
      z
        .object({
          name: z.string(),
          version: z.string(),
          last_inference: z.int().describe('Milliseconds since the epoch; 0 before the first.'),
          inference_count: z.int(),
          execution_count: z.int(),
          inference_stats: z
            .object({
              success: DurationStat,
              fail: DurationStat,
              queue: DurationStat,
              compute_input: DurationStat,
              compute_infer: DurationStat,
              compute_output: DurationStat,
              cache_hit: DurationStat,
              cache_miss: DurationStat,
            })
            .meta({ id: 'inference_stats' }),
          batch_stats: z.array(
            z
              .object({
                batch_size: z.int(),
                compute_input: DurationStat,
                compute_infer: DurationStat,
                compute_output: DurationStat,
              })
              .meta({ id: 'batch_stats' }),
          ),
          memory_usage: z.array(z.unknown()),
          response_stats: z.record(z.string(), z.unknown()),
        })
        .meta({ id: 'model_stat' }),
    ),
  })
  .meta({ id: 'stats_model_response' });

export const ModelConfigResponse = z
  .looseObject({
    name: z.string(),
    platform: z.string(),
    backend: z.string(),
    max_batch_size: z.int(),
    input: z.array(z.looseObject({ name: z.string(), data_type: z.string(), dims: z.array(z.int()) })),
    output: z.array(z.looseObject({ name: z.string(), data_type: z.string(), dims: z.array(z.int()) })),
  })
  .meta({
    id: 'model_config_response',
    description: "The model's ModelConfig in Triton's JSON form, every field present, 64-bit integers as numbers.",
  });

export const SystemSharedMemoryStatusResponse = z
  .array(z.object({ name: z.string(), key: z.string(), offset: z.int(), byte_size: z.int() }))
  .meta({ id: 'system_shared_memory_status_response' });

export const SystemSharedMemoryRegisterRequest = z
  .object({
    key: z.string().describe('The POSIX shared memory object, e.g. `/my_region`.'),
    offset: z.int().min(0).optional(),
    byte_size: z.int().min(0),
  })
  .meta({ id: 'system_shared_memory_register_request' });

export const CudaSharedMemoryStatusResponse = z
  .array(z.object({ name: z.string(), device_id: z.int(), byte_size: z.int() }))
  .meta({ id: 'cuda_shared_memory_status_response', description: 'Always empty: this server has no GPUs.' });

export const CudaSharedMemoryRegisterRequest = z
  .object({ raw_handle: z.object({ b64: z.string() }), device_id: z.int(), byte_size: z.int() })
  .meta({ id: 'cuda_shared_memory_register_request' });

export const GenerateRequest = z.looseObject({ id: z.string().optional(), parameters: Parameters.optional() }).meta({
  id: 'generate_request',
  description:
    "Each key that names one of the model's inputs is that input, a scalar or a (nested) list laid out by the " +
    "input's configured shape; any other key is a request parameter.",
});

export const GenerateResponse = z
  .looseObject({ model_name: z.string(), model_version: z.string(), id: z.string().optional() })
  .meta({
    id: 'generate_response',
    description: 'Besides these, each output by name: a scalar for one element, else a flat list.',
  });
