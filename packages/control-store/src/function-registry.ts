import { DATATYPES, type DeploymentLimits } from '@nvcf/protocol';
import type { Keys, RedisClient } from '@nvcf/queue';
import { z } from 'zod';
import { createWorkerPresence, type LiveWorker, type WorkerMachine, type WorkerPresence } from './worker-presence.ts';

export { type LiveWorker, WorkerMachine } from './worker-presence.ts';

const TensorSpecSchema = z.object({ name: z.string(), datatype: z.enum(DATATYPES), shape: z.array(z.number().int()) });

/**
 * What a container function's inference server is (NVCF API reference: CreateFunctionRequest's container
 * fields), as the worker needs it: the command a process-mode worker runs, its environment, and where its
 * health check answers. The server's address is the worker's to know (a sidecar's, or a process it started).
 */
export const ContainerSpec = z.object({
  image: z.string(),
  /** The command (process mode) or the container's arguments, as given. */
  args: z.string().optional(),
  environment: z.array(z.object({ key: z.string(), value: z.string() })).default([]),
  /** The port the server listens on (a sidecar's; a process is given a free one). */
  inferencePort: z.number().int().min(1).max(65535).optional(),
  health: z.object({
    uri: z.string(),
    /** A port of its own (a sidecar's); absent: the inference port. */
    port: z.number().int().min(1).max(65535).optional(),
    timeoutMs: z.number().int().min(1),
    expectedStatusCode: z.number().int().min(100).max(599),
  }),
});
export type ContainerSpec = z.infer<typeof ContainerSpec>;

/** The ONNX model a model function serves. */
export const FunctionModelSpec = z.object({
  name: z.string(),
  version: z.string(),
  platform: z.string(),
  inputs: z.array(TensorSpecSchema),
  outputs: z.array(TensorSpecSchema),
  /**
   * The model's config has sequence batching: a sequence's requests are routed to one worker (the one holding
   * its state), through that worker's own queue for the version.
   */
  sequence: z.boolean().optional(),
});
export type FunctionModelSpec = z.infer<typeof FunctionModelSpec>;

/**
 * One function version as stored in Redis: the NVCF FunctionDto fields we own plus what serves it, either an
 * ONNX `model` the worker runs itself or a `container`, an HTTP inference server the worker forwards to.
 */
export const FunctionVersion = z
  .object({
    id: z.uuid(),
    versionId: z.uuid(),
    name: z.string(),
    ncaId: z.string(),
    createdAt: z.string(),
    description: z.string().default(''),
    functionType: z.enum(['DEFAULT', 'STREAMING', 'LLM']).default('DEFAULT'),
    apiBodyFormat: z.enum(['CUSTOM', 'PREDICT_V2']).default('PREDICT_V2'),
    inferenceUrl: z.string(),
    models: z.array(z.object({ name: z.string(), version: z.string(), uri: z.string() })).default([]),
    tags: z.array(z.string()).default([]),
    /** The rest of the create request's DTO fields, kept and returned as given (container fields etc.). */
    spec: z.record(z.string(), z.unknown()).default({}),
    deployment: z
      .object({
        minInstances: z.number().int().min(0),
        maxInstances: z.number().int().min(1),
        maxRequestConcurrency: z.number().int().min(1),
        /** The deployment request's specifications, as given. */
        specifications: z.array(z.record(z.string(), z.unknown())).default([]),
        /** When the version was deployed (ISO-8601; a PUT keeps it). Absent on deployments stored before it was kept. */
        createdAt: z.string().optional(),
      })
      .nullable(),
    model: FunctionModelSpec.optional(),
    container: ContainerSpec.optional(),
  })
  // One of the two serves it, never both and never neither: every reader may take whichever is present as the whole.
  .refine((fv) => (fv.model === undefined) !== (fv.container === undefined), {
    message: 'a function version is served by a model or by a container, exactly one',
  });
export type FunctionVersion = z.infer<typeof FunctionVersion>;

export type { DeploymentLimits };

/** How many functions one account and versions one function may have (0: unlimited). */
export interface FunctionQuota {
  functionsPerAccount: number;
  versionsPerFunction: number;
}

/**
 * `created`; `gone`: the function a new version was for has no version any more; `functions`: its account holds
 * `functionsPerAccount` functions already; `versions`: the function holds `versionsPerFunction` versions already.
 */
export type CreateVersionOutcome = 'created' | 'gone' | 'functions' | 'versions';

