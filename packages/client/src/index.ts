export { NvcfClient } from './client.ts';
export { errorFromResponse, NvcfConnectionError, NvcfError, type Problem, parseRetryAfter } from './errors.ts';
export { type InvokeOptions, type InvokeResult, invokeFunction, MAX_POLL_SECONDS, type Progress } from './invoke.ts';
export { type StreamEvent, type StreamOptions, streamFunction } from './stream.ts';
export { type ClientOptions, type RetryOptions, type SendOptions, Transport } from './transport.ts';
