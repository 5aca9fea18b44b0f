import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

/** What the server serves: a prom-client `Registry` (or several merged). */
export interface MetricsSource {
  metrics(): Promise<string>;
  contentType: string;
}

export interface MetricsServer {
  port: number;
  close(): Promise<void>;
}

/**
 * `GET /metrics` in Prometheus' text format on a port of its own (Triton's is 8002): it needs no API key, is never
 * exposed with the API by accident (publish the API port only), and stays out of the API's OpenAPI document.
 */
export async function startMetricsServer(
  source: MetricsSource,
  opts: { host: string; port: number },
): Promise<MetricsServer> {
  const server = createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Not Found: the metrics are at GET /metrics\n');
      return;
    }
    source.metrics().then(
      (text) => res.writeHead(200, { 'content-type': source.contentType }).end(text),
      (err: unknown) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`${String(err)}\n`),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port, opts.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
