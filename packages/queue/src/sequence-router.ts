import type { Keys } from './keys.ts';
import type { RedisClient } from './redis-connection.ts';

/** What a request says about its sequence (the `sequence_id`, `sequence_start`, `sequence_end` parameters). */
export interface SequenceFlags {
  id: string | number | bigint;
  start: boolean;
  end: boolean;
}

/** Which workers serve each version now (the control store's function registry answers it from heartbeats). */
export interface LiveWorkers {
  liveWorkers(versionIds: readonly string[]): Promise<string[][]>;
}

export interface SequenceRouter {
  /**
   * The worker whose own queue a sequence request goes to, or undefined for the version's shared queue. A START
   * picks one of the version's live workers and records it as the sequence's owner (undefined when none is live:
   * the request waits in the shared queue, as any does); a later request goes to the owner while its record lives
   * and the owner is live (else to the shared queue, whose worker refuses it: the sequence's state is gone).
   */
  route(versionId: string, flags: SequenceFlags): Promise<string | undefined>;
}

/**
 * Sequence routing (Triton's sequence batcher: every request of a sequence reaches the instance holding its state,
 * here the worker). The owner record lives `ttlSeconds` past the sequence's latest request, and goes at END.
 */
export function createSequenceRouter(
  redis: RedisClient,
  keys: Keys,
  registry: LiveWorkers,
  opts: { ttlSeconds: number },
): SequenceRouter {
  return {
    async route(versionId, flags) {
      const key = keys.sequenceOwner(versionId, `${typeof flags.id === 'string' ? 's' : 'n'}:${String(flags.id)}`);
      if (flags.start) {
        const [live = []] = await registry.liveWorkers([versionId]);
        if (live.length === 0) return undefined;
        const owner = live[Math.floor(Math.random() * live.length)] as string;
        if (flags.end) await redis.del(key);
        else await redis.set(key, owner, 'EX', opts.ttlSeconds);
        return owner;
      }
      const owner = flags.end ? await redis.getdel(key) : await redis.getex(key, 'EX', opts.ttlSeconds);
      if (!owner) return undefined;
      const [live = []] = await registry.liveWorkers([versionId]);
      if (live.includes(owner)) return owner;
      // The owner left (a clean shutdown takes it off the live list before it drains its queue) or died, and the
      // sequence's state with it. Its queue is read by no one now: the request goes to the shared queue instead,
      // where a worker answers it as Triton answers a sequence it does not hold (no START), rather than waiting
      // unanswered.
      await redis.del(key);
      return undefined;
    },
  };
}

/**
 * The sequence flags of a KServe request's JSON (its `parameters`), or undefined when it names no sequence. Values
 * of the wrong type are left for the worker to refuse in Triton's words.
 */
export function sequenceFlagsOf(request: unknown): SequenceFlags | undefined {
  const parameters = (request as { parameters?: unknown } | null)?.parameters;
  if (typeof parameters !== 'object' || parameters === null) return undefined;
  const { sequence_id: id, sequence_start: start, sequence_end: end } = parameters as Record<string, unknown>;
  if ((typeof id !== 'string' && typeof id !== 'number' && typeof id !== 'bigint') || id === '' || id === 0) {
    return undefined;
  }
  return { id, start: start === true, end: end === true };
}
