import { z } from 'zod';
import { AppError } from '../errors.ts';
import { printableText } from './printable-text.ts';
import { SecretList } from './secret-requests.ts';

/** NVCF function names (NVCF API reference: CreateFunctionRequest). */
const NAME = /^[a-z0-9A-Z][a-z0-9A-Z\-_]*$/;
/** ISO-8601 durations as NVCF's health timeout takes them, e.g. `PT10S`. */
const ISO_DURATION = /^P(?!$)(\d+D)?(T(?=\d)(\d+H)?(\d+M)?(\d+(\.\d+)?S)?)?$/;

/**
 * The most a create request's fields may hold. A version is stored whole and every listing of its account returns
 * it, so what one account may store is bounded field by field (and by FUNCTION_QUOTA_COUNT), not only by the
 * control plane's 1 MiB body limit. Lengths are in characters.
 */
export const FUNCTION_FIELD_LIMITS = {
  /** `inferenceUrl`, `healthUri`, `health.uri`, `helmChart` and each model's or resource's `uri`. */
  uri: 2048,
  containerImage: 1024,
  containerArgs: 8192,
  /** `containerEnvironment`: entries, each key, each value, and every key and value together. */
  environmentEntries: 256,
  environmentKey: 256,
  environmentValue: 16 * 1024,
  environmentTotal: 64 * 1024,
  /** `models` and `resources`: entries, and each one's name and version. */
  artifacts: 32,
  artifactName: 256,
  artifactVersion: 128,
  /** Fields this gateway does not know are kept and returned as given: their JSON, together. */
  unknownFields: 16 * 1024,
} as const;
const L = FUNCTION_FIELD_LIMITS;

const atMost = (n: number) => `must be at most ${n} characters`;
const uri = (field: string) =>
  z
    .string()
    .min(1, 'must not be blank')
    .max(L.uri, field.includes('.') ? `'${field}' ${atMost(L.uri)}` : atMost(L.uri));

const KeyValue = z.object({
  key: z
    .string()
    .min(1)
    .max(L.environmentKey, `'containerEnvironment' keys ${atMost(L.environmentKey)} each`),
  value: z.string().max(L.environmentValue, `'containerEnvironment' values ${atMost(L.environmentValue)} each`),
});
const environmentLength = (entries: readonly { key: string; value: string }[]) =>
  entries.reduce((n, e) => n + e.key.length + e.value.length, 0);
const ContainerEnvironment = z
  .array(KeyValue)
  .max(L.environmentEntries, `must hold at most ${L.environmentEntries} entries`)
  .refine((entries) => environmentLength(entries) <= L.environmentTotal, {
    message: `must hold at most ${L.environmentTotal} characters of keys and values together`,
  })
  .describe(
    `At most ${L.environmentEntries} entries, keys of at most ${L.environmentKey} characters, values of at most ` +
      `${L.environmentValue}, and ${L.environmentTotal} characters of keys and values together.`,
  );
const artifacts = (field: 'models' | 'resources') =>
  z
    .array(
      z.object({
        name: z
          .string()
          .min(1)
          .max(L.artifactName, `'${field}' names ${atMost(L.artifactName)} each`),
        version: z
          .string()
          .min(1)
          .max(L.artifactVersion, `'${field}' versions ${atMost(L.artifactVersion)} each`),
        uri: z
          .string()
          .min(1)
          .max(L.uri, `'${field}' uris ${atMost(L.uri)} each`),
      }),
    )
    .max(L.artifacts, `must hold at most ${L.artifacts} entries`);

export const CreateFunctionRequest = z
  .object({
    name: z
      .string()
      .min(1, 'must not be blank')
      .max(128, 'must be at most 128 characters')
      .regex(NAME, "must match '^[a-z0-9A-Z][a-z0-9A-Z\\-_]*$'"),
    inferenceUrl: uri('inferenceUrl'),
    inferencePort: z.number().int().min(1).max(65535).optional(),
    healthUri: z.string().max(L.uri, atMost(L.uri)).optional(),
    health: z
      .object({
        protocol: z.enum(['HTTP', 'gRPC']),
        uri: uri('health.uri'),
        port: z.number().int().min(1).max(65535),
        timeout: z.string().regex(ISO_DURATION, "must be an ISO-8601 duration such as 'PT10S'"),
        expectedStatusCode: z.number().int().min(100).max(599),
      })
      .optional(),
    containerImage: z.string().min(1).max(L.containerImage, atMost(L.containerImage)).optional(),
    helmChart: uri('helmChart').optional(),
    helmChartServiceName: z.string().min(1).max(L.artifactName, atMost(L.artifactName)).optional(),
    containerArgs: z.string().max(L.containerArgs, atMost(L.containerArgs)).optional(),
    containerEnvironment: ContainerEnvironment.optional(),
    models: artifacts('models').optional(),
    resources: artifacts('resources').optional(),
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
  })
  .superRefine((r, ctx) => {
    // Kept as given (`.loose()`), so bounded: the largest is named.
    const known = new Set(Object.keys(CreateFunctionRequest.shape));
    const unknown = Object.entries(r)
      .filter(([k]) => !known.has(k))
      .map(([k, v]) => [k, JSON.stringify(v)?.length ?? 0] as const)
      .sort((a, b) => b[1] - a[1]);
    const [largest] = unknown;
    if (largest && unknown.reduce((n, [, len]) => n + len, 0) > L.unknownFields) {
      ctx.addIssue({
        code: 'custom',
        path: [largest[0]],
        message: `'${largest[0]}' is not a field this gateway knows: such fields are kept as given, at most ${L.unknownFields} characters of JSON together`,
      });
    }
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
