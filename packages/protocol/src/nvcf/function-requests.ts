import { z } from 'zod';
import { AppError } from '../errors.ts';
import { printableText } from './printable-text.ts';
import { SecretList } from './secret-requests.ts';

/** NVCF function names (NVCF API reference: CreateFunctionRequest). */
const NAME = /^[a-z0-9A-Z][a-z0-9A-Z\-_]*$/;
/** ISO-8601 durations as NVCF's health timeout takes them, e.g. `PT10S`. */
const ISO_DURATION = /^P(?!$)(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+(\.\d+)?S)?)?$/;

const KeyValue = z.object({ key: z.string().min(1), value: z.string() });
const ModelRef = z.object({ name: z.string().min(1), version: z.string().min(1), uri: z.string().min(1) });

export const CreateFunctionRequest = z
  .object({
    name: z
      .string()
      .min(1, 'must not be blank')
      .max(128, 'must be at most 128 characters')
      .regex(NAME, "must match '^[a-z0-9A-Z][a-z0-9A-Z\\-_]*$'"),
    inferenceUrl: z.string().min(1, 'must not be blank'),
    inferencePort: z.number().int().min(1).max(65535).optional(),
    healthUri: z.string().optional(),
    health: z
      .object({
        protocol: z.enum(['HTTP', 'gRPC']),
        uri: z.string().min(1),
        port: z.number().int().min(1).max(65535),
        timeout: z.string().regex(ISO_DURATION, "must be an ISO-8601 duration such as 'PT10S'"),
        expectedStatusCode: z.number().int().min(100).max(599),
      })
      .optional(),
    containerImage: z.string().min(1).optional(),
    helmChart: z.string().min(1).optional(),
    helmChartServiceName: z.string().min(1).optional(),
    containerArgs: z.string().optional(),
    containerEnvironment: z.array(KeyValue).optional(),
    models: z.array(ModelRef).optional(),
    resources: z.array(ModelRef).optional(),
    apiBodyFormat: z.enum(['CUSTOM', 'PREDICT_V2']).default('CUSTOM'),
    functionType: z.enum(['DEFAULT', 'STREAMING', 'LLM']).default('DEFAULT'),
    description: printableText().max(1024).optional(),
    tags: z.array(printableText().min(1).max(128)).max(64).optional(),
    secrets: SecretList.optional(),
  })
  .loose()
  .refine((r) => !(r.containerImage && r.helmChart), {
    message: "'containerImage' and 'helmChart' are mutually exclusive",
    path: ['containerImage'],
  })
  .refine((r) => !r.helmChart || r.helmChartServiceName, {
    message: "'helmChartServiceName' is required with 'helmChart'",
    path: ['helmChartServiceName'],
  });
export type CreateFunctionRequest = z.infer<typeof CreateFunctionRequest>;

export const UpdateMetadataRequest = z.object({
  tags: z.array(printableText().min(1).max(128)).max(64).optional(),
  description: printableText().max(1024).optional(),
});

export const DeploymentSpecification = z
  .object({
    gpu: printableText().trim().min(1, 'must not be blank'),
    instanceType: printableText().trim().min(1, 'must not be blank'),
    backend: printableText().optional(),
    minInstances: z.number().int().min(0, 'must be greater than or equal to 0'),
    maxInstances: z.number().int().min(1, 'must be greater than 0'),
    maxRequestConcurrency: z.number().int().min(1).max(1024).default(1),
    preferredOrder: z.number().int().min(1).max(99).optional(),
    availabilityZones: z.array(z.string()).optional(),
    clusters: z.array(z.string()).optional(),
    regions: z.array(z.string()).optional(),
    attributes: z.array(z.string()).optional(),
    configuration: z.record(z.string(), z.unknown()).optional(),
  })
  .refine((s) => s.minInstances <= s.maxInstances, {
    message: "'minInstances' must be lesser than or equal to 'maxInstances'",
    path: [],
  });

export const DeploymentRequest = z.object({
  deploymentSpecifications: z.array(DeploymentSpecification).min(1, 'must not be empty'),
});
export type DeploymentRequest = z.infer<typeof DeploymentRequest>;

/**
 * Parses a control-plane body, or throws INVALID_ARGUMENT worded as NVCF words it
 * (`Invalid request: 'minInstances' must be lesser than or equal to 'maxInstances'`).
 */
export function parseControlRequest<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  const r = schema.safeParse(body);
  if (r.success) return r.data;
  const first = r.error.issues[0];
  const field = first?.path.filter((p) => typeof p === 'string').at(-1);
  const text = first?.message.startsWith("'") || !field ? first?.message : `'${String(field)}' ${first?.message}`;
  throw new AppError('INVALID_ARGUMENT', `Invalid request: ${text ?? 'malformed body'}`);
}
