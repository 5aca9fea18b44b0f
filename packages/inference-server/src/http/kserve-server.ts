import type { AddressInfo } from 'node:net';
import { serve } from '@hono/node-server';
import type { InferenceCore } from '../core/core-types.ts';
import { createKserveHttpApp, type KserveHttpOptions } from './kserve-app.ts';

export interface KserveHttpServerOptions extends KserveHttpOptions {
  host: string;
  /** 0 picks a free port (tests). Triton's default is 8000. */
  port: number;
}

export interface RunningKserveHttpServer {
  /** Base URL, e.g. `http://127.0.0.1:8000`. */
  url: string;
  port: number;
  /** Stops accepting, closes idle keep-alive connections and waits for in-flight requests. Leaves the core open. */
  close(): Promise<void>;
}

/**
 * Serves `createKserveHttpApp` on `host:port`.
 *
 * @example
 * const http = await startKserveHttpServer(core, { host: '0.0.0.0', port: 8000, logger });
 * // …
 * await http.close();
 */
export async function startKserveHttpServer(
  core: InferenceCore,
  opts: KserveHttpServerOptions,
): Promise<RunningKserveHttpServer> {
  const app = createKserveHttpApp(core, opts);
  const server = await new Promise<ReturnType<typeof serve>>((resolve, reject) => {
    const s = serve({ fetch: app.fetch, port: opts.port, hostname: opts.host }, () => resolve(s));
    s.once('error', reject);
  });
  const port = (server.address() as AddressInfo).port;
  const host = opts.host === '0.0.0.0' || opts.host === '::' ? '127.0.0.1' : opts.host;
  const urlHost = host.includes(':') ? `[${host}]` : host;
  opts.logger.info({ port }, 'KServe V2 HTTP server listening');
  return {
    url: `http://${urlHost}:${port}`,
    port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((err) => (err ? reject(err) : resolve()));
        if ('closeIdleConnections' in server) server.closeIdleConnections();
      }),
  };
}
