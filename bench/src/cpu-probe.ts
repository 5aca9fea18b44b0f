import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** CPU time of a set of processes over a window, in % of one core (Linux /proc; empty elsewhere). */
export interface CpuProbe {
  start(): void;
  /**
   * Per process name, % of one core used since `start()`; a machine with N cores tops out at N×100.
   * `other`: the machine's busy time (steal included) beyond those processes. Anything but a few % there
   * means something else competed for the cores and the window's figures are suspect.
   */
  stop(): Record<string, number>;
}

const ticksPerSecond = (() => {
  const out = spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' });
  const n = Number(out.stdout?.trim());
  return Number.isFinite(n) && n > 0 ? n : 100;
})();

/** utime + stime of a process, in seconds; undefined when it cannot be read. */
function cpuSeconds(pid: number): number | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesised command name: state is field 3, utime 14, stime 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / ticksPerSecond;
  } catch {
    return undefined;
  }
}

/** Busy seconds of the whole machine (all cores), from the first line of /proc/stat. */
function machineBusySeconds(): number | undefined {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0] ?? '';
    // cpu user nice system idle iowait irq softirq steal ...
    const [user, nice, system, , , irq, softirq, steal] = line.trim().split(/\s+/).slice(1).map(Number);
    const busy = [user, nice, system, irq, softirq, steal].reduce<number>((s, v) => s + (v ?? 0), 0);
    return Number.isFinite(busy) ? busy / ticksPerSecond : undefined;
  } catch {
    return undefined;
  }
}

const MACHINE = '\u0000machine';

export function createCpuProbe(pids: Record<string, number>): CpuProbe {
  let begin = new Map<string, number>();
  let beginWall = 0;
  const sample = () => {
    const m = new Map<string, number>();
    for (const [name, pid] of Object.entries(pids)) {
      const s = cpuSeconds(pid);
      if (s !== undefined) m.set(name, s);
    }
    const machine = machineBusySeconds();
    if (machine !== undefined) m.set(MACHINE, machine);
    return m;
  };
  return {
    start() {
      begin = sample();
      beginWall = performance.now();
    },
    stop() {
      const end = sample();
      const wall = (performance.now() - beginWall) / 1000;
      const out: Record<string, number> = {};
      for (const [name, s] of end) {
        const s0 = begin.get(name);
        if (s0 !== undefined && wall > 0 && name !== MACHINE) out[name] = ((s - s0) / wall) * 100;
      }
      const m0 = begin.get(MACHINE);
      const m1 = end.get(MACHINE);
      if (m0 !== undefined && m1 !== undefined && wall > 0) {
        const ours = Object.values(out).reduce((sum, v) => sum + v, 0);
        out.other = Math.max(0, ((m1 - m0) / wall) * 100 - ours);
      }
      return out;
    },
  };
}
