import type { Redis } from 'ioredis';

/**
 * What Redis itself counted up to one moment, from one `INFO stats commandstats cpu`
 * (https://redis.io/docs/latest/commands/info/). Redis 7.0 counts a command a Lua script runs with
 * `redis.call` like one a client sent: in `cmdstat_<name>` and in `total_commands_processed` alike, beside
 * the script's own `cmdstat_evalsha` (verified by redis-cost.int.test.ts). Neither tells the two apart;
 * redis-monitor.ts does (MONITOR names the source of each command, `lua` for a script's).
 */
export interface RedisCounters {
  /** `cmdstat_<name>:calls`, by lower-case name (`client|setname` for a subcommand). */
  calls: Record<string, number>;
  /**
   * `cmdstat_<name>:usec`: wall time inside each command's implementation, networking left out. A script's
   * EVALSHA includes the commands it runs, which count again under their own names: summing every name
   * double-counts them.
   */
  usec: Record<string, number>;
  commandsProcessed: number;
  /** Bytes read from client sockets: what the clients wrote to Redis, protocol framing included. */
  netInputBytes: number;
  netOutputBytes: number;
  /** Read events on client sockets: one per batch of pipelined commands that arrived together. */
  readsProcessed: number;
  /** used_cpu_user + used_cpu_sys, seconds: the whole server process. */
  cpuSeconds: number;
}

/** The command the probe sends, as RESP on the wire: its own bytes are taken out of each delta. */
const INFO_ARGS = ['info', 'stats', 'commandstats', 'cpu'] as const;
const INFO_REQUEST_BYTES = respArrayBytes(INFO_ARGS);

function respArrayBytes(args: readonly string[]): number {
  let n = `*${args.length}\r\n`.length;
  for (const a of args) {
    const len = Buffer.byteLength(a);
    n += `$${len}\r\n`.length + len + 2;
  }
  return n;
}

export function parseRedisInfo(text: string): RedisCounters {
  const calls: Record<string, number> = {};
  const usec: Record<string, number> = {};
  const fields = new Map<string, string>();
  for (const line of text.split('\r\n')) {
    const m = /^cmdstat_([^:]+):calls=(\d+),usec=(\d+)/.exec(line);
    if (m) {
      calls[m[1] as string] = Number(m[2]);
      usec[m[1] as string] = Number(m[3]);
      continue;
    }
    const i = line.indexOf(':');
    if (i > 0 && !line.startsWith('#')) fields.set(line.slice(0, i), line.slice(i + 1));
  }
  const num = (name: string) => {
    const v = Number(fields.get(name));
    if (!Number.isFinite(v)) throw new Error(`INFO has no numeric ${name}`);
    return v;
  };
  return {
    calls,
    usec,
    commandsProcessed: num('total_commands_processed'),
    netInputBytes: num('total_net_input_bytes'),
    netOutputBytes: num('total_net_output_bytes'),
    readsProcessed: num('total_reads_processed'),
    cpuSeconds: num('used_cpu_user') + num('used_cpu_sys'),
  };
}

/** One probe per measurement, on a connection of its own without auto-pipelining (one INFO per read). */
export async function readRedisCounters(probe: Redis): Promise<RedisCounters & { replyBytes: number }> {
  const text = (await probe.call(...INFO_ARGS)) as string;
  const counters = parseRedisInfo(text);
  const len = Buffer.byteLength(text);
  return { ...counters, replyBytes: `$${len}\r\n`.length + len + 2 };
}

export interface RedisCost {
  invocations: number;
  /** Commands Redis executed per invocation, those scripts ran included. */
  commands: number;
  /** Per-invocation count of each command, most frequent first. */
  top: { command: string; perInvocation: number }[];
  /** EVAL / EVALSHA / FCALL per invocation: each is one client command that runs several of `commands`. */
  scriptCalls: number;
  /** Socket reads per invocation: network round trips as Redis sees them (pipelined commands share one). */
  reads: number;
  /** Bytes clients wrote to Redis per invocation. */
  inputBytes: number;
  /** The invocation's own request body, as the client sent it to the gateway. */
  payloadBytes: number;
  /** `inputBytes − payloadBytes`: what the product adds to carrying the request body once. */
  beyondPayloadBytes: number;
  /**
   * The function's answer body (0 when not measured): the worker hands it to the gateway through Redis, so it crosses
   * once too, whatever the product does.
   */
  answerBytes: number;
  /** `inputBytes − payloadBytes − answerBytes`: what the product adds to carrying both bodies once (the target's). */
  beyondBodiesBytes: number;
  outputBytes: number;
  /** Redis server CPU (user + sys) per invocation, µs. */
  cpuUs: number;
  /** Wall time running scripts (EVAL / EVALSHA / FCALL, their commands included) per invocation, µs. */
  scriptUs: number;
}

const SCRIPT_COMMANDS = ['eval', 'evalsha', 'eval_ro', 'evalsha_ro', 'fcall', 'fcall_ro'];

/**
 * The per-invocation cost between two probes of the same connection, `before` taken before the first
 * invocation started and `after` once the last completed. The probe's own INFO is taken out: the earlier
 * one's call and reply land in the delta, the later one's request bytes and read do too.
 */
