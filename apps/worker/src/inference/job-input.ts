/**
 * A job's input once at hand: parsed JSON, the body's bytes (base64 decoded, or a stored input read back),
 * or a KServe request in its two parts (the JSON part as data, the tensors' bytes read back). The queue
 * carries its own forms (job-contract.ts); the worker decodes them once, here.
 */
export type JobInput =
  | { kind: 'json'; value: unknown }
  | { kind: 'bytes'; bytes: Buffer }
  | { kind: 'kserve'; header: unknown; binary: Buffer };
