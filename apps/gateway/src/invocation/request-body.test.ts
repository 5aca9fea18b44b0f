import { AppError } from '@nvcf/protocol';
import { describe, expect, it } from 'vitest';
import { parseInvocationBody } from './request-body.ts';

describe('parseInvocationBody', () => {
  it('parses JSON, declared or not', () => {
    expect(parseInvocationBody(Buffer.from('{"a":1}'), 'application/json')).toEqual({
      kind: 'json',
      contentType: 'application/json',
      value: { a: 1 },
    });
    expect(parseInvocationBody(Buffer.from('[1]'), undefined)).toMatchObject({ kind: 'json', value: [1] });
    expect(parseInvocationBody(Buffer.from('{}'), 'application/vnd.x+json; charset=utf-8').kind).toBe('json');
  });

  it('passes other content types through as bytes: the body itself, not a copy or base64 in the input', () => {
    const input = parseInvocationBody(Buffer.from([0, 255, 1]), 'application/octet-stream');
    expect(input).toEqual({ kind: 'entry', contentType: 'application/octet-stream' });
  });

  it('keeps a binary-extension body as bytes whatever its declared type', () => {
    const input = parseInvocationBody(Buffer.from('{"inputs":[]}\u0000\u0001'), 'application/json', {
      binaryExtension: true,
    });
    expect(input.kind).toBe('entry');
    expect(parseInvocationBody(Buffer.from([1]), undefined, { binaryExtension: true })).toMatchObject({
      kind: 'entry',
      contentType: 'application/octet-stream',
    });
  });

  it('refuses broken or empty JSON with INVALID_ARGUMENT', () => {
    for (const body of ['{', '', 'nul']) {
      try {
        parseInvocationBody(Buffer.from(body), 'application/json');
        expect.unreachable();
      } catch (err) {
        expect(err).toBeInstanceOf(AppError);
        expect((err as AppError).httpStatus).toBe(400);
      }
    }
  });
});
