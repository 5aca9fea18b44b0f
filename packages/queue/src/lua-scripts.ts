import { readFileSync } from 'node:fs';
import type { RedisClient } from './redis-connection.ts';

const script = (name: string) => readFileSync(new URL(`./lua/${name}.lua`, import.meta.url), 'utf8');

type Arg = string | number | Buffer;

/**
 * The request-store and queue scripts, registered on a connection as custom commands (EVALSHA with fallback).
 * Each names a fixed number of keys, first: a cluster client's auto-pipelining routes a command by its first
 * argument, which must therefore be a key.
 */
export interface RequestScripts {
  nvcfCreateRequest(key: string, ...args: (string | number)[]): Promise<number>;
  nvcfMarkInProgress(key: string, ...args: (string | number)[]): Promise<string>;
  nvcfClaimWithInputBuffer(key: string, input: string, ...args: (string | number)[]): Promise<[Buffer, Buffer | null]>;
  nvcfCompleteRequest(request: string, ...args: Arg[]): Promise<number>;
  nvcfCompleteJob(request: string, stream: string, ...args: Arg[]): Promise<number>;
  nvcfCompleteJobDroppingInput(request: string, stream: string, input: string, ...args: Arg[]): Promise<number>;
  nvcfTakeResultBuffer(key: string, mode?: string): Promise<(Buffer | null)[]>;
  nvcfMarkDelivered(key: string): Promise<number>;
  nvcfReportProgress(key: string, ...args: Arg[]): Promise<number>;
  nvcfEnqueue(request: string, stream: string, ...args: Arg[]): Promise<number>;
  nvcfEnqueueWithInput(request: string, stream: string, input: string, ...args: Arg[]): Promise<number>;
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

/**
 * Command → script file and its number of keys. A script whose keys vary is registered once per count: the keys
 * it does not need are not sent at all (every byte of an invocation's commands is Redis' work).
 */
const SCRIPTS: Record<string, [file: string, numberOfKeys: number]> = {
  nvcfCreateRequest: ['create-request', 1],
  nvcfMarkInProgress: ['mark-in-progress', 1],
  nvcfClaimWithInput: ['mark-in-progress', 2],
  nvcfCompleteRequest: ['complete-request', 1],
  nvcfCompleteJob: ['complete-request', 2],
  nvcfCompleteJobDroppingInput: ['complete-request', 3],
  nvcfTakeResult: ['take-result', 1],
  nvcfMarkDelivered: ['mark-delivered', 1],
  nvcfReportProgress: ['report-progress', 1],
  nvcfEnqueue: ['enqueue', 2],
  nvcfEnqueueWithInput: ['enqueue', 3],
  nvcfRetryJob: ['retry-job', 3],
  nvcfMaintainQueue: ['maintain-queue', 3],
  nvcfWithdrawJob: ['withdraw-job', 4],
  nvcfQueuePosition: ['queue-position', 3],
  nvcfQueueCounts: ['queue-counts', 2],
};

const sources = Object.entries(SCRIPTS).map(([cmd, [file, numberOfKeys]]) => ({
  cmd,
  lua: script(file),
  numberOfKeys,
}));

export function withRequestScripts<C extends RedisClient>(redis: C): C & RequestScripts {
  for (const { cmd, lua, numberOfKeys } of sources) {
    if (!(cmd in redis)) redis.defineCommand(cmd, { numberOfKeys, lua });
  }
  return redis as C & RequestScripts;
}
