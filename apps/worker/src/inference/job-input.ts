/**
 * A job's input once at hand: parsed JSON, or the body's bytes (base64 decoded, or a stored input read
 * back). The queue carries its own forms (job-contract.ts); the worker decodes them once, here.
 */
export type JobInput = { kind: 'json'; value: unknown } | { kind: 'bytes'; bytes: Buffer };
