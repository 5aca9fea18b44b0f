import { AssetsApi } from './assets.ts';
import { cancelPath } from './cancel.ts';
import { ClusterGroupsApi } from './cluster-groups.ts';
import { DeploymentsApi, FunctionsApi, QueuesApi, type RequestOptions } from './control-plane.ts';
import { type InvokeOptions, type InvokeResult, invokeFunction } from './invoke.ts';
import { KeysApi } from './keys.ts';
import {
  decodeKserveResponse,
  type InferOptions,
  type InferResult,
  kserveRequest,
  type TensorInput,
} from './kserve.ts';
import { type StreamEvent, type StreamOptions, streamFunction } from './stream.ts';
import { type ClientOptions, Transport } from './transport.ts';

/**
 * The NVCF API from TypeScript, with NVCF's rules built in (long polls, 202 → status polling, 302 result zips,
 * problem+json errors, Retry-After, Idempotency-Key). Runs in Node 24 and browsers (it needs only `fetch`).
 *
 * @example
 * const nvcf = new NvcfClient({ baseUrl: 'http://localhost:8080', apiKey: process.env.NVCF_API_KEY });
 * const answer = await nvcf.invoke(functionId, { inputs: [...] });
 * console.log(answer.json());
 */
export class NvcfClient {
  readonly transport: Transport;
  /** Function management: register functions and versions, read them, change metadata, delete versions. */
  readonly functions: FunctionsApi;
  /** Function deployment: deploy, change, read and undeploy a version. */
  readonly deployments: DeploymentsApi;
  /** Queue depth per version and a request's position. */
  readonly queues: QueuesApi;
  /** The worker pools that can run functions (`list_cluster_groups`). */
  readonly clusterGroups: ClusterGroupsApi;
  /** Assets: create, upload (signed URL), list, read, delete. */
  readonly assets: AssetsApi;
  /** API keys: create (the secret shown once), list, revoke; needs the `manage_keys` scope. */
  readonly keys: KeysApi;

  constructor(opts: ClientOptions) {
    this.transport = new Transport(opts);
    this.functions = new FunctionsApi(this.transport);
    this.deployments = new DeploymentsApi(this.transport);
    this.queues = new QueuesApi(this.transport);
    this.clusterGroups = new ClusterGroupsApi(this.transport);
    this.assets = new AssetsApi(this.transport);
    this.keys = new KeysApi(this.transport);
  }

  /**
   * Cancels a request this credential made (`DELETE /v2/nvcf/pexec/status/{reqId}`): a queued one leaves its queue,
   * a running decoupled model stops, and every reader of it gets a 499 from then on. Throws NvcfError 409 when it
   * already had its answer, 404 when unknown. (Aborting `invoke`'s or `stream`'s signal does this by itself.)
   */
  async cancel(requestId: string, opts: RequestOptions = {}): Promise<void> {
    const res = await this.transport.send('DELETE', cancelPath(requestId), {
      idempotent: true,
      ...(opts.signal ? { signal: opts.signal } : {}),
    });
    await res.body?.cancel();
  }

  /** Invokes a function and waits for its answer (see invokeFunction). */
  invoke(functionId: string, body: unknown, opts?: InvokeOptions): Promise<InvokeResult> {
    return invokeFunction(this.transport, functionId, body, opts);
  }

  /**
   * Runs a KServe V2 model function on typed arrays: builds the request (JSON, or the binary extension with
   * `binary: true`; see kserveRequest), invokes it, and decodes the answer (see decodeKserveResponse).
   *
   * @example
   * const out = await nvcf.infer(functionId, [{ name: 'INPUT0', shape: [1, 16], data: new Int32Array(16) }], { binary: true });
   * out.outputs.get('OUTPUT0')?.data; // Int32Array
   */
  async infer(functionId: string, inputs: TensorInput[], opts: InferOptions = {}): Promise<InferResult> {
    const req = kserveRequest(inputs, opts);
    const answer = await this.invoke(functionId, req.body, {
      ...opts,
      contentType: req.contentType,
      headers: { ...opts.headers, ...req.headers },
    });
    const headerLength = answer.headers['inference-header-content-length'];
    return { ...decodeKserveResponse(answer.body, headerLength), requestId: answer.requestId };
  }

  /** Invokes a function and iterates over its server-sent events (see streamFunction). */
  stream(functionId: string, body: unknown, opts?: StreamOptions): AsyncGenerator<StreamEvent, void, undefined> {
    return streamFunction(this.transport, functionId, body, opts);
  }
}
