import { z } from 'zod';

/**
 * The payload of one invocation job: what the gateway promises the worker. Parsed once by the consumer.
 * Small JSON bodies travel parsed (the job is serialised once), other small bodies raw in the queue entry beside
 * the job (`entry`), large ones beside the job in the request store (`stored`).
 */
/** A JSON body's content type when it says nothing more: a queue entry leaves it out (invocation-producer.ts). */
export const JSON_CONTENT_TYPE = 'application/json';

export const InvocationInput = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('json'), contentType: z.string().default(JSON_CONTENT_TYPE), value: z.unknown() }),
  /** A body as base64 inside the job: what gateways of earlier releases queued (`entry` since), still read. */
  z.object({ kind: z.literal('bytes'), contentType: z.string(), base64: z.string() }),
  /**
   * A body's raw bytes carried in the queue entry itself (`EnqueueOptions.entryBytes`, field b) beside the job's
   * JSON: no base64, no second read, no key to drop (the worker gets them with the job, `JobContext.entryBytes`).
   */
  z.object({ kind: z.literal('entry'), contentType: z.string() }),
  /**
   * A large body, kept in the request store beside the job (read by the worker before it runs the job, `RequestStore.readInput`) rather than in
   * it: the queue's entries stay small, and the bytes are stored once, raw, not as JSON or base64.
   * `format` says how the worker reads them: parsed JSON, or bytes.
   */
  z.object({ kind: z.literal('stored'), contentType: z.string(), format: z.enum(['json', 'bytes']) }),
  /**
   * A KServe V2 infer request decoded where it arrived (the gateway's gRPC port): its JSON part as data,
   * every input binary (`parameters.binary_data_size`), and the tensors' bytes — `binaryBytes` of them, in
   * input order — raw, never base64: carried in the queue entry itself when `inEntry` (small requests: the
   * worker gets them with the job, `JobContext.entryBytes`), else kept beside the job in the request store.
   * No HTTP framing: the worker hands both parts to its core as they are.
   */
  z.object({
    kind: z.literal('kserve'),
    header: z.record(z.string(), z.unknown()),
    binaryBytes: z.number().int().min(0),
    inEntry: z.literal(true).optional(),
  }),
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
  /**
   * The accepting gateway, waiting for the result: results up to `maxInlineBytes` are published to it
   * whole, saving it a read of the stored result.
   */
  reply: z
    .object({ gatewayId: z.string().regex(/^[A-Za-z0-9_-]{1,64}$/), maxInlineBytes: z.number().int().min(0) })
    .optional(),
  /** The client asked for `text/event-stream`: results are also appended to the request's event stream. */
  stream: z.boolean().optional(),
  /** The caller cannot follow a 302 (gRPC): the result stays direct whatever its size. */
  directOnly: z.boolean().optional(),
  /**
   * How a success is rendered. Absent: as the HTTP response the function gives (KServe JSON or binary
   * extension). `kserve-grpc`: a serialized `inference.ModelInferResponse` (content type
   * `MODEL_INFER_RESPONSE_TYPE`) that the gateway's gRPC port sends as it is. A failure is problem+json
   * with its error code beside it (`InvocationResult.code`) either way.
   */
  respond: z.enum(['kserve-grpc']).optional(),
  /**
   * The gateway's span, as W3C Trace Context fields (https://www.w3.org/TR/trace-context/): the worker's spans
   * join the invocation's trace. Absent unless tracing is on (`OTEL_EXPORTER_OTLP_ENDPOINT`), so the queue's
   * bytes per job do not grow otherwise.
   */
  trace: z.object({ traceparent: z.string().max(128), tracestate: z.string().max(512).optional() }).optional(),
});
export type InvocationJob = z.infer<typeof InvocationJob>;

/** Whether the job's input (or part of it) is kept beside it in the request store, to drop once it is answered. */
export function inputKeptBeside(input: InvocationInput): boolean {
  return input.kind === 'stored' || (input.kind === 'kserve' && input.binaryBytes > 0 && !input.inEntry);
}

/** The content type of a result rendered `kserve-grpc`: protobuf bytes of one ModelInferResponse. */
export const MODEL_INFER_RESPONSE_TYPE = 'application/x-protobuf; messageType="inference.ModelInferResponse"';
