/**
 * Test helper (only *.int.test.ts import it): a temporary example repository, the real inference core
 * over it, the gRPC server on a free port, and clients generated from the project's own .proto files.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Client, type ClientDuplexStream, credentials, Metadata, type ServiceError } from '@grpc/grpc-js';
import { invokeUnary, loadKserveClients, MAX_MESSAGE_BYTES, type UnaryCallOptions } from '@nvcf/kserve-grpc';
import { generateExampleRepository } from '@nvcf/models';
import { createLogger } from '@nvcf/service-kit';
import type { InferenceCore } from '../core/core-types.ts';
import { startInferenceCore } from '../core/create-core.ts';
import { type KserveGrpcServer, type KserveGrpcServerOptions, startKserveGrpcServer } from './kserve-grpc-server.ts';

export interface GrpcFixture {
  dir: string;
  core: InferenceCore;
  server: KserveGrpcServer;
  address: string;
  inference: Client;
  health: Client;
  /** Calls a unary RPC; rejects with the ServiceError. */
  call<T = Record<string, unknown>>(method: string, request?: object, opts?: CallOptions): Promise<T>;
  /** Calls a unary RPC that must fail; resolves with its ServiceError. */
  fail(method: string, request?: object, opts?: CallOptions): Promise<ServiceError>;
  check(service: string): Promise<{ status: string }>;
  stream(): ClientDuplexStream<object, Record<string, unknown>>;
  close(): Promise<void>;
}

export type CallOptions = UnaryCallOptions;

export const CLIENT_OPTIONS = {
  'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
  'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
};

/** `prepare` runs on the repository directory before the core loads it; `serverOpts` go to the server. */
export async function startGrpcFixture(
  prefix: string,
  prepare?: (dir: string) => Promise<void>,
  serverOpts: Partial<KserveGrpcServerOptions> = {},
): Promise<GrpcFixture> {
  const dir = await mkdtemp(join(tmpdir(), `nvcf-grpc-${prefix}-`));
  await generateExampleRepository(dir, { includeIdentity: true });
  await writeFile(join(dir, 'classifier', 'labels.txt'), Array.from({ length: 10 }, (_, i) => `digit-${i}`).join('\n'));
  await writeFile(
    join(dir, 'classifier', 'config.pbtxt'),
    'max_batch_size: 4\noutput [{ name: "PROBABILITIES" data_type: TYPE_FP32 dims: [10] label_filename: "labels.txt" }]\n',
  );
  await prepare?.(dir);
  const logger = createLogger({ name: 'test', level: 'silent' });
  const core = await startInferenceCore(
    { modelRepository: dir, executionProviders: ['cpu'], intraOpThreads: 1, interOpThreads: 1 },
    logger,
  );
  const server = await startKserveGrpcServer(core, { host: '127.0.0.1', port: 0, logger, ...serverOpts });
  const address = `127.0.0.1:${server.port}`;
  const { GRPCInferenceService, Health } = loadKserveClients();
  const inference = new GRPCInferenceService(address, credentials.createInsecure(), CLIENT_OPTIONS);
  const health = new Health(address, credentials.createInsecure(), CLIENT_OPTIONS);

  // The tests name the answer's shape (proto-loader's plain object of that message).
  const onInference = async <T>(method: string, request: object, opts?: CallOptions) =>
    (await invokeUnary(inference, GRPCInferenceService.service, method, request, opts)).response as T;
  const streamMethod = GRPCInferenceService.service.ModelStreamInfer;
  if (!streamMethod) throw new Error('the inference service has no ModelStreamInfer');

  return {
    dir,
    core,
    server,
    address,
    inference,
    health,
    call: (method, request = {}, opts) => onInference(method, request, opts),
    async fail(method, request = {}, opts) {
      try {
        await onInference(method, request, opts);
      } catch (err) {
        return err as ServiceError;
      }
      throw new Error(`${method} succeeded but was expected to fail`);
    },
    check: async (service) =>
      (await invokeUnary(health, Health.service, 'Check', { service })).response as { status: string },
    stream: () =>
      inference.makeBidiStreamRequest<object, Record<string, unknown>>(
        streamMethod.path,
        streamMethod.requestSerialize,
        streamMethod.responseDeserialize,
        new Metadata(),
      ),
    async close() {
      inference.close();
      health.close();
      await server.close();
      await core.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** INT32 little-endian bytes, as numpy's tobytes() gives them. */
/**
 * One ModelStreamInfer call: writes every request without waiting, half-closes, and collects every response until
 * the server ends the stream.
 */
export function exchangeStream<T = Record<string, unknown>>(fx: GrpcFixture, requests: object[]): Promise<T[]> {
  return new Promise((resolve, reject) => {
    const stream = fx.stream();
    const responses: T[] = [];
    stream.on('data', (r) => responses.push(r as T));
    stream.on('error', reject);
    stream.on('end', () => resolve(responses));
    for (const r of requests) stream.write(r);
    stream.end();
  });
}

export function int32Bytes(values: number[]): Buffer {
  return Buffer.from(Int32Array.from(values).buffer);
}

export function int32sOf(raw: Uint8Array): number[] {
  return [...new Int32Array(raw.buffer.slice(raw.byteOffset, raw.byteOffset + raw.byteLength))];
}

/** BYTES elements with their 4-byte little-endian length prefixes. */
export function bytesElements(elements: (string | Uint8Array)[]): Buffer {
  return Buffer.concat(
    elements.flatMap((e) => {
      const b = typeof e === 'string' ? Buffer.from(e) : Buffer.from(e);
      const len = Buffer.alloc(4);
      len.writeUInt32LE(b.length);
      return [len, b];
    }),
  );
}

export function parseBytesElements(raw: Uint8Array): Buffer[] {
  const buf = Buffer.from(raw);
  const out: Buffer[] = [];
  for (let off = 0; off < buf.length; ) {
    const len = buf.readUInt32LE(off);
    out.push(buf.subarray(off + 4, off + 4 + len));
    off += 4 + len;
  }
  return out;
}
