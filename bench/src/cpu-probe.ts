import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';

/** CPU time of a set of processes over a window, in % of one core (Linux /proc; empty elsewhere). */
export interface CpuProbe {
  start(): void;
  /** Per process name, % of one core used since `start()`; a machine with N cores tops out at N×100. */
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

export function createCpuProbe(pids: Record<string, number>): CpuProbe {
  let begin = new Map<string, number>();
  let beginWall = 0;
  const sample = () => {
    const m = new Map<string, number>();
    for (const [name, pid] of Object.entries(pids)) {
      const s = cpuSeconds(pid);
      if (s !== undefined) m.set(name, s);
    }
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
        if (s0 !== undefined && wall > 0) out[name] = ((s - s0) / wall) * 100;
      }
      return out;
    },
  };
}
