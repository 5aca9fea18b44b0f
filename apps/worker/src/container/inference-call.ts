import http from 'node:http';

/** The inference server's answer, its body still arriving. */
export interface InferenceResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: http.IncomingMessage;
}

/**
 * The server could not be reached, or its answer broke off. `sent`: whether the request may have reached the
 * server (connection refused: it did not, and sending it again is safe).
 */
export class InferenceConnectionError extends Error {
  readonly sent: boolean;
  constructor(message: string, sent: boolean, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'InferenceConnectionError';
    this.sent = sent;
  }
}

/**
 * One HTTP request to the inference server. Resolves at the answer's headers; `signal` aborts it (and the
 * body's reading) at any point, which the caller uses for its deadline and for a client that went away.
 */
export function callInference(
  url: URL,
  init: { method: string; headers: Record<string, string>; body?: Buffer; signal: AbortSignal },
): Promise<InferenceResponse> {
  return new Promise((resolve, reject) => {
    const headers = { ...init.headers, ...(init.body ? { 'content-length': String(init.body.length) } : {}) };
    const req = http.request(url, { method: init.method, headers, signal: init.signal, agent: false }, (res) =>
      resolve({ status: res.statusCode ?? 502, headers: res.headers, body: res }),
    );
    req.on('error', (err: NodeJS.ErrnoException) => {
      const refused = err.code === 'ECONNREFUSED';
      reject(new InferenceConnectionError(err.message, !refused, { cause: err }));
    });
    req.end(init.body);
  });
}

/** Reads a body whole (a non-streaming answer). */
export async function readBody(body: http.IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  try {
    for await (const chunk of body) chunks.push(chunk as Buffer);
  } catch (err) {
    throw new InferenceConnectionError((err as Error).message, true, { cause: err });
  }
  return Buffer.concat(chunks);
}