export function redisCost(
  before: RedisCounters & { replyBytes: number },
  after: RedisCounters,
  opts: { invocations: number; payloadBytes: number; answerBytes?: number },
): RedisCost {
  const n = opts.invocations;
  if (!(n > 0)) throw new Error(`redisCost needs at least one invocation, got ${n}`);
  const delta: Record<string, number> = {};
  let total = 0;
  for (const [name, calls] of Object.entries(after.calls)) {
    const d = calls - (before.calls[name] ?? 0) - (name === 'info' ? 1 : 0);
    if (d > 0) delta[name] = d;
    total += Math.max(0, d);
  }
  const scriptUs = SCRIPT_COMMANDS.reduce((s, c) => s + (after.usec[c] ?? 0) - (before.usec[c] ?? 0), 0);
  const top = Object.entries(delta)
    .sort((a, b) => b[1] - a[1])
    .map(([command, calls]) => ({ command: command.toUpperCase(), perInvocation: calls / n }));
  const input = after.netInputBytes - before.netInputBytes - INFO_REQUEST_BYTES;
  return {
    invocations: n,
    commands: total / n,
    top,
    scriptCalls: SCRIPT_COMMANDS.reduce((s, c) => s + (delta[c] ?? 0), 0) / n,
    reads: (after.readsProcessed - before.readsProcessed - 1) / n,
    inputBytes: input / n,
    payloadBytes: opts.payloadBytes,
    beyondPayloadBytes: input / n - opts.payloadBytes,
    answerBytes: opts.answerBytes ?? 0,
    beyondBodiesBytes: input / n - opts.payloadBytes - (opts.answerBytes ?? 0),
    outputBytes: (after.netOutputBytes - before.netOutputBytes - before.replyBytes) / n,
    cpuUs: ((after.cpuSeconds - before.cpuSeconds) * 1e6) / n,
    scriptUs: scriptUs / n,
  };
}

const kb = (bytes: number) => (Math.abs(bytes) >= 10_240 ? (bytes / 1024).toFixed(0) : (bytes / 1024).toFixed(2));

/**
 * One line, e.g. `redis/inv: 56.1 cmds (EVALSHA 6.4, HGET 5.0, …), 6.4 script calls, 14.0 reads, 4.40 KB in
 * (4.20 KB beyond the 0.20 KB payload), 1.50 KB out, 180 µs Redis CPU (120 µs in scripts)`.
 */
export function formatRedisCost(cost: RedisCost, topN = 8): string {
  const top = cost.top
    .slice(0, topN)
    .map((t) => `${t.command} ${t.perInvocation.toFixed(1)}`)
    .join(', ');
  const more = cost.top.length > topN ? ', …' : '';
  return (
    `redis/inv over ${cost.invocations}: ${cost.commands.toFixed(1)} cmds executed (${top}${more}), ` +
    `${cost.scriptCalls.toFixed(1)} of them script calls, ${cost.reads.toFixed(1)} socket reads, ` +
    `${kb(cost.inputBytes)} KB in (${kb(cost.beyondPayloadBytes)} KB beyond the ${kb(cost.payloadBytes)} KB payload${
      cost.answerBytes > 0
        ? `, ${kb(cost.beyondBodiesBytes)} KB beyond it and the ${kb(cost.answerBytes)} KB answer`
        : ''
    }), ` +
    `${kb(cost.outputBytes)} KB out, ${cost.cpuUs.toFixed(0)} µs Redis CPU (${cost.scriptUs.toFixed(0)} µs in scripts)`
  );
}

/**
 * The project's target per invocation: every command and byte is Redis CPU a cluster must buy. The payload is both
 * bodies, request and answer (when measured): each must cross Redis once whatever the product does.
 */
export const REDIS_COST_TARGET = { commands: 25, beyondBodiesBytes: 1024 } as const;

/** e.g. `target ≤ 25 cmds and ≤ 1 KB beyond request and answer: MISSED`. */
export function formatRedisTarget(cost: RedisCost): string {
  const met =
    cost.commands <= REDIS_COST_TARGET.commands && cost.beyondBodiesBytes <= REDIS_COST_TARGET.beyondBodiesBytes;
  const payload = cost.answerBytes > 0 ? 'request and answer' : 'the request';
  return `target ≤ ${REDIS_COST_TARGET.commands} cmds and ≤ 1 KB beyond ${payload}: ${met ? 'met' : 'MISSED'}`;
}

/** The counters read around a load window, and the cost once the window's completions are known. */
export interface RedisCostProbe {
  /** At the window's start (synchronous: the read is under way when it returns). */
  start(): void;
  /** At the window's end, while the load still runs: the window sees steady state at both edges. */
  end(): void;
  /** `invocations` completed inside the window; undefined when a read failed. */
  cost(invocations: number): Promise<RedisCost | undefined>;
}

/**
 * Everything Redis does during the window counts, heartbeats and other background commands included: in
 * steady state they are part of what each invocation costs.
 */
export function createRedisCostProbe(probe: Redis, payloadBytes: number, answerBytes = 0): RedisCostProbe {
  let before: Promise<(RedisCounters & { replyBytes: number }) | undefined> | undefined;
  let after: Promise<RedisCounters | undefined> | undefined;
  const read = () => readRedisCounters(probe).catch(() => undefined);
  return {
    start() {
      before = read();
    },
    end() {
      after = before?.then(read);
    },
    async cost(invocations) {
      const [b, a] = [await before, await after];
      if (!b || !a || invocations <= 0) return undefined;
      return redisCost(b, a, { invocations, payloadBytes, answerBytes });
    },
  };
}
