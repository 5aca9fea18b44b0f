import { AppError } from '@nvcf/protocol';

// Failures of the machine, not of the request: they keep their own identity (and stay retryable upstream).
const INFRASTRUCTURE = /allocat|out of memory|bad_alloc|CUDA|cuDNN|CUBLAS|TensorRT|disposed/i;
// onnxruntime-node exposes no status code on run errors, only text. These are what ORT says about the data it was
// fed: a kernel rejecting shapes or values ("Non-zero status code returned while running Sub node ... Attempting
// to broadcast ..."), and onnxruntime-common's own checks on tensors and feeds.
const BAD_INPUT =
  /Non-zero status code returned while running|Unexpected input data type|invalid dimensions|Invalid rank|Tensor's size|does not match data length|Unsupported tensor type|must be type of/i;

/**
 * Maps an error thrown while ORT ran a request. Input-caused failures become INVALID_ARGUMENT with ORT's message so
 * the client sees why and nobody retries; anything else is returned unchanged to propagate.
 */
export function classifyRunError(err: unknown): unknown {
  if (err instanceof AppError || !(err instanceof Error)) return err;
  if (INFRASTRUCTURE.test(err.message) || !BAD_INPUT.test(err.message)) return err;
  return new AppError('INVALID_ARGUMENT', err.message, { cause: err });
}
