import { z } from 'zod';

/**
 * The payload of one invocation job: what the gateway promises the worker. Parsed once by the consumer.
 * Small JSON bodies travel parsed (BullMQ serialises the job once), other small bodies as base64, large
 * ones beside the job (`stored`).
 */
export const InvocationInput = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('json'), contentType: z.string(), value: z.unknown() }),
  z.object({ kind: z.literal('bytes'), contentType: z.string(), base64: z.string() }),
  /**
   * A large body, kept in the request store beside the job (`RequestStore.loadInput`) rather than in
   * it: BullMQ's job hash stays small, and the bytes are stored once, raw, not as JSON or base64.
   * `format` says how the worker reads them: parsed JSON, or bytes.
   */
  z.object({ kind: z.literal('stored'), contentType: z.string(), format: z.enum(['json', 'bytes']) }),
]);
export type InvocationInput = z.infer<typeof InvocationInput>;

export const InvocationJob = z.object({
  requestId: z.uuid(),
  functionId: z.uuid(),
  versionId: z.uuid(),
  input: InvocationInput,
  /** Client headers the function may read (already stripped of credentials and hop-by-hop names). */
  headers: z.record(z.string(), z.string()).default({}),
  /**
   * Assets the caller referenced (`NVCF-INPUT-ASSET-REFERENCES`), already resolved and authorized by the
   * gateway: the ids only; the bytes stay in the object store until the worker reads them.
   */
  assetIds: z.array(z.string().min(1)).optional(),
  enqueuedAt: z.number().int(),
  /**
   * The accepting gateway, waiting for the result: results up to `maxInlineBytes` are published to it
   * whole, saving it a read of the stored result.
   */
  reply: z.object({ gatewayId: z.uuid(), maxInlineBytes: z.number().int().min(0) }).optional(),
  /** The client asked for `text/event-stream`: results are also appended to the request's event stream. */
  stream: z.boolean().optional(),
  /** The caller cannot follow a 302 (gRPC): the result stays direct whatever its size. */
  directOnly: z.boolean().optional(),
});
export type InvocationJob = z.infer<typeof InvocationJob>;

/** BullMQ job name: one kind of job today; the name shows in Redis and in BullMQ tooling. */
export const INVOCATION_JOB_NAME = 'invoke';
