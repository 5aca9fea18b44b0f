import { Redis } from 'ioredis';

/**
 * One command as MONITOR reports it (https://redis.io/docs/latest/commands/monitor/): `source` is the
 * sending connection's name (`CLIENT SETNAME`, e.g. the gateway's `gateway`), its address when it has none,
 * or `lua` for a command a script ran. Redis 7.0 prints a script's EVALSHA before the commands it runs.
 */
export interface MonitorEvent {
  time: number;
  source: string;
  command: string;
  /** The arguments after the command, each cut to 80 characters (payloads are not needed to attribute). */
  args: string[];
}

export interface MonitorRecording {
  /** A marker in the stream (an ECHO from a connection of its own), e.g. between two invocations. */
  mark(label: string): Promise<void>;
  /** Stops and returns every command seen, markers included (`source` `mark`). */
  stop(): Promise<MonitorEvent[]>;
}

const MARK = 'bench-mark';
/** BullMQ names a Worker's blocking connection `<key prefix>:bull:<base64 of the queue name>`. */
const BULLMQ_BLOCKING = /:bull:[A-Za-z0-9+/]+=*$/;

const sourceName = (name: string) => (BULLMQ_BLOCKING.test(name) ? 'bullmq-blocking' : name);

/**
 * MONITOR makes Redis copy every command to this client: it costs Redis CPU, so it belongs to a window of its
 * own, never one whose throughput is reported.
 */
export async function startMonitor(url: string): Promise<MonitorRecording> {
  const control = new Redis(url, { connectionName: MARK });
  const base = new Redis(url);
  const monitor = await base.monitor();
  const raw: { time: number; addr: string; args: string[] }[] = [];
  monitor.on('monitor', (time: string, args: string[], source: string) => {
    raw.push({ time: Number(time), addr: source, args: args.slice(0, 4).map((a) => String(a).slice(0, 80)) });
  });
  const names = new Map<string, string>();
  const learnNames = async () => {
    for (const line of ((await control.client('LIST')) as string).split('\n')) {
      const addr = /\baddr=(\S+)/.exec(line)?.[1];
      const name = /\bname=(\S*)/.exec(line)?.[1];
      if (addr && name) names.set(addr, name);
    }
  };
  await learnNames();
  return {
    async mark(label) {
      await control.echo(label);
    },
    async stop() {
      // Connections opened during the recording are named by now.
      await learnNames();
      await control.echo('bench-stop');
      const stopAt = raw.length;
      monitor.disconnect();
      base.disconnect();
      control.disconnect();
      return raw.slice(0, stopAt).flatMap((e) => {
        const source = e.addr === 'lua' ? 'lua' : sourceName(names.get(e.addr) ?? e.addr);
        const [command = '', ...args] = e.args;
        if (source === MARK && command.toLowerCase() === 'echo' && args[0] === 'bench-stop') return [];
        return [{ time: e.time, source: source === MARK ? 'mark' : source, command: command.toLowerCase(), args }];
      });
    },
  };
}

/** Per-invocation counts of a recording of `invocations` invocations. */
export interface MonitorSummary {
  invocations: number;
  /** Commands clients sent (a script call counts once), per invocation. */
  clientCommands: number;
  /** Commands scripts ran, per invocation. */
  scriptCommands: number;
  /** Per source (connection name, or `lua:<connection>` for what that connection's scripts ran): command → per invocation. */
  bySource: Record<string, Record<string, number>>;
}

/** Counts a recording; a script's commands are charged to the connection whose EVALSHA preceded them. */
export function summarizeMonitor(events: MonitorEvent[], invocations: number): MonitorSummary {
  const counts = new Map<string, Map<string, number>>();
  let client = 0;
  let script = 0;
  let lastCaller = 'unknown';
  for (const e of events) {
    if (e.source === 'mark') continue;
    let source = e.source;
    if (source === 'lua') {
      source = `lua:${lastCaller}`;
      script++;
    } else {
      client++;
      if (e.command.startsWith('eval') || e.command.startsWith('fcall')) lastCaller = e.source;
    }
    const bySource = counts.get(source) ?? new Map<string, number>();
    counts.set(source, bySource);
    bySource.set(e.command, (bySource.get(e.command) ?? 0) + 1);
  }
  const bySource = Object.fromEntries(
    [...counts].map(([source, c]) => [source, Object.fromEntries([...c].map(([cmd, n]) => [cmd, n / invocations]))]),
  );
  return { invocations, clientCommands: client / invocations, scriptCommands: script / invocations, bySource };
}

/** e.g. `MONITOR over 20 sequential: 38.0 client cmds/inv (gateway 21.0, worker 12.0, …) + 18.0 inside scripts`. */
export function formatMonitorSummary(s: MonitorSummary, label: string): string {
  const perSource = Object.entries(s.bySource)
    .filter(([name]) => !name.startsWith('lua:'))
    .map(([name, counts]) => [name, Object.values(counts).reduce((a, b) => a + b, 0)] as const)
    .sort((a, b) => b[1] - a[1])
    .map(([name, n]) => `${name} ${n.toFixed(1)}`)
    .join(', ');
  return (
    `MONITOR over ${s.invocations} ${label}: ${s.clientCommands.toFixed(1)} client cmds/inv (${perSource}) + ` +
    `${s.scriptCommands.toFixed(1)} run inside scripts = ${(s.clientCommands + s.scriptCommands).toFixed(1)}`
  );
}

/**
 * Records `invocations` calls, `concurrency` at a time, under MONITOR; a failed call fails the recording
 * (its commands would be counted against too few invocations).
 */
export async function monitorInvocations(
  url: string,
  call: () => Promise<void>,
  opts: { invocations: number; concurrency: number; settleMs?: number },
): Promise<MonitorSummary> {
  const recording = await startMonitor(url);
  let next = 0;
  const loop = async () => {
    while (next < opts.invocations) {
      next++;
      await call();
    }
  };
  const done = await Promise.all(Array.from({ length: Math.min(opts.concurrency, opts.invocations) }, loop)).then(
    () => undefined,
    (err: unknown) => err ?? new Error('call failed'),
  );
  // An invocation's last commands follow its answer (the gateway's delivered mark).
  await new Promise((r) => setTimeout(r, opts.settleMs ?? 250));
  // Stopped whatever happened: the recording's connections must not outlive it.
  const events = await recording.stop();
  if (done !== undefined) throw done;
  return summarizeMonitor(events, opts.invocations);
}
