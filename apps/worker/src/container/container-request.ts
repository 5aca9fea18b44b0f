import type { ContainerSpec, FunctionVersion } from '@nvcf/control-store';
import {
  failureResult,
  type InvocationJob,
  type InvocationResult,
  inputKeptBeside,
  type JobContext,
  type RequestStore,
} from '@nvcf/queue';
import type { Logger } from '@nvcf/service-kit';
import type { ObjectStore } from '@nvcf/storage';
import type { ServerInstance } from './container-servers.ts';
import { connectionErrorResult } from './error-mapping.ts';
import { watchProgressFile } from './progress-file.ts';
import { openRequestDirs, type RequestDirs } from './request-dirs.ts';
import { serverUrl } from './server-url.ts';
import type { SharedTicker } from './shared-ticker.ts';

/** What preparing a request needs (a part of `ContainerProcessorDeps`). */
export interface RequestDeps {
  fv: FunctionVersion & { container: ContainerSpec };
  server: () => ServerInstance | undefined;
  store: RequestStore;
  objects: ObjectStore;
  logger: Logger;
  workDir: string;
  ticker: SharedTicker;
}

/** A request ready to go to its server: its body, the server and URL, its directories and progress watch. */
export interface ContainerRequest {
  job: InvocationJob;
  log: Logger;
  contentType: string;
  body: Buffer;
  server: ServerInstance;
  url: URL;
  dirs: RequestDirs;
  progress: { stop(): Promise<void> };
}

/** A request ready to send, or the job's answer without sending one (undefined: it was settled meanwhile). */
export type Prepared =
  | { ready: true; request: ContainerRequest }
  | { ready: false; result: InvocationResult | undefined };

const answered = (result: InvocationResult | undefined): Prepared => ({ ready: false, result });

/**
 * Prepares a job's request: still unsettled, its body, a healthy server with the version's URL on it, its
 * directories (assets downloaded) and its progress file watched. Throws when another attempt is safe.
 */
export async function prepareRequest(deps: RequestDeps, queued: InvocationJob, ctx: JobContext): Promise<Prepared> {
  const { fv } = deps;
  // The delivery is the job's claim (see model/job-input.ts). A server may act on what it is sent, so a
  // request settled meanwhile (cancelled after its job was delivered) is not forwarded: one read, in the same
  // round trip as that of an input kept beside the job.
  const [settled, kept] = await Promise.all([
    deps.store.settled(queued.requestId),
    inputKeptBeside(queued.input) ? deps.store.readInput(queued.requestId) : undefined,
  ]);
  if (settled) return answered(undefined);
  const log = deps.logger.child({ requestId: queued.requestId, functionId: fv.id, versionId: fv.versionId });
  if (queued.input.kind === 'kserve') {
    return answered(
      failureResult(
        'UNIMPLEMENTED',
        'a container function takes an HTTP body; the KServe gRPC port serves model functions',
        { source: 'nvcf-worker-service', requestId: queued.requestId },
      ),
    );
  }
  const contentType = queued.input.contentType;
  const body = bodyOf(queued, kept, ctx.entryBytes);
  if (!body) {
    // Only an expired request loses its input (both share the TTL).
    return answered(
      failureResult('INTERNAL', 'Internal error: the invocation input expired before a worker took it', {
        source: 'nvcf-worker-service',
        requestId: queued.requestId,
      }),
    );
  }
  const reached = reachServer(deps, queued, ctx, log);
  if (!('url' in reached)) return reached;
  return await openDirs(deps, { job: queued, log, contentType, body, ...reached });
}

/** The version's server, healthy, and the URL the request goes to on it. */
function reachServer(
  deps: RequestDeps,
  queued: InvocationJob,
  ctx: JobContext,
  log: Logger,
): { server: ServerInstance; url: URL } | Prepared {
  const server = deps.server();
  if (!server?.healthy) {
    // Nothing was sent: another attempt (here once the server is back, or on another worker) is safe.
    if (ctx.attempt < ctx.maxAttempts) throw new Error('the inference server is not up');
    return answered(connectionErrorResult(queued.requestId));
  }
  // The server's own origin, whatever the stored version says (container-servers.ts never serves such a version).
  const url = serverUrl(server.base, deps.fv.inferenceUrl);
  if (!url) {
    log.error(
      { inferenceUrl: deps.fv.inferenceUrl },
      "refusing an inferenceUrl that is not a path of the function's server",
    );
    return answered(
      failureResult('INVALID_ARGUMENT', "the function's inferenceUrl is not a path of its server", {
        source: 'nvcf-worker-service',
        requestId: queued.requestId,
      }),
    );
  }
  return { server, url };
}

/** The request's directories, with its assets, and its progress file watched. */
async function openDirs(deps: RequestDeps, request: Omit<ContainerRequest, 'dirs' | 'progress'>): Promise<Prepared> {
  const { job, log } = request;
  let dirs: RequestDirs;
  try {
    dirs = await openRequestDirs(deps.workDir, job.requestId, job.assetIds ?? [], deps.objects);
  } catch (err) {
    log.error({ err }, 'downloading assets failed');
    return answered(
      failureResult('INTERNAL', 'Internal error while downloading assets', {
        source: 'nvcf-worker-service',
        requestId: job.requestId,
      }),
    );
  }
  const progress = watchProgressFile(
    dirs.largeOutputDir,
    job.requestId,
    (percent, partial) => deps.store.reportProgress(job.requestId, percent, partial),
    deps.ticker,
  );
  return { ready: true, request: { ...request, dirs, progress } };
}

/**
 * The client's body as bytes: from the job, its queue entry (`entryBytes`) or the request store (`kept`); undefined
 * for a KServe gRPC call (no HTTP body to forward).
 */
function bodyOf(job: InvocationJob, kept: Buffer | undefined, entryBytes: Buffer | undefined): Buffer | undefined {
  const { input } = job;
  if (input.kind === 'json') return Buffer.from(JSON.stringify(input.value));
  if (input.kind === 'bytes') return Buffer.from(input.base64, 'base64');
  if (input.kind === 'entry') return entryBytes;
  if (input.kind === 'stored') return kept;
  return undefined;
}
