import { AppError } from '@nvcf/protocol';
import type { Context } from 'hono';
import type { V1InferResult } from '../triton-v1/infer-response-v1.ts';
import { v1HttpStatus } from '../triton-v1/request-status.ts';
import { encodeV1, printV1Text, v1Json } from '../triton-v1/v1-codec.ts';
import type { RequestStatusMsg } from '../triton-v1/v1-messages.ts';
import type { V1Message } from '../triton-v1/v1-protos.ts';

export type V1BodyFormat = 'text' | 'binary' | 'json';

/**
 * The body format a request asks for: `?format=binary|json|text`, else JSON when `Accept` names
 * application/json and `allowed` has it, else text (TRTIS 1.x API).
 *
 * @throws AppError INVALID_ARGUMENT for a format outside `allowed`.
 */
export function bodyFormat(c: Context, allowed: readonly V1BodyFormat[]): V1BodyFormat {
  const asked = c.req.query('format');
  if (asked === undefined || asked === '') {
    const wantsJson = allowed.includes('json') && (c.req.header('accept') ?? '').includes('application/json');
    return wantsJson ? 'json' : 'text';
  }
  const format = allowed.find((f) => f === asked);
  if (!format) throw new AppError('INVALID_ARGUMENT', `unknown format '${asked}': expected ${allowed.join(', ')}`);
  return format;
}

/** `NV-Status`: the RequestStatus in one line of text format, on every v1 response. */
export function nvStatusHeaders(status: RequestStatusMsg): Record<string, string> {
  return { 'NV-Status': printV1Text('RequestStatus', status, { singleLine: true }) };
}

/** An empty-bodied answer: 200 for SUCCESS, else 400, or `httpStatus` (health probes answer 400 with SUCCESS). */
export function nvEmpty(status: RequestStatusMsg, httpStatus: number = v1HttpStatus(status.code)): Response {
  return new Response(null, { status: httpStatus, headers: nvStatusHeaders(status) });
}

/** A v1 error: 400 (the code is in NV-Status), the message again as a plain-text body. */
export function nvError(status: RequestStatusMsg, extra: Record<string, string> = {}): Response {
  return new Response(status.msg ?? '', {
    status: v1HttpStatus(status.code),
    headers: { 'content-type': 'text/plain; charset=utf-8', ...nvStatusHeaders(status), ...extra },
  });
}

/** A message body in the asked format: multi-line text, wire-format binary, or proto3 JSON. */
export function nvMessage(status: RequestStatusMsg, type: V1Message, message: object, format: V1BodyFormat): Response {
  const headers = nvStatusHeaders(status);
  if (format === 'binary') {
    return new Response(new Uint8Array(encodeV1(type, message)), {
      headers: { ...headers, 'content-type': 'application/octet-stream' },
    });
  }
  if (format === 'json') {
    return new Response(JSON.stringify(v1Json(type, message)), {
      headers: { ...headers, 'content-type': 'application/json' },
    });
  }
  return new Response(printV1Text(type, message), {
    headers: { ...headers, 'content-type': 'text/plain; charset=utf-8' },
  });
}

const utf8 = new TextEncoder();

/**
 * An infer answer (TRTIS 1.x API): the raw outputs in header order, then the whole InferResponseHeader (text,
 * or binary with `?format=binary`); `NV-InferResponse` carries the header on one line. That line leaves out
 * `data_type`, a later v1 field that clients built before it would fail to text-parse; the trailing header
 * keeps it.
 */
export function nvInferResponse(status: RequestStatusMsg, result: V1InferResult, format: 'text' | 'binary'): Response {
  const trailer =
    format === 'binary'
      ? encodeV1('InferResponseHeader', result.header)
      : utf8.encode(printV1Text('InferResponseHeader', result.header));
  const parts = [...result.rawOutputs, trailer];
  const body = new Uint8Array(parts.reduce((n, p) => n + p.byteLength, 0));
  let offset = 0;
  for (const part of parts) {
    body.set(part, offset);
    offset += part.byteLength;
  }
  const headerLine = {
    ...result.header,
    output: result.header.output.map(({ data_type: _, ...rest }) => rest),
  };
  return new Response(body, {
    headers: {
      'content-type': 'application/octet-stream',
      'NV-InferResponse': printV1Text('InferResponseHeader', headerLine, { singleLine: true }),
      ...nvStatusHeaders(status),
    },
  });
}
