import { AppError } from '../../errors.ts';

export const INFERENCE_HEADER = 'Inference-Header-Content-Length';

/**
 * Parses the `Inference-Header-Content-Length` header (Triton binary data extension, raw binary request included):
 * `undefined` when absent (the whole body is JSON), `0` for a raw single-input request, otherwise
 * the byte length of the JSON part. Stricter than Triton's `atoi`: text, signs, fractions and an
 * empty value are refused rather than read as 0 (which would silently switch to raw mode).
 *
 * @param side which body it describes, for messages.
 * @throws AppError INVALID_ARGUMENT for a value that is not a plain non-negative integer, or one
 *   larger than the body.
 * @example
 * parseInferenceHeaderContentLength('120', 200); // 120
 * parseInferenceHeaderContentLength(undefined, 200); // undefined
 */
export function parseInferenceHeaderContentLength(
  value: string | null | undefined,
  bodyLength: number,
  side: 'request' | 'response' = 'request',
): number | undefined {
  if (value === undefined || value === null) return undefined;
  const text = value.trim();
  if (!/^\d+$/.test(text)) {
    throw new AppError(
      'INVALID_ARGUMENT',
      `${INFERENCE_HEADER} must be a non-negative integer (the byte length of the JSON part of the body), got '${clip(value)}'`,
    );
  }
  const length = Number(text);
  if (length > bodyLength) {
    throw new AppError(
      'INVALID_ARGUMENT',
      `${INFERENCE_HEADER} ${clip(text)} is larger than the ${side} body (${bodyLength} bytes)`,
    );
  }
  return length;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Decodes and parses the JSON part of a body. Messages name the header when one set the boundary,
 * because a wrong `Inference-Header-Content-Length` is the usual reason the JSON is cut short or has
 * binary bytes glued to it.
 *
 * @param what `infer request` or `infer response`.
 * @param headerLength the header's value, `undefined` when the whole body is JSON.
 * @throws AppError INVALID_ARGUMENT for bytes that are not UTF-8 or text that is not JSON.
 */
export function parseJsonSection(
  bytes: Uint8Array,
  what: string,
  headerLength: number | undefined,
): { text: string; json: unknown } {
  const where =
    headerLength === undefined
      ? `${what} body`
      : `${what} JSON (the first ${headerLength} bytes of the body, per ${INFERENCE_HEADER})`;
  let text: string;
  try {
    text = utf8.decode(bytes);
  } catch (err) {
    const hint = headerLength === undefined ? '' : `; does ${INFERENCE_HEADER} cut a character or include binary data?`;
    throw new AppError('INVALID_ARGUMENT', `${where} is not valid UTF-8${hint}`, { cause: err });
  }
  try {
    return { text, json: JSON.parse(text) };
  } catch (err) {
    const hint =
      headerLength === undefined ? '' : `; ${INFERENCE_HEADER} must be the exact byte length of the JSON part`;
    throw new AppError('INVALID_ARGUMENT', `${where} is not valid JSON: ${(err as Error).message}${hint}`, {
      cause: err,
    });
  }
}

/** A client may put anything in a header; messages quote only the start of it. */
function clip(text: string): string {
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}
