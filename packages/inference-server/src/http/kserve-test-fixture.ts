import { copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { generateExampleRepository } from '@nvcf/models';
import { decodeHttpInferResponse, type InferResponse, type Tensor } from '@nvcf/protocol';
import { pino } from 'pino';
import type { InferenceCore } from '../core/core-types.ts';
import { startInferenceCore } from '../core/create-core.ts';
import type { KserveHttpOptions } from './kserve-app.ts';
import { type RunningKserveHttpServer, startKserveHttpServer } from './kserve-server.ts';

export interface KserveFixture {
  dir: string;
  core: InferenceCore;
  server: RunningKserveHttpServer;
  url: string;
  close(): Promise<void>;
}

/**
 * A temporary repository (`simple`, `classifier` with labels, `classifier_unlabeled` without a config, every
 * `identity_<dtype>`), the real core over it and the HTTP server on a free port; `prepare` runs on the
 * repository before the core loads it. For integration tests: close it in afterAll.
 */
export async function startKserveFixture(
  opts: Partial<KserveHttpOptions> = {},
  prepare?: (dir: string) => Promise<void>,
): Promise<KserveFixture> {
  const dir = await mkdtemp(join(tmpdir(), 'kserve-http-'));
  const logger = pino({ level: 'silent' });
  let core: InferenceCore | undefined;
  try {
    await generateExampleRepository(dir, { includeIdentity: true });
    // The classifier again without config.pbtxt: auto-complete fills the config, and it has no labels.
    const unlabeled = join(dir, 'classifier_unlabeled');
    await mkdir(join(unlabeled, '1'), { recursive: true });
    await copyFile(join(dir, 'classifier', '1', 'model.onnx'), join(unlabeled, '1', 'model.onnx'));
    await prepare?.(dir);
    core = await startInferenceCore(
      { modelRepository: dir, executionProviders: ['cpu'], intraOpThreads: 1, interOpThreads: 1 },
      logger,
    );
    const server = await startKserveHttpServer(core, { host: '127.0.0.1', port: 0, logger, ...opts });
    const started = core;
    return {
      dir,
      core: started,
      server,
      url: server.url,
      async close() {
        await server.close();
        await started.close();
        await rm(dir, { recursive: true, force: true });
      },
    };
  } catch (err) {
    await core?.close();
    await rm(dir, { recursive: true, force: true });
    throw err;
  }
}

/** INPUT0 = 0..15, INPUT1 = ones: Triton's simple example request (Triton `simple` example). */
export function simpleInputs(): { input0: Int32Array; input1: Int32Array } {
  return { input0: Int32Array.from({ length: 16 }, (_, i) => i), input1: new Int32Array(16).fill(1) };
}

/** The JSON body `simple_http_infer_client.py` would send with every tensor inline. */
export function simpleJsonBody(extra: Record<string, unknown> = {}): string {
  const { input0, input1 } = simpleInputs();
  return JSON.stringify({
    inputs: [
      { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: [...input0] },
      { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: [...input1] },
    ],
    ...extra,
  });
}

const responseText = new TextDecoder();

/** POSTs to a model's infer route and decodes whatever comes back (JSON or binary); a non-200 throws. */
export async function postInfer(
  url: string,
  model: string,
  body: Uint8Array | string,
  headers: Record<string, string> = {},
  query = '',
): Promise<{ res: Response; bytes: Uint8Array; decoded: InferResponse }> {
  const res = await fetch(`${url}/v2/models/${model}/infer${query}`, {
    method: 'POST',
    body: typeof body === 'string' ? body : new Uint8Array(body),
    headers,
  });
  const bytes = new Uint8Array(await res.arrayBuffer());
  if (res.status !== 200) throw new Error(`infer ${model}: ${res.status} ${responseText.decode(bytes)}`);
  return { res, bytes, decoded: decodeHttpInferResponse(bytes, res.headers.get('inference-header-content-length')) };
}

/** The named output of a response. */
export function outputOf(res: InferResponse, name: string): Tensor {
  const t = res.outputs.find((o) => o.name === name);
  if (!t) throw new Error(`no output ${name}`);
  return t;
}

/** `simpleInputs()` as tensors of shape [1,16]. */
export function simpleTensors(): Tensor[] {
  const { input0, input1 } = simpleInputs();
  return [
    { name: 'INPUT0', datatype: 'INT32', shape: [1, 16], data: input0 },
    { name: 'INPUT1', datatype: 'INT32', shape: [1, 16], data: input1 },
  ];
}
