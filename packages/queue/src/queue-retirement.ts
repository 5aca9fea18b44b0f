import { type Keys, type QueueKeys, WORKERS_GROUP } from './keys.ts';
import { isNoGroup, type RedisClient, scanKeys } from './redis-connection.ts';

/** Entries read per round trip when a queue is walked whole (retiring a version). */
const PAGE = 1000;

/**
 * Removes a deleted version's queues, handing each request still waiting in them to `settle` first
 * (`InvocationProducer.retire`).
 */
export async function retireVersionQueues(
  connection: RedisClient,
  keys: Keys,
  versionId: string,
  settle: (requestId: string) => Promise<void>,
): Promise<void> {
  // The shared queue, and the workers' own queues of the version (sequence routing), found by their keys.
  const own: QueueKeys[] = [];
  for await (const batch of scanKeys(connection, keys.workerQueuesPattern(versionId))) {
    for (const stream of batch) {
      const worker = stream.slice(stream.lastIndexOf(':w:') + 3);
      own.push(keys.queue(versionId, worker));
    }
  }
  for (const q of [keys.queue(versionId), ...own]) {
    const waiting = await waitingIn(connection, q);
    for (const requestId of waiting) await settle(requestId);
    // Nothing will read their kept inputs now: they go with the queue, not at their TTL. Inputs of jobs
    // running still go as those finish.
    for (let i = 0; i < waiting.length; i += PAGE) {
      const inputs = waiting.slice(i, i + PAGE).map((id) => keys.requestInput(id));
      if (inputs.length > 0) await connection.del(...inputs);
    }
    await connection.del(q.stream, q.delayed, q.delayedJobs);
  }
  // What the version's queues held: released with them (running jobs finish without it).
  await connection.del(keys.queueBytes(versionId));
}

/**
 * The requests of a queue that no worker holds: entries not delivered, and retries waiting out a pause. Read a
 * page at a time: a deep queue is no one huge reply.
 */
async function waitingIn(connection: RedisClient, q: QueueKeys): Promise<string[]> {
  const held = new Set<string>();
  for (let from = '-'; ; ) {
    const page = (await connection.xpending(q.stream, WORKERS_GROUP, from, '+', PAGE).catch((err: unknown) => {
      // No group yet: no worker ever read this queue, so none holds anything.
      if (isNoGroup(err)) return [];
      throw err;
    })) as [string, ...unknown[]][];
    for (const [sid] of page) held.add(sid);
    const last = page.at(-1);
    if (page.length < PAGE || !last) break;
    from = `(${last[0]}`;
  }
  const ids: string[] = [];
  for (let from = '-'; ; ) {
    const page = await connection.xrange(q.stream, from, '+', 'COUNT', PAGE);
    for (const [sid, fields] of page) {
      const at = fields.indexOf('id');
      if (!held.has(sid) && at >= 0 && at % 2 === 0) ids.push(fields[at + 1] as string);
    }
    const last = page.at(-1);
    if (page.length < PAGE || !last) break;
    from = `(${last[0]}`;
  }
  return [...ids, ...(await connection.zrange(q.delayed, 0, -1))];
}
