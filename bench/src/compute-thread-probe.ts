import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

/**
 * CPU of one process's threads over a window, by role, in % of one core (Linux /proc; empty elsewhere):
 *   main  the event loop (HTTP, request decoding, batching, answers),
 *   ort   model instance threads (named `ort:<model>…` by the runner): ONNX Runtime and their messages,
 *   gc    V8's helper threads (garbage collection, compilation),
 *   other everything else (libuv pool, ORT's own pools).
 * Tells whether a figure is bounded by compute or by what surrounds it: instance threads mostly idle while
 * the rest of the process fills the cores means more instances or larger batches cannot help much.
 */
export interface ThreadProbe {
  start(): void;
  stop(): Record<ThreadRole, number>;
}

export type ThreadRole = 'main' | 'ort' | 'gc' | 'other';

// The same clock cpu-probe.ts reads (it keeps its copy private).
const ticksPerSecond = (() => {
  const n = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout?.trim());
  return Number.isFinite(n) && n > 0 ? n : 100;
})();

function role(pid: number, tid: number, comm: string): ThreadRole {
  if (tid === pid) return 'main';
  if (comm.startsWith('ort:')) return 'ort';
  if (comm.startsWith('V8Worker')) return 'gc';
  return 'other';
}

/** utime + stime in seconds and the role of each live thread. */
function sample(pid: number): Map<number, { role: ThreadRole; seconds: number }> {
  const out = new Map<number, { role: ThreadRole; seconds: number }>();
  let tids: string[];
  try {
    tids = readdirSync(`/proc/${pid}/task`);
  } catch {
    return out;
  }
  for (const t of tids) {
    const tid = Number(t);
    try {
      const stat = readFileSync(`/proc/${pid}/task/${t}/stat`, 'utf8');
      const comm = stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.set(tid, { role: role(pid, tid, comm), seconds: (Number(fields[11]) + Number(fields[12])) / ticksPerSecond });
    } catch {
      // The thread ended between the listing and the read: it counts for nothing.
    }
  }
  return out;
}

export function createThreadProbe(pid: number): ThreadProbe {
  let begin = new Map<number, { role: ThreadRole; seconds: number }>();
  let beginWall = 0;
  return {
    start() {
      begin = sample(pid);
      beginWall = performance.now();
    },
    stop() {
      const end = sample(pid);
      const wall = (performance.now() - beginWall) / 1000;
      const out: Record<ThreadRole, number> = { main: 0, ort: 0, gc: 0, other: 0 };
      if (wall <= 0) return out;
      // A thread started inside the window counts from zero; one that ended inside it is lost (rare: instance
      // threads live as long as their model).
      for (const [tid, t] of end) out[t.role] += ((t.seconds - (begin.get(tid)?.seconds ?? 0)) / wall) * 100;
      return out;
    },
  };
}
