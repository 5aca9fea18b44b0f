import { type Client, credentials, Metadata } from '@grpc/grpc-js';
import { callUnary, loadKserveClients, MAX_MESSAGE_BYTES } from '@nvcf/kserve-grpc';
import { modelFunctionId } from '@nvcf/worker';
import { checkOutputs, type GrpcInferResponse, grpcOutputs, kserveRequests } from './kserve-requests.ts';
import type { Call } from './load-driver.ts';
import type { Payload } from './payloads.ts';

export interface GatewayGrpcClientOptions {
  /** host:port of the gateway's gRPC port. */
  address: string;
  /** Sent as `authorization: Bearer <key>` with every call. */
  apiKey: string;
  /** Each call's deadline, as pexec's NVCF-POLL-SECONDS: a call not answered within it is an error. */
  deadlineSeconds: number;
}

/**
 * ModelInfer through the gateway's gRPC port (NVCF API: gRPC invocation), as the seed's client calls it: a
 * GRPCInferenceService stub on one channel, every call with metadata `function-id` and `authorization`,
 * inputs in `raw_input_contents`. One channel per concurrency level, opened once and reused for every call
 * at that level; each channel keeps its own HTTP/2 connection (a local subchannel pool) so one level's
 * connection never carries another's calls.
 */
export interface GatewayGrpcClient {
  /** Opens (and connects) the channel of each concurrency level up front, so no window pays for it. */
  open(concurrencies: number[], timeoutMs: number): Promise<void>;
  /** One ModelInfer of the payload's function on the channel of `concurrency`; any gRPC error throws. */
  call(payload: Payload, concurrency: number): Call;
  /**
   * Sends the payload once on every open channel and checks the outputs' values. Resolves to the sizes of the
   * ModelInfer request and answer as protobuf: the bodies of this path, which cross Redis once whatever the product
   * does (redis-cost.ts).
   */
  check(payload: Payload): Promise<{ requestBytes: number; answerBytes: number }>;
  close(): void;
}

export function createGatewayGrpcClient(opts: GatewayGrpcClientOptions): GatewayGrpcClient {
  const { GRPCInferenceService } = loadKserveClients();
  const channels = new Map<number, Client>();
  const channel = (concurrency: number): Client => {
    let client = channels.get(concurrency);
    if (!client) {
      client = new GRPCInferenceService(opts.address, credentials.createInsecure(), {
        'grpc.max_receive_message_length': MAX_MESSAGE_BYTES,
        'grpc.max_send_message_length': MAX_MESSAGE_BYTES,
        'grpc.use_local_subchannel_pool': 1,
      });
      channels.set(concurrency, client);
    }
    return client;
  };
  // Built once per payload: the request message and the metadata (cloned per call: a call may add to it).
  const prepared = new Map<string, { request: object; metadata: Metadata }>();
  const prepare = (payload: Payload) => {
    let p = prepared.get(payload.model);
    if (!p) {
      const metadata = new Metadata();
      metadata.set('function-id', modelFunctionId(payload.model));
      metadata.set('authorization', `Bearer ${opts.apiKey}`);
      p = { request: kserveRequests(payload).grpc, metadata };
      prepared.set(payload.model, p);
    }
    return p;
  };
  // The method as the .proto defines it: its (de)serializers give the bodies' sizes in `check`.
  const method = GRPCInferenceService.service.ModelInfer;
  if (!method) throw new Error('the inference service has no ModelInfer');
  const modelInfer = (client: Client, payload: Payload) => {
    const { request, metadata } = prepare(payload);
    const deadline = Date.now() + opts.deadlineSeconds * 1000;
    return new Promise<GrpcInferResponse>((resolve, reject) => {
      callUnary(
        client,
        GRPCInferenceService.service,
        'ModelInfer',
        request,
        metadata.clone(),
        { deadline },
        (err, res) =>
          // proto-loader decodes to plain objects with the .proto's field names (PROTO_LOADER_OPTIONS): this shape.
          err || !res ? reject(err) : resolve(res as GrpcInferResponse),
      );
    });
  };

  return {
    async open(concurrencies, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      await Promise.all(
        concurrencies.map(
          (c) =>
            new Promise<void>((resolve, reject) => {
              channel(c).waitForReady(deadline, (err) =>
                err ? reject(new Error(`gateway gRPC ${opts.address}: ${err.message}`)) : resolve(),
              );
            }),
        ),
      );
    },
    call(payload, concurrency) {
      const client = channel(concurrency);
      prepare(payload);
      return async () => {
        const res = await modelInfer(client, payload);
        if (res.raw_output_contents.length !== res.outputs.length) throw new Error('outputs not all raw');
      };
    },
    async check(payload) {
      let answerBytes = 0;
      for (const [c, client] of channels) {
        const answer = await modelInfer(client, payload);
        checkOutputs(payload, grpcOutputs(answer), `gateway gRPC (c=${c} channel)`);
        answerBytes = method.responseSerialize(answer).byteLength;
      }
      return { requestBytes: method.requestSerialize(prepare(payload).request).byteLength, answerBytes };
    },
    close() {
      for (const client of channels.values()) client.close();
      channels.clear();
    },
  };
}
