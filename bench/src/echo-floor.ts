import { resolve } from 'node:path';
import { freePort } from '@nvcf/testing';
import { createHttpClient, type HttpClient } from './http-client.ts';
import type { HttpRequestSpec } from './kserve-requests.ts';
import type { Call } from './load-driver.ts';
import { type NodeChild, spawnNode } from './node-child.ts';

export interface EchoFloor {
  server: NodeChild;
  /** (d) POST `request` to the echo app, which answers `responseBytes` bytes: HTTP alone, no inference. */
  call(request: HttpRequestSpec, responseBytes: number): Call;
  close(): Promise<void>;
}

/** The echo child (echo-server.ts) and a keep-alive client like the one driving the worker. */
export async function startEchoFloor(opts: { maxSockets: number }): Promise<EchoFloor> {
  const port = await freePort();
  const server = spawnNode('echo-server', resolve(import.meta.dirname, 'echo-server.ts'), {
    BENCH_ECHO_PORT: String(port),
  });
  const client: HttpClient = createHttpClient(`http://127.0.0.1:${port}`, opts.maxSockets);
  const close = async () => {
    client.close();
    await server.stop();
  };
  try {
    await server.waitForLine(/^ready$/, 30_000);
  } catch (err) {
    await close();
    throw err;
  }
  return {
    server,
    call(request, responseBytes) {
      const path = `/echo/${responseBytes}`;
      return async () => {
        const res = await client.request('POST', path, request.body, request.headers);
        if (res.status !== 200) throw new Error(`HTTP ${res.status}`);
        if (res.body.length !== responseBytes) throw new Error(`echo answered ${res.body.length} bytes`);
      };
    },
    close,
  };
}
