import http from 'node:http';

export interface HttpResponse {
  status: number;
  /** Already parsed by node:http, so exposing them costs nothing. */
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

export interface HttpClient {
  request(method: string, path: string, body?: Buffer, headers?: Record<string, string>): Promise<HttpResponse>;
  close(): void;
}

/**
 * A keep-alive HTTP/1.1 client for one origin: up to `maxSockets` connections stay open, so a closed-loop
 * driver with that concurrency never pays a TCP handshake inside the window. `defaultHeaders` go with
 * every request (e.g. the gateway's `Authorization`); a request's own headers win.
 */
export function createHttpClient(
  baseUrl: string,
  maxSockets: number,
  defaultHeaders: Record<string, string> = {},
): HttpClient {
  const url = new URL(baseUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets, maxFreeSockets: maxSockets });
  return {
    request(method, path, body, requestHeaders = {}) {
      const headers = { ...defaultHeaders, ...requestHeaders };
      return new Promise((resolve, reject) => {
        const req = http.request(
          {
            agent,
            host: url.hostname,
            port: url.port,
            method,
            path,
            headers: body ? { ...headers, 'content-length': String(body.length) } : headers,
          },
          (res) => {
            const chunks: Buffer[] = [];
            res.on('data', (c: Buffer) => chunks.push(c));
            res.on('end', () =>
              resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
            );
            res.on('error', reject);
          },
        );
        req.on('error', reject);
        req.end(body);
      });
    },
    close: () => agent.destroy(),
  };
}
