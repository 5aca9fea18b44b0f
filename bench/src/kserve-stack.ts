import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { credentials, Metadata } from '@grpc/grpc-js';
// The client is built from the very .proto files and loader options the worker serves with.
import { callUnary, loadKserveClients, MAX_MESSAGE_BYTES } from '@nvcf/kserve-grpc';
import { decodeHttpInferResponse } from '@nvcf/protocol';
import { freePort } from '@nvcf/testing';
import { createHttpClient, type HttpClient } from './http-client.ts';
import {
  checkOutputs,
  type GrpcInferRequest,
  type GrpcInferResponse,
  grpcOutputs,
  type HttpRequestSpec,
  type KserveRequests,
} from './kserve-requests.ts';
import type { Call } from './load-driver.ts';
import { type NodeChild, spawnNode } from './node-child.ts';
import type { Payload } from './payloads.ts';

const repoRoot = resolve(import.meta.dirname, '../..');

export interface KserveStackOptions {
  /** The worker needs Redis for its queue consumer even when only its KServe surfaces are driven. */
  redisUrl: string;
  keyPrefix: string;
  modelRepository: string;
  logLevel: string;
  workerConcurrency: number;
  /** Keep-alive connections the HTTP client may open: at least the highest concurrency driven. */
  maxSockets: number;
}

/** Server-side time per successful request (Triton statistics extension), in µs. */
export interface ServerTimings {
  requests: number;
  successUs: number;
  queueUs: number;
  computeInputUs: number;
  computeInferUs: number;
  computeOutputUs: number;
}

export type StatsSnapshot = Record<
  'success' | 'queue' | 'compute_input' | 'compute_infer' | 'compute_output',
  StatCount
>;
interface StatCount {
  count: number;
  ns: number;
}

/** Response sizes found by the correctness check: the echo floor answers bodies of these sizes. */
export interface ResponseSizes {
  json: number;
  binary: number;
}

/** A worker process serving KServe V2 HTTP and gRPC on ports chosen here, and clients for both. */
export interface KserveStack {
  worker: NodeChild;
  httpPort: number;
  grpcPort: number;
  /** (a)/(b) POST the request to the worker's infer route; anything but a 200 is an error. */
  httpCall(path: string, request: HttpRequestSpec): Call;
  /** (c) ModelInfer over the one gRPC channel. */
  grpcCall(request: GrpcInferRequest): Call;
  /** Sends each form once, checks status and outputs, returns the HTTP response sizes. */
  check(payload: Payload, requests: KserveRequests): Promise<ResponseSizes>;
  /** Cumulative statistics of a model, to difference around a window. */
  stats(model: string): Promise<StatsSnapshot>;
  close(): Promise<void>;
}