export interface FunctionRegistry {
  /** Creates or updates a version; `createdAt` of an existing version is kept. */
  upsert(fv: FunctionVersion): Promise<void>;
  /**
   * Stores a new version, of a new function unless `newFunction` is false, within `quota`: checked and written in
   * one script, so concurrent creates cannot pass it.
   */
  create(fv: FunctionVersion, opts: { newFunction: boolean; quota: FunctionQuota }): Promise<CreateVersionOutcome>;
  /**
   * Publishes a repository model's version: created when new; when it exists only its model metadata is
   * refreshed, so an operator's undeploy, tags or description survive a worker restart.
   */
  seed(fv: FunctionVersion): Promise<void>;
  get(functionId: string, versionId: string): Promise<FunctionVersion | undefined>;
  /** Deletes a version (and the function when it was the last). */
  remove(functionId: string, versionId: string): Promise<boolean>;
  /** Tells every worker that deployments changed (they re-sync at once instead of at their next poll). */
  notifyChanged(): Promise<void>;
  /** Every version of one function (empty when unknown). */
  versions(functionId: string): Promise<FunctionVersion[]>;
  /** Every version of each function, in the order asked (empty for an unknown one). One round trip. */
  versionsOf(functionIds: readonly string[]): Promise<FunctionVersion[][]>;
  /** Every version of every function: what workers serve from. An account's listing reads `accountFunctionIds`. */
  list(): Promise<FunctionVersion[]>;
  /** The ids of the functions account `ncaId` owns (its index: no other account's function is read). */
  accountFunctionIds(ncaId: string): Promise<string[]>;
  /**
   * Adds every stored function to its account's index: versions stored by a release before the index existed.
   * Idempotent; a gateway runs it at start. Returns the ids of the functions it read.
   */
  indexAccounts(): Promise<string[]>;
  /**
   * Workers announce themselves for the versions they serve, and with `machine` the machine they run on; entries
   * expire after `ttlMs`.
   */
  heartbeat(workerId: string, versionIds: readonly string[], ttlMs: number, machine?: WorkerMachine): Promise<void>;
  removeWorker(workerId: string, versionIds: readonly string[]): Promise<void>;
  /** A stopping worker leaves the list of live machines at once. */
  workerGone(workerId: string): Promise<void>;
  /** The workers whose heartbeat named their machine and has not expired. */
  liveMachines(): Promise<LiveWorker[]>;
  /** Ids of the live workers of each version, in the order asked. One round trip. */
  liveWorkers(versionIds: readonly string[]): Promise<string[][]>;
}

/**
 * Stores a new version within its quotas. KEYS[1] functionVersions(functionId), KEYS[2] functionIds,
 * KEYS[3] accountFunctions(ncaId); ARGV[1] the function id, ARGV[2] the version id, ARGV[3] its JSON, ARGV[4] '1'
 * for a new function, '0' for a new version of an existing one, ARGV[5] the most functions of the account,
 * ARGV[6] the most versions of the function (0: unlimited). Returns 1 created, 0 the function is gone, 2 the
 * account is at its function quota, 3 the function is at its version quota.
 */
const CREATE = `
local versions = redis.call('HLEN', KEYS[1])
if ARGV[4] == '1' then
  local most = tonumber(ARGV[5])
  if most > 0 and redis.call('SISMEMBER', KEYS[3], ARGV[1]) == 0 and redis.call('SCARD', KEYS[3]) >= most then
    return 2
  end
elseif versions == 0 then
  return 0
end
local most = tonumber(ARGV[6])
if most > 0 and versions >= most then return 3 end
redis.call('SADD', KEYS[2], ARGV[1])
redis.call('SADD', KEYS[3], ARGV[1])
redis.call('HSET', KEYS[1], ARGV[2], ARGV[3])
return 1
`;

const CREATE_OUTCOMES: Record<number, CreateVersionOutcome> = {
  0: 'gone',
  1: 'created',
  2: 'functions',
  3: 'versions',
};

/** Versions stored per backfill round trip: bounded, whatever the number of functions. */
const INDEX_BATCH = 500;

export function createFunctionRegistry(redis: RedisClient, keys: Keys): FunctionRegistry {
  return { ...createFunctionVersions(redis, keys), ...createWorkerPresence(redis, keys) };
}

type FunctionVersions = Omit<FunctionRegistry, keyof WorkerPresence>;

