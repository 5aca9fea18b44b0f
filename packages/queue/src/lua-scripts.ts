import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { RedisClient } from './redis-connection.ts';

type Arg = string | number | Buffer;

/**
 * The request-store and queue scripts. Each method names its keys first, then its arguments.
 */
export interface RequestScripts {
  nvcfCreateRequest(key: string, ...args: (string | number)[]): Promise<number>;
  nvcfCompleteRequest(request: string, ...args: Arg[]): Promise<number>;
  nvcfCompleteJob(request: string, stream: string, ...args: Arg[]): Promise<number>;
  nvcfCompleteJobDroppingInput(request: string, stream: string, input: string, ...args: Arg[]): Promise<number>;
  nvcfTakeResultBuffer(key: string, mode?: string): Promise<(Buffer | null)[]>;
  nvcfMarkDelivered(key: string): Promise<number>;
  nvcfReportProgress(key: string, ...args: Arg[]): Promise<number>;
  nvcfEnqueue(request: string, stream: string, ...args: Arg[]): Promise<number>;
  nvcfEnqueueWithInput(request: string, stream: string, input: string, ...args: Arg[]): Promise<number>;
  nvcfLeaveJob(stream: string, ...args: Arg[]): Promise<number>;
  nvcfLeaveJobDroppingInput(stream: string, input: string, ...args: Arg[]): Promise<number>;
  nvcfRetryJob(stream: string, delayed: string, delayedJobs: string, ...args: Arg[]): Promise<number>;
  nvcfMaintainQueue(stream: string, delayed: string, delayedJobs: string, ...args: Arg[]): Promise<string[]>;
  nvcfWithdrawJob(
    request: string,
    stream: string,
    delayed: string,
    delayedJobs: string,
    ...args: Arg[]
  ): Promise<number>;
  nvcfQueuePosition(request: string, stream: string, delayed: string, ...args: Arg[]): Promise<number>;
  nvcfQueueCounts(stream: string, delayed: string, group: string): Promise<[number, number, number]>;
}

/** Method → script file, its number of keys, and whether its reply keeps bulk strings as bytes. */
const METHODS: Record<keyof RequestScripts, [file: string, numberOfKeys: number, buffers?: 'buffers']> = {
  nvcfCreateRequest: ['create-request', 1],
  nvcfCompleteRequest: ['complete-request', 1],
  nvcfCompleteJob: ['complete-request', 2],
  nvcfCompleteJobDroppingInput: ['complete-request', 3],
  nvcfTakeResultBuffer: ['take-result', 1, 'buffers'],
  nvcfMarkDelivered: ['mark-delivered', 1],
  nvcfReportProgress: ['report-progress', 1],
  nvcfEnqueue: ['enqueue', 2],
  nvcfEnqueueWithInput: ['enqueue', 3],
  nvcfLeaveJob: ['leave-job', 1],
  nvcfLeaveJobDroppingInput: ['leave-job', 2],
  nvcfRetryJob: ['retry-job', 3],
  nvcfMaintainQueue: ['maintain-queue', 3],
  nvcfWithdrawJob: ['withdraw-job', 4],
  nvcfQueuePosition: ['queue-position', 3],
  nvcfQueueCounts: ['queue-counts', 2],
};

const FILES = [...new Set(Object.values(METHODS).map(([file]) => file))].sort();
const read = (file: string) => readFileSync(new URL(`./lua/${file}.lua`, import.meta.url), 'utf8');
const sources = FILES.map(read);
/** Local functions the scripts share (the bytes queues hold), defined once at the library's top. */
const PREAMBLE = read('queue-bytes');

/**
 * This release's scripts as one Redis function library (https://redis.io/docs/latest/develop/programmability/functions-intro/,
 * Redis 7). FCALL names a function where EVALSHA names a script by its 40-character SHA-1: with 8-character names
 * each of an invocation's script calls sends 32 bytes less. The library and its functions are named by a hash of
 * the scripts, so releases that differ load side by side during a rolling upgrade, each calling its own.
 */
