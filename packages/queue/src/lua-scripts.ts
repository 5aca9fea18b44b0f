import { readFileSync } from 'node:fs';
import type { RedisClient } from './redis-connection.ts';

const script = (name: string) => readFileSync(new URL(`./lua/${name}.lua`, import.meta.url), 'utf8');

/** The request-store scripts, registered on a connection as custom commands (EVALSHA with fallback). */
export interface RequestScripts {
  nvcfCreateRequest(key: string, ...args: (string | number)[]): Promise<number>;
  nvcfMarkInProgress(key: string, ...args: (string | number)[]): Promise<string>;
  nvcfCompleteRequest(key: string, ...args: (string | number | Buffer)[]): Promise<number>;
  nvcfTakeResultBuffer(key: string, mode?: string): Promise<(Buffer | null)[]>;
  nvcfMarkDelivered(key: string): Promise<number>;
  nvcfReportProgress(key: string, ...args: (string | number | Buffer)[]): Promise<number>;
}

const SCRIPTS = {
  nvcfCreateRequest: 'create-request',
  nvcfMarkInProgress: 'mark-in-progress',
  nvcfCompleteRequest: 'complete-request',
  nvcfTakeResult: 'take-result',
  nvcfMarkDelivered: 'mark-delivered',
  nvcfReportProgress: 'report-progress',
} as const;

const sources = Object.fromEntries(Object.entries(SCRIPTS).map(([cmd, file]) => [cmd, script(file)]));

export function withRequestScripts<C extends RedisClient>(redis: C): C & RequestScripts {
  for (const [cmd, lua] of Object.entries(sources)) {
    if (!(cmd in redis)) redis.defineCommand(cmd, { numberOfKeys: 1, lua });
  }
  return redis as C & RequestScripts;
}
