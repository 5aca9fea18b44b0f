import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort } from '@nvcf/service-kit';
import { Redis } from 'ioredis';
import { hasRedisServerBinary, REDIS_INSTALL_HINT, type RedisHandle, waitForPing } from './redis-server.ts';

const run = promisify(execFile);

export interface ClusterNode {
  port: number;
  url: string;
  child: ChildProcess;
}

export interface RedisClusterHandle extends RedisHandle {
  /** `redis+cluster://127.0.0.1:<p1>,...`: what REDIS_URL takes for a cluster. */
  url: string;
  nodes: ClusterNode[];
  /**
   * Fails the primary holding `key` over to its replica, as an operator does (`CLUSTER FAILOVER` sent to the
   * replica: https://redis.io/docs/latest/commands/cluster-failover/), and resolves once the replica serves the
   * slot and every node agrees the cluster is ok. Returns the ports of the old primary and the new one.
   */
  failover(key: string): Promise<{ from: number; to: number }>;
}

/**
 * A real Redis Cluster on loopback ports: `primaries` primaries with `replicas` replicas each (redis-server
 * --cluster-enabled yes, joined by `redis-cli --cluster create`), no persistence, each node in its own directory.
 */
export async function startRedisCluster(
  opts: { primaries?: number; replicas?: number } = {},
): Promise<RedisClusterHandle> {
  if (!hasRedisServerBinary()) throw new Error(REDIS_INSTALL_HINT);
  const primaries = opts.primaries ?? 3;
  const replicas = opts.replicas ?? 1;
  const dir = await mkdtemp(join(tmpdir(), 'nvcf-redis-cluster-'));
  const nodes: ClusterNode[] = [];
  const stopAll = async () => {
    await Promise.all(nodes.map((n) => stop(n.child)));
    await rm(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < primaries * (1 + replicas); i++) nodes.push(await startNode(dir, i));
    await run('redis-cli', [
      '--cluster',
      'create',
      ...nodes.map((n) => `127.0.0.1:${n.port}`),
      '--cluster-replicas',
      String(replicas),
      '--cluster-yes',
    ]);
    await waitUntil(() => clusterSettled(nodes), 'the cluster to form');
  } catch (err) {
    await stopAll();
    throw err;
  }
  return {
    url: `redis+cluster://${nodes.map((n) => `127.0.0.1:${n.port}`).join(',')}`,
    owned: true,
    nodes,
    close: stopAll,
    async failover(key) {
      const from = await primaryOf(nodes, key);
      const replica = await replicaOf(nodes, from);
      await withClient(replica.port, (c) => c.call('CLUSTER', 'FAILOVER'));
      await waitUntil(async () => (await primaryOf(nodes, key)).port === replica.port, 'the replica to take over');
      await waitUntil(() => clusterSettled(nodes), 'the cluster to settle after the failover');
      return { from: from.port, to: replica.port };
    },
  };
}

async function startNode(dir: string, index: number): Promise<ClusterNode> {
  let lastError: unknown;
  for (let attempt = 0; attempt < 5; attempt++) {
    const port = await freePort();
    // The cluster bus needs a port of its own; by default port + 10000, which may be taken or out of range.
    const busPort = await freePort();
    const nodeDir = join(dir, String(index));
    await mkdir(nodeDir, { recursive: true });
    const child = spawn(
      'redis-server',
      [
        '--port',
        String(port),
        '--bind',
        '127.0.0.1',
        '--cluster-enabled',
        'yes',
        '--cluster-port',
        String(busPort),
        '--cluster-config-file',
        'nodes.conf',
        // Failure detection in tests: seconds, not the default 15.
        '--cluster-node-timeout',
        '2000',
        '--dir',
        nodeDir,
        '--save',
        '',
        '--appendonly',
        'no',
      ],
      { stdio: 'ignore' },
    );
    const url = `redis://127.0.0.1:${port}`;
    try {
      await waitForPing(url, child);
      return { port, url, child };
    } catch (err) {
      lastError = err; // a port taken between probe and bind: try others
    }
  }
  throw new Error(`could not start a cluster node: ${String(lastError)}`);
}

/** Every node says the cluster is ok with all slots served, and every replica is in sync with its primary. */
async function clusterSettled(nodes: ClusterNode[]): Promise<boolean> {
  for (const n of nodes) {
    const ok = await withClient(n.port, async (c) => {
      const info = String(await c.call('CLUSTER', 'INFO'));
      if (!/cluster_state:ok/.test(info) || !/cluster_slots_ok:16384/.test(info)) return false;
      const replication = await c.info('replication');
      return !/role:slave/.test(replication) || /master_link_status:up/.test(replication);
    });
    if (!ok) return false;
  }
  return true;
}

interface NodeLine {
  id: string;
  port: number;
  primary: boolean;
  primaryId: string;
  slots: [number, number][];
}

/** `CLUSTER NODES` as one node sees it (https://redis.io/docs/latest/commands/cluster-nodes/). */
async function clusterNodes(port: number): Promise<NodeLine[]> {
  const text = String(await withClient(port, (c) => c.call('CLUSTER', 'NODES')));
  return text
    .trim()
    .split('\n')
    .map((line) => {
      const [id = '', addr = '', flags = '', primaryId = '', , , , , ...slots] = line.split(' ');
      return {
        id,
        port: Number(/:(\d+)@/.exec(addr)?.[1]),
        primary: flags.split(',').includes('master') && !flags.includes('fail'),
        primaryId,
        slots: slots
          .filter((s) => !s.startsWith('['))
          .map((s) => {
            const [a, b = a] = s.split('-').map(Number) as [number, number?];
            return [a, b] as [number, number];
          }),
      };
    });
}

async function primaryOf(nodes: ClusterNode[], key: string): Promise<ClusterNode> {
  const [first] = nodes;
  if (!first) throw new Error('no nodes');
  const slot = Number(await withClient(first.port, (c) => c.call('CLUSTER', 'KEYSLOT', key)));
  // Ask a node that is up: every node's view converges once the cluster settles.
  for (const n of nodes) {
    const owner = (await clusterNodes(n.port)).find(
      (line) => line.primary && line.slots.some(([a, b]) => slot >= a && slot <= b),
    );
    const node = owner && nodes.find((x) => x.port === owner.port);
    if (node) return node;
  }
  throw new Error(`no primary serves slot ${slot}`);
}

async function replicaOf(nodes: ClusterNode[], primary: ClusterNode): Promise<ClusterNode> {
  const view = await clusterNodes(primary.port);
  const me = view.find((line) => line.port === primary.port);
  const replica = view.find((line) => !line.primary && line.primaryId === me?.id);
  const node = replica && nodes.find((x) => x.port === replica.port);
  if (!node) throw new Error(`the primary on ${primary.port} has no replica`);
  return node;
}

async function withClient<T>(port: number, fn: (c: Redis) => Promise<T>): Promise<T> {
  const c = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 1, retryStrategy: () => null });
  c.on('error', () => {});
  try {
    await c.connect();
    return await fn(c);
  } finally {
    c.disconnect();
  }
}

async function waitUntil(check: () => Promise<boolean>, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await check().catch(() => false)) return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}
