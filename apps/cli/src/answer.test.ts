import { describe, expect, it } from 'vitest';
import { type Answer, isText, writeAnswer } from './answer.ts';

function sink(isTTY: boolean) {
  const chunks: (string | Uint8Array)[] = [];
  return {
    isTTY,
    write: (c: string | Uint8Array) => chunks.push(c),
    text: () => chunks.map((c) => (typeof c === 'string' ? c : Buffer.from(c).toString('utf8'))).join(''),
    bytes: () => Buffer.concat(chunks.map((c) => Buffer.from(c))),
  };
}
const answer = (contentType: string, body: Uint8Array | string): Answer => ({
  requestId: 'r-1',
  status: 200,
  contentType,
  body: typeof body === 'string' ? new TextEncoder().encode(body) : body,
});

describe('writeAnswer', () => {
  it('writes the body exactly to a pipe, and ends a line on a terminal', async () => {
    const pipe = sink(false);
    await writeAnswer(answer('application/json', '{"a":1}'), { json: false, stdout: pipe, stderr: sink(false) });
    expect(pipe.text()).toBe('{"a":1}');
    const tty = sink(true);
    await writeAnswer(answer('application/json', '{"a":1}'), { json: false, stdout: tty, stderr: sink(true) });
    expect(tty.text()).toBe('{"a":1}\n');
  });

  it('sends binary bodies only to a pipe: a terminal gets an error saying how to save it', async () => {
    const bytes = new Uint8Array([0, 1, 2, 255]);
    const pipe = sink(false);
    await writeAnswer(answer('application/octet-stream', bytes), { json: false, stdout: pipe, stderr: sink(false) });
    expect(new Uint8Array(pipe.bytes())).toEqual(bytes);
    const tty = sink(true);
    await expect(
      writeAnswer(answer('application/octet-stream', bytes), { json: false, stdout: tty, stderr: sink(true) }),
    ).rejects.toThrow(/4 bytes of application\/octet-stream.*--out FILE.*request r-1/);
    expect(tty.text()).toBe('');
  });

  it('--json: an envelope with the request id, the body parsed, as text, or base64', async () => {
    for (const [contentType, body, expected] of [
      ['application/json', '{"a":1}', { a: 1 }],
      ['text/plain; charset=utf-8', 'hi', 'hi'],
      ['application/octet-stream', new Uint8Array([255]), { base64: '/w==' }],
    ] as const) {
      const out = sink(false);
      await writeAnswer(answer(contentType, body), { json: true, stdout: out, stderr: sink(false) });
      expect(JSON.parse(out.text())).toEqual({ requestId: 'r-1', status: 200, contentType, body: expected });
    }
  });

  it('knows text content types', () => {
    for (const t of ['application/json', 'application/problem+json', 'text/event-stream', 'application/x-ndjson']) {
      expect(isText(t), t).toBe(true);
    }
    for (const t of ['application/octet-stream', 'application/zip', 'image/png']) expect(isText(t), t).toBe(false);
  });
});
