/**
 * Test helper (only *.int.test.ts import it): real gateways from the e2e harness, their gRPC ports, and
 * clients generated from the project's .proto files.
 */
import { once } from 'node:events';
import { connect, constants } from 'node:http2';
import { type Client, credentials, type Metadata, type ServiceError } from '@grpc/grpc-js';
import type { RunningGateway } from '@nvcf/gateway';
import { invokeUnary, loadKserveClients, MAX_MESSAGE_BYTES, type UnaryCallOptions } from '@nvcf/kserve-grpc';
import type { Harness } from './harness.ts';

export type CallOptions = UnaryCallOptions;

/** A call's answer with the initial metadata the server sent (`nvcf-reqid`). */
export interface Answer<T> {
  response: T;
  metadata: Metadata;
}

export interface GrpcFailure {
  error: ServiceError;
  /** Initial metadata, when the server sent any before the status. */
  metadata: Metadata | undefined;
}

export interface GrpcClient {
  inference: Client;
  health: Client;
  call<T = Record<string, unknown>>(method: string, request?: object, opts?: CallOptions): Promise<Answer<T>>;
  /** Calls an RPC that must fail; resolves with its ServiceError. */
  fail(method: string, request?: object, opts?: CallOptions): Promise<GrpcFailure>;
  check(service: string): Promise<{ status: string }>;
  close(): void;
}

export interface GatewayGrpcFixture {
  gateway: RunningGateway;
  address: string;
  /** One channel for the whole file, as the seed's client keeps one. */
  client: GrpcClient;
  /** Another gateway (its own gRPC port) over the same Redis, with more settings (gateway env names). */
  startServer(env?: Record<string, string>): Promise<{ gateway: RunningGateway; client: GrpcClient }>;
  close(): void;
}

export const CLIENT_OPTIONS = {
  'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
  'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
};

/** Real gateways from the harness (their gRPC ports included) and a client per gateway. */
export async function startGatewayGrpcFixture(
  h: Harness,
  env: Record<string, string> = {},
): Promise<GatewayGrpcFixture> {
  const clients: GrpcClient[] = [];
  const startServer = async (more: Record<string, string> = {}) => {
    const gateway = await h.gateway({ ...env, ...more });
    const client = grpcClient(`127.0.0.1:${gateway.grpcPort}`);
    clients.push(client);
    return { gateway, client };
  };
  const { gateway, client } = await startServer();
  return {
    gateway,
    address: `127.0.0.1:${gateway.grpcPort}`,
    client,
    startServer,
    close() {
      for (const c of clients) c.close();
    },
  };
}

export function grpcClient(address: string): GrpcClient {
  const { GRPCInferenceService, Health } = loadKserveClients();
  const inference = new GRPCInferenceService(address, credentials.createInsecure(), CLIENT_OPTIONS);
  const health = new Health(address, credentials.createInsecure(), CLIENT_OPTIONS);

  const onInference = async <T>(method: string, request: object, opts?: CallOptions): Promise<Answer<T>> => {
    const { response, metadata } = await invokeUnary(inference, GRPCInferenceService.service, method, request, opts);
    // The tests name the answer's shape (proto-loader's plain object of that message).
    return { response: response as T, metadata };
  };

  return {
    inference,
    health,
    call: (method, request = {}, opts) => onInference(method, request, opts),
    async fail(method, request = {}, opts) {
      try {
        await onInference(method, request, opts);
      } catch (err) {
        const error = err as ServiceError & { initialMetadata?: Metadata };
        return { error, metadata: error.initialMetadata };
      }
      throw new Error(`${method} succeeded but was expected to fail`);
    },
    check: async (service) =>
      (await invokeUnary(health, Health.service, 'Check', { service })).response as { status: string },
    close() {
      inference.close();
      health.close();
    },
  };
}

/** INT32 little-endian bytes, as numpy's tobytes() gives them. */
export function int32Bytes(values: number[]): Buffer {
  return Buffer.from(Int32Array.from(values).buffer);
}

export function int32sOf(raw: Uint8Array): number[] {
  return [...new Int32Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength))];
}

/** BYTES elements from their 4-byte little-endian length prefixes. */
export function parseBytesElements(raw: Uint8Array): string[] {
  const buf = Buffer.from(raw);
  const out: string[] = [];
  for (let off = 0; off < buf.length; ) {
    const len = buf.readUInt32LE(off);
    out.push(buf.subarray(off + 4, off + 4 + len).toString());
    off += 4 + len;
  }
  return out;
}

/** How a streamed call ended, and how much of its message the server let the client send first. */
export interface StreamedCallOutcome {
  code: number;
  details: string;
  /** Bytes of the gRPC frame (prefix included) the client's stream accepted before the status arrived. */
  bytesSent: number;
}

/**
 * A unary call over raw HTTP/2 whose one message, a ModelInferRequest with a single `raw_input_contents`
 * of `contentBytes` zeros, is produced a chunk at a time and only as fast as HTTP/2 flow control lets it
 * go: what it manages to send before the status measures what the server read. Once the status is in,
 * the stream is reset, as gRPC's C-core clients (tritonclient, grpcio) do; grpc-js would upload the rest.
 */
export async function streamedModelInfer(
  address: string,
  metadata: Record<string, string>,
  contentBytes: number,
): Promise<StreamedCallOutcome> {
  const session = connect(`http://${address}`);
  session.on('error', () => {});
  try {
    const stream = session.request({
      ':method': 'POST',
      ':path': '/inference.GRPCInferenceService/ModelInfer',
      'content-type': 'application/grpc',
      te: 'trailers',
      ...metadata,
    });
    stream.on('error', () => {});
    let ended: { code: number; details: string } | undefined;
    const status = new Promise<{ code: number; details: string }>((resolve, reject) => {
      const settle = (headers: Record<string, unknown>) => {
        if (headers['grpc-status'] === undefined) return;
        ended = {
          code: Number(headers['grpc-status']),
          details: decodeURIComponent(String(headers['grpc-message'] ?? '')),
        };
        resolve(ended);
      };
      stream.on('response', settle);
      stream.on('trailers', settle);
      stream.on('close', () => reject(new Error(`stream closed without a status (rst ${stream.rstCode})`)));
    });
    status.catch(() => {});

    // raw_input_contents (field 7, length-delimited) holding contentBytes bytes.
    const field = Buffer.concat([Buffer.from([(7 << 3) | 2]), varint(contentBytes)]);
    const head = Buffer.alloc(5);
    head.writeUInt32BE(field.length + contentBytes, 1);
    const chunk = Buffer.alloc(64 * 1024);
    let bytesSent = 0;
    const send = async (bytes: Buffer) => {
      bytesSent += bytes.length;
      if (!stream.write(bytes)) await Promise.race([once(stream, 'drain'), status.catch(() => {})]);
    };
    await send(Buffer.concat([head, field]));
    for (let left = contentBytes; left > 0 && !ended && !stream.destroyed; left -= chunk.length) {
      await send(left >= chunk.length ? chunk : chunk.subarray(0, left));
    }
    if (!ended) stream.end();
    const { code, details } = await status;
    const sent = bytesSent;
    stream.close(constants.NGHTTP2_CANCEL);
    return { code, details, bytesSent: sent };
  } finally {
    session.destroy();
  }
}

function varint(n: number): Buffer {
  const out: number[] = [];
  let v = n;
  while (v >= 0x80) {
    out.push((v % 0x80) | 0x80);
    v = Math.floor(v / 0x80);
  }
  out.push(v);
  return Buffer.from(out);
}
