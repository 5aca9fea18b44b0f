import { execFile } from 'node:child_process';
import { cpus, freemem, totalmem } from 'node:os';
import { Gauge, type Registry } from 'prom-client';

/** What `nvidia-smi` reports of one GPU. */
interface GpuReading {
  uuid: string;
  utilization: number;
  usedBytes: number;
  totalBytes: number;
}

const MIB = 1024 * 1024;

/** Idle and total CPU time of every core so far (ms): utilisation is the change between two scrapes. */
function cpuTimes(): { idle: number; total: number } {
  let idle = 0;
  let total = 0;
  for (const { times } of cpus()) {
    idle += times.idle;
    total += times.user + times.nice + times.sys + times.idle + times.irq;
  }
  return { idle, total };
}

/**
 * Reads every GPU through `nvidia-smi` (shipped with the NVIDIA driver and the Container Toolkit): no native
 * binding to build. Undefined when there is none, and from then on never tried again.
 */
function createGpuReader(): () => Promise<GpuReading[] | undefined> {
  let absent = false;
  return () =>
    new Promise((resolve) => {
      if (absent) return resolve(undefined);
      const query = '--query-gpu=uuid,utilization.gpu,memory.used,memory.total';
      execFile('nvidia-smi', [query, '--format=csv,noheader,nounits'], { timeout: 2000 }, (err, stdout) => {
        if (err) {
          // No driver on this host: a CPU worker. Anything else (a timeout) is tried again next scrape.
          if ('code' in err && err.code === 'ENOENT') absent = true;
          return resolve(undefined);
        }
        const rows = stdout.trim().split('\n').filter(Boolean);
        resolve(
          rows.flatMap((row) => {
            const [uuid, util, used, total] = row.split(',').map((s) => s.trim());
            const numbers = [util, used, total].map(Number);
            if (!uuid || numbers.some((n) => !Number.isFinite(n))) return [];
            const [u = 0, m = 0, t = 0] = numbers;
            return [{ uuid, utilization: u / 100, usedBytes: m * MIB, totalBytes: t * MIB }];
          }),
        );
      });
    });
}

/**
 * Triton's CPU and GPU metrics under Triton's names (Triton metrics: "GPU Metrics", "CPU Metrics"), read at
 * scrape time: `nv_cpu_utilization` (0–1, the host's, between two scrapes), `nv_cpu_memory_total_bytes`,
 * `nv_cpu_memory_used_bytes`, and per GPU (`gpu_uuid`) `nv_gpu_utilization` (0–1), `nv_gpu_memory_total_bytes`,
 * `nv_gpu_memory_used_bytes`. A host without GPUs has no GPU series.
 */
export function registerHostMetrics(registry: Registry): void {
  const registers = [registry];
  let last = cpuTimes();
  new Gauge({
    name: 'nv_cpu_utilization',
    help: 'CPU utilization rate [0.0 - 1.0]',
    registers,
    collect() {
      const now = cpuTimes();
      const total = now.total - last.total;
      const busy = total - (now.idle - last.idle);
      last = now;
      if (total > 0) this.set(Math.min(1, Math.max(0, busy / total)));
    },
  });
  new Gauge({
    name: 'nv_cpu_memory_total_bytes',
    help: 'CPU total memory (RAM), in bytes',
    registers,
    collect() {
      this.set(totalmem());
    },
  });
  new Gauge({
    name: 'nv_cpu_memory_used_bytes',
    help: 'CPU used memory (RAM), in bytes',
    registers,
    collect() {
      this.set(totalmem() - freemem());
    },
  });

  const readGpus = createGpuReader();
  let gpus: GpuReading[] = [];
  let reading: Promise<void> | undefined;
  // Every GPU gauge's collect starts at once: they share one run of nvidia-smi per scrape.
  const refresh = () => {
    reading ??= readGpus()
      .then((r) => {
        gpus = r ?? [];
      })
      .finally(() => {
        reading = undefined;
      });
    return reading;
  };
  const gpuGauge = (name: string, help: string, pick: (g: GpuReading) => number) =>
    new Gauge({
      name,
      help,
      labelNames: ['gpu_uuid'] as const,
      registers,
      async collect() {
        await refresh();
        this.reset();
        for (const g of gpus) this.set({ gpu_uuid: g.uuid }, pick(g));
      },
    });
  gpuGauge('nv_gpu_utilization', 'GPU utilization rate [0.0 - 1.0)', (g) => g.utilization);
  gpuGauge('nv_gpu_memory_total_bytes', 'GPU total memory, in bytes', (g) => g.totalBytes);
  gpuGauge('nv_gpu_memory_used_bytes', 'GPU used memory, in bytes', (g) => g.usedBytes);
}
