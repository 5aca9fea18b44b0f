import { once } from 'node:events';
import { type AddressInfo, createServer, type Server, Socket } from 'node:net';

export interface CuttingProxy {
  /** `http://127.0.0.1:<port>`: point the client here instead of at the target. */
  url: string;
  /** Connections cut so far. */
  readonly cuts: number;
  close(): Promise<void>;
}

export interface CutRule {
  /** Whether a request (its first bytes: request line and headers) is one to cut. */
  matches(head: string): boolean;
  /** Cut once this many bytes of its answer have passed (0: before any). */
  afterResponseBytes: number;
  /** How many matching requests to cut (default 1); the rest pass untouched. */
  times?: number;
}

/**
 * A TCP proxy in front of an HTTP server that drops chosen connections the way a network does: the client's socket
 * and the server's are destroyed mid-request (before any answer) or mid-answer (after some of its bytes). For tests
 * of clients that must survive a dropped connection; every other byte passes through untouched.
 */
export async function startCuttingProxy(target: { host: string; port: number }, rule: CutRule): Promise<CuttingProxy> {
  let cuts = 0;
  const sockets = new Set<Socket>();
  const server: Server = createServer((client) => {
    sockets.add(client);
    const upstream = new Socket();
    upstream.connect(target.port, target.host);
    sockets.add(upstream);
    let cutting = false;
    let passed = 0;
    const cut = () => {
      cuts++;
      client.destroy();
      upstream.destroy();
    };
    client.on('data', (chunk: Buffer) => {
      if (!cutting && cuts < (rule.times ?? 1) && rule.matches(chunk.toString('latin1'))) {
        cutting = true;
        if (rule.afterResponseBytes === 0) {
          cut();
          return;
        }
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => {
      if (cutting) {
        const room = rule.afterResponseBytes - passed;
        passed += chunk.length;
        if (chunk.length >= room) {
          client.write(chunk.subarray(0, Math.max(0, room)), () => cut());
          return;
        }
      }
      client.write(chunk);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
      sockets.delete(client);
      sockets.delete(upstream);
    };
    client.on('close', end);
    upstream.on('close', end);
    client.on('error', end);
    upstream.on('error', end);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    get cuts() {
      return cuts;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