const TAG = createHash('sha1')
  .update([PREAMBLE, ...sources].join('\0'))
  .digest('hex')
  .slice(0, 6);
const functionName = (file: string) => `n${TAG}${String.fromCharCode(97 + FILES.indexOf(file))}`;
/** The library's name (`FUNCTION LIST`, `FUNCTION DELETE` to drop an old release's). */
export const SCRIPT_LIBRARY = `nvcf_${TAG}`;
const LIBRARY = [
  `#!lua name=${SCRIPT_LIBRARY}`,
  PREAMBLE,
  // Each script's body as written for EVAL, its KEYS and ARGV becoming the function's parameters.
  ...FILES.map(
    (file, i) => `redis.register_function('${functionName(file)}', function(KEYS, ARGV)\n${sources[i]}\nend)`,
  ),
].join('\n');

/** Per connection: the library's load, made once before the first call and again when Redis lost it. */
const loads = new WeakMap<RedisClient, Promise<void>>();

/**
 * The scripts over a connection. The library is loaded before the first call (on every primary of a cluster), and
 * again whenever Redis answers that a function is missing: a server restarted without persistence, or a primary
 * added to a cluster. Replicas get it by replication, so a failover keeps it.
 */
export function withRequestScripts(redis: RedisClient): RequestScripts {
  const fcallBuffer = bufferTwin(redis, 'fcallBuffer');
  const call = async (file: string, numberOfKeys: number, buffers: boolean, args: Arg[]): Promise<unknown> => {
    const fcall = () =>
      buffers
        ? fcallBuffer(functionName(file), numberOfKeys, ...args)
        : redis.fcall(functionName(file), numberOfKeys, ...args);
    await loaded(redis);
    try {
      return await fcall();
    } catch (err) {
      if (!isFunctionMissing(err)) throw err;
      loads.delete(redis);
      await loaded(redis);
      return await fcall();
    }
  };
  const scripts: Partial<Record<keyof RequestScripts, (...args: Arg[]) => Promise<unknown>>> = {};
  for (const [method, [file, numberOfKeys, buffers]] of Object.entries(METHODS)) {
    scripts[method as keyof RequestScripts] = (...args: Arg[]) => call(file, numberOfKeys, buffers === 'buffers', args);
  }
  return scripts as RequestScripts;
}

/**
 * ioredis makes a Buffer-replying twin of every command (`fcallBuffer` beside `fcall`), which its typings leave out
 * for FCALL. `callBuffer('fcall', …)` is no way round: auto-pipelined, it loses the command's name.
 */
function bufferTwin(redis: RedisClient, name: 'fcallBuffer'): (...args: Arg[]) => Promise<unknown> {
  const method: unknown = Reflect.get(redis, name);
  if (typeof method !== 'function') throw new Error(`this ioredis has no ${name}`);
  return (...args) => Promise.resolve(Reflect.apply(method, redis, args));
}

function loaded(redis: RedisClient): Promise<void> {
  let load = loads.get(redis);
  if (!load) {
    load = loadLibrary(redis);
    loads.set(redis, load);
    // A load that failed (Redis away) is tried again by the next call.
    load.catch(() => loads.delete(redis));
  }
  return load;
}

async function loadLibrary(redis: RedisClient): Promise<void> {
  const targets = 'nodes' in redis ? redis.nodes('master') : [redis];
  await Promise.all(
    targets.map((node) =>
      node.call('function', 'load', LIBRARY).catch((err: unknown) => {
        // Loaded already: by another process, or by this one before Redis forgot nothing.
        if (!(err instanceof Error && /already exists/i.test(err.message))) throw err;
      }),
    ),
  );
}

function isFunctionMissing(err: unknown): boolean {
  return err instanceof Error && /Function not found/i.test(err.message);
}