/** Function versions, their functions' index and each account's. */
function createFunctionVersions(redis: RedisClient, keys: Keys): FunctionVersions {
  const versionsOf = (ids: readonly string[]) => readVersionsOf(redis, keys, ids);
  return {
    async upsert(fv) {
      const key = keys.functionVersions(fv.id);
      const existing = await redis.hget(key, fv.versionId);
      const createdAt = existing ? FunctionVersion.parse(JSON.parse(existing)).createdAt : fv.createdAt;
      await redis
        .multi()
        .sadd(keys.functionIds, fv.id)
        .sadd(keys.accountFunctions(fv.ncaId), fv.id)
        .hset(key, fv.versionId, JSON.stringify({ ...fv, createdAt }))
        .exec();
    },
    create: (fv, opts) => createVersion(redis, keys, fv, opts),
    versions: async (functionId) => parseVersions(await redis.hgetall(keys.functionVersions(functionId))),
    versionsOf,
    async seed(fv) {
      const key = keys.functionVersions(fv.id);
      const existing = await redis.hget(key, fv.versionId);
      const next = existing ? { ...FunctionVersion.parse(JSON.parse(existing)), model: fv.model } : fv;
      await redis
        .multi()
        .sadd(keys.functionIds, fv.id)
        .sadd(keys.accountFunctions(next.ncaId), fv.id)
        .hset(key, fv.versionId, JSON.stringify(next))
        .exec();
    },
    async get(functionId, versionId) {
      const json = await redis.hget(keys.functionVersions(functionId), versionId);
      return json ? FunctionVersion.parse(JSON.parse(json)) : undefined;
    },
    remove: (functionId, versionId) => removeVersion(redis, keys, functionId, versionId),
    async notifyChanged() {
      await redis.publish(keys.deploymentsChanged, '1');
    },
    async list() {
      const ids = (await redis.smembers(keys.functionIds)).sort();
      return (await versionsOf(ids)).flat();
    },
    async accountFunctionIds(ncaId) {
      return (await redis.smembers(keys.accountFunctions(ncaId))).sort();
    },
    indexAccounts: () => indexAccounts(redis, keys),
  };
}

const parseVersions = (hash: Record<string, string>) =>
  Object.values(hash).map((json) => FunctionVersion.parse(JSON.parse(json)));

async function readVersionsOf(redis: RedisClient, keys: Keys, ids: readonly string[]): Promise<FunctionVersion[][]> {
  // Sent in one tick, the reads leave in one write (auto-pipelining), grouped per node on a cluster.
  return (await Promise.all(ids.map((id) => redis.hgetall(keys.functionVersions(id))))).map(parseVersions);
}

async function createVersion(
  redis: RedisClient,
  keys: Keys,
  fv: FunctionVersion,
  { newFunction, quota }: { newFunction: boolean; quota: FunctionQuota },
): Promise<CreateVersionOutcome> {
  const outcome = await redis.eval(
    CREATE,
    3,
    keys.functionVersions(fv.id),
    keys.functionIds,
    keys.accountFunctions(fv.ncaId),
    fv.id,
    fv.versionId,
    JSON.stringify(fv),
    newFunction ? '1' : '0',
    quota.functionsPerAccount,
    quota.versionsPerFunction,
  );
  return CREATE_OUTCOMES[Number(outcome)] ?? 'gone';
}

async function removeVersion(redis: RedisClient, keys: Keys, functionId: string, versionId: string): Promise<boolean> {
  const key = keys.functionVersions(functionId);
  const json = await redis.hget(key, versionId);
  const removed = (await redis.hdel(key, versionId)) === 1;
  if (removed && (await redis.hlen(key)) === 0) {
    const owner = json ? FunctionVersion.parse(JSON.parse(json)).ncaId : undefined;
    await Promise.all([
      redis.srem(keys.functionIds, functionId),
      ...(owner !== undefined ? [redis.srem(keys.accountFunctions(owner), functionId)] : []),
    ]);
  }
  return removed;
}

async function indexAccounts(redis: RedisClient, keys: Keys): Promise<string[]> {
  const ids = await redis.smembers(keys.functionIds);
  for (let i = 0; i < ids.length; i += INDEX_BATCH) {
    const batch = await readVersionsOf(redis, keys, ids.slice(i, i + INDEX_BATCH));
    // A function's versions share its owner: the first one's account is the function's.
    const owned = batch.flatMap((fvs) => (fvs[0] ? [fvs[0]] : []));
    await Promise.all(owned.map((fv) => redis.sadd(keys.accountFunctions(fv.ncaId), fv.id)));
  }
  return ids;
}