export async function startKserveStack(opts: KserveStackOptions): Promise<KserveStack> {
  const [httpPort, grpcPort, metricsPort] = [await freePort(), await freePort(), await freePort()];
  const worker = spawnNode(
    'kserve-worker',
    resolve(repoRoot, 'apps/worker/src/main.ts'),
    {
      REDIS_URL: opts.redisUrl,
      NVCF_KEY_PREFIX: opts.keyPrefix,
      LOG_LEVEL: opts.logLevel,
      MODEL_REPOSITORY: opts.modelRepository,
      WORKER_ID: 'bench-kserve-worker',
      ORT_EXECUTION_PROVIDERS: 'cpu',
      ORT_INTRA_OP_THREADS: '1',
      ORT_INTER_OP_THREADS: '1',
      WORKER_CONCURRENCY: String(opts.workerConcurrency),
      WORKER_HOST: '127.0.0.1',
      KSERVE_HTTP_PORT: String(httpPort),
      KSERVE_GRPC_PORT: String(grpcPort),
      METRICS_PORT: String(metricsPort),
    },
    join(tmpdir(), `nvcf-bench-kserve-worker-${httpPort}.log`),
  );
  const http = createHttpClient(`http://127.0.0.1:${httpPort}`, opts.maxSockets);
  const { GRPCInferenceService } = loadKserveClients();
  // One client is one channel: every concurrent call is a stream on the same HTTP/2 connection.
  const grpc = new GRPCInferenceService(`127.0.0.1:${grpcPort}`, credentials.createInsecure(), {
    'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
    'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
  });
  const modelInfer = (req: GrpcInferRequest) =>
    new Promise<GrpcInferResponse>((res, rej) => {
      callUnary(grpc, GRPCInferenceService.service, 'ModelInfer', req, new Metadata(), {}, (err, out) =>
        // proto-loader decodes to plain objects with the .proto's field names (PROTO_LOADER_OPTIONS): this shape.
        err || !out ? rej(err) : res(out as GrpcInferResponse),
      );
    });
  const close = async () => {
    grpc.close();
    http.close();
    await worker.stop();
  };
  try {
    await Promise.race([waitUntilReady(http, 60_000), worker.died]);
  } catch (err) {
    await close();
    throw err;
  }

  return {
    worker,
    httpPort,
    grpcPort,
    httpCall(path, request) {
      return async () => {
        const res = await http.request('POST', path, request.body, request.headers);
        if (res.status !== 200) throw new Error(`HTTP ${res.status} ${res.body.toString().slice(0, 100)}`);
      };
    },
    grpcCall(request) {
      return async () => {
        const res = await modelInfer(request);
        if (res.raw_output_contents.length !== res.outputs.length) throw new Error('outputs not all raw');
      };
    },
    async check(payload, requests) {
      const sizes = { json: 0, binary: 0 };
      for (const form of ['json', 'binary'] as const) {
        const res = await http.request('POST', requests.path, requests[form].body, requests[form].headers);
        const what = `HTTP ${form}`;
        if (res.status !== 200) throw new Error(`${what} ${payload.model}: ${res.status} ${res.body.toString()}`);
        const headerLength = res.headers['inference-header-content-length'];
        if ((form === 'binary') !== (headerLength !== undefined)) {
          throw new Error(`${what} ${payload.model}: Inference-Header-Content-Length is '${headerLength}'`);
        }
        checkOutputs(payload, decodeHttpInferResponse(res.body, headerLength as string | undefined).outputs, what);
        sizes[form] = res.body.length;
      }
      checkOutputs(payload, grpcOutputs(await modelInfer(requests.grpc)), 'gRPC');
      return sizes;
    },
    async stats(model) {
      const res = await http.request('GET', `/v2/models/${model}/stats`);
      if (res.status !== 200) throw new Error(`stats ${model}: HTTP ${res.status}`);
      const { model_stats } = JSON.parse(res.body.toString()) as { model_stats: { inference_stats: StatsSnapshot }[] };
      if (!model_stats[0]) throw new Error(`stats ${model}: no model_stats`);
      return model_stats[0].inference_stats;
    },
    close,
  };
}

/** Per successful request between two statistics snapshots. */
export function serverTimings(before: StatsSnapshot, after: StatsSnapshot): ServerTimings {
  const requests = after.success.count - before.success.count;
  const us = (k: keyof StatsSnapshot) => (requests > 0 ? (after[k].ns - before[k].ns) / requests / 1000 : Number.NaN);
  return {
    requests,
    successUs: us('success'),
    queueUs: us('queue'),
    computeInputUs: us('compute_input'),
    computeInferUs: us('compute_infer'),
    computeOutputUs: us('compute_output'),
  };
}

/** Polls `GET /v2/health/ready` until every model in the repository is loaded. */
async function waitUntilReady(client: HttpClient, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = 'worker not answering';
  while (Date.now() < deadline) {
    try {
      const res = await client.request('GET', '/v2/health/ready');
      if (res.status === 200) return;
      last = `GET /v2/health/ready answered ${res.status}`;
    } catch (err) {
      last = (err as Error).message;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`kserve worker not ready within ${timeoutMs} ms: ${last}`);
}
