import { type ChildProcess, spawn } from 'node:child_process';
import { freePort } from '@nvcf/service-kit';
import { Redis } from 'ioredis';
import { waitForPing } from './redis-server.ts';

/**
 * A `redis-server` that fault tests can pause, stop and start again on the same port, keeping its data in
 * `dir` with AOF (`appendfsync` as given, `everysec` by default, as the compose file runs it).
 */
export interface RestartableRedis {
  url: string;
  pid(): number;
  /** SIGSTOP / SIGCONT: a stalled Redis (swapping, a long fork, a paused VM). */
  pause(): void;
  resume(): void;
  /** SIGTERM (Redis writes its AOF out), or SIGKILL with `{ kill: true }`; resolves once it exited. */
  stop(opts?: { kill?: boolean }): Promise<void>;
  start(): Promise<void>;
  usedMemory(): Promise<number>;
}

export async function startRestartableRedis(
  dir: string,
  opts: { appendfsync?: 'always' | 'everysec' } = {},
): Promise<RestartableRedis> {
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  let proc: ChildProcess | undefined;
  const probe = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1, enableOfflineQueue: false });
  probe.on('error', () => {});
  const start = async () => {
    const args = ['--port', String(port), '--bind', '127.0.0.1', '--dir', dir, '--appendonly', 'yes'];
    const child = spawn('redis-server', [...args, '--appendfsync', opts.appendfsync ?? 'everysec', '--save', ''], {
      stdio: 'ignore',
    });
    proc = child;
    await waitForPing(url, child);
  };
  await start();
  return {
    url,
    pid: () => proc?.pid ?? 0,
    pause: () => void proc?.kill('SIGSTOP'),
    resume: () => void proc?.kill('SIGCONT'),
    async stop(stopOpts = {}) {
      const p = proc;
      if (!p || p.exitCode !== null || p.signalCode !== null) return;
      const exited = new Promise((r) => p.once('exit', r));
      p.kill('SIGCONT');
      p.kill(stopOpts.kill ? 'SIGKILL' : 'SIGTERM');
      await exited;
      probe.disconnect();
    },
    start,
    async usedMemory() {
      if (probe.status !== 'ready') await probe.connect().catch(() => {});
      return Number(/used_memory:(\d+)/.exec(await probe.info('memory'))?.[1] ?? 0);
    },
  };
}
