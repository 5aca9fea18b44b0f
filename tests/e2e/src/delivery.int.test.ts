import { connect } from 'node:net';
import type { RunningGateway } from '@nvcf/gateway';
import { buildModel, OnnxElemType, writeModelVersion } from '@nvcf/models';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, createHarness, fnId, gfetch, type Harness } from './harness.ts';

/**
 * A result is handed out once — but only once the client has it: a connection that drops while the
 * answer is being written leaves the result to poll for again.
 */
let h: Harness;
let gw: RunningGateway;
const ELEMENTS = 8 * 1024 * 1024; // a 32 MiB answer: far more than loopback socket buffers hold

beforeAll(async () => {
  h = await createHarness();
  // `echo`: OUTPUT = INPUT, [1, any length] (a fixed first dimension: no batching).
  const model = buildModel({
    graphName: 'echo',
    inputs: [{ name: 'INPUT', elemType: OnnxElemType.FLOAT, shape: [1, 'n'] }],
    outputs: [{ name: 'OUTPUT', elemType: OnnxElemType.FLOAT, shape: [1, 'n'] }],
    nodes: [{ opType: 'Identity', inputs: ['INPUT'], outputs: ['OUTPUT'] }],
  });
  await writeModelVersion(h.modelRepository, 'echo', model);
  await h.worker({ MAX_DIRECT_RESULT_BYTES: String(256 * 1024 * 1024) });
  gw = await h.gateway({ MAX_REQUEST_BODY_BYTES: String(64 * 1024 * 1024) });
});
afterAll(async () => {
  await h?.close();
});

/** The binary-extension request for `echo` with ELEMENTS floats, answered as raw bytes. */
function echoRequest(): { header: string; body: Buffer } {
  const json = Buffer.from(
    JSON.stringify({
      inputs: [
        { name: 'INPUT', datatype: 'FP32', shape: [1, ELEMENTS], parameters: { binary_data_size: ELEMENTS * 4 } },
      ],
      outputs: [{ name: 'OUTPUT', parameters: { binary_data: true } }],
    }),
  );
  const data = Buffer.alloc(ELEMENTS * 4);
  for (let i = 0; i < ELEMENTS; i += 1024) data.writeFloatLE(i, i * 4);
  return { header: String(json.length), body: Buffer.concat([json, data]) };
}

/** POSTs on a raw socket and hangs up after the headers and the first 64 KiB of the answer. */
function invokeAndDropMidBody(): Promise<{ head: string; received: number }> {
  const u = new URL(gw.url);
  const { header, body } = echoRequest();
  return new Promise((resolve, reject) => {
    const socket = connect(Number(u.port), u.hostname);
    let head = '';
    let buf = Buffer.alloc(0);
    let received = 0;
    socket.on('error', reject);
    socket.on('close', () => resolve({ head, received }));
    socket.on('connect', () => {
      socket.write(
        `POST /v2/nvcf/pexec/functions/${fnId('echo')} HTTP/1.1\r\nHost: ${u.host}\r\n` +
          `Authorization: Bearer ${ADMIN_KEY}\r\nContent-Type: application/octet-stream\r\n` +
          `Inference-Header-Content-Length: ${header}\r\nNVCF-POLL-SECONDS: 120\r\nContent-Length: ${body.length}\r\n\r\n`,
      );
      socket.write(body);
    });
    socket.on('data', (chunk: Buffer) => {
      if (!head) {
        buf = Buffer.concat([buf, chunk]);
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        head = buf.subarray(0, end).toString('latin1');
        received = buf.length - end - 4;
      } else {
        received += chunk.length;
      }
      if (received >= 64 * 1024) socket.destroy();
    });
  });
}

describe('delivered once, but only once written', () => {
  it('a client that drops mid-body polls again and gets the whole result; then it is gone', async () => {
    const dropped = await invokeAndDropMidBody();
    expect(dropped.head).toMatch(/^HTTP\/1\.1 200/);
    const length = Number(/^content-length: (\d+)/im.exec(dropped.head)?.[1]);
    expect(dropped.received).toBeLessThan(length);
    const reqId = /nvcf-reqid: ([0-9a-f-]{36})/i.exec(dropped.head)?.[1] ?? '';
    expect(reqId).not.toBe('');

    // The write could not finish: the result is still there for the same request id.
    const again = await gfetch(`${gw.url}/v2/nvcf/pexec/status/${reqId}`);
    expect(again.status).toBe(200);
    const bytes = Buffer.from(await again.arrayBuffer());
    expect(bytes.length).toBe(length);
    expect(bytes.length).toBeGreaterThan(ELEMENTS * 4);
    // Now it was written whole: delivered, the id answers 404.
    let status = 200;
    for (let i = 0; i < 100 && status === 200; i++) {
      status = (await gfetch(`${gw.url}/v2/nvcf/pexec/status/${reqId}`)).status;
      if (status === 200) await new Promise((r) => setTimeout(r, 20));
    }
    expect(status).toBe(404);
  });
});
