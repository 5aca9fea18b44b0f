import { type Server, ServerCredentials } from '@grpc/grpc-js';

export interface ServingGrpc {
  port: number;
  /** Refuses new calls, lets running ones finish for up to the grace period, then cuts them. */
  close(): Promise<void>;
}

/**
 * Binds a gRPC server (plaintext) and gives it a bounded graceful shutdown. `port` 0 picks a free one;
 * an IPv6 host is bracketed for grpc-js.
 */
export async function serveGrpc(
  server: Server,
  opts: { host: string; port: number; shutdownGraceMs?: number },
): Promise<ServingGrpc> {
  const host = opts.host.includes(':') && !opts.host.startsWith('[') ? `[${opts.host}]` : opts.host;
  const port = await new Promise<number>((resolve, reject) => {
    server.bindAsync(`${host}:${opts.port}`, ServerCredentials.createInsecure(), (err, bound) =>
      err ? reject(err) : resolve(bound),
    );
  });
  let closing: Promise<void> | undefined;
  return {
    port,
    close() {
      closing ??= new Promise<void>((resolve) => {
        const timer = setTimeout(() => server.forceShutdown(), opts.shutdownGraceMs ?? 5000);
        server.tryShutdown(() => {
          clearTimeout(timer);
          resolve();
        });
      });
      return closing;
    },
  };
}
