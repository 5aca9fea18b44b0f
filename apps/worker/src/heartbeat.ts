import type { FunctionRegistry, WorkerMachine } from '@nvcf/control-store';
import type { Logger } from '@nvcf/service-kit';

/**
 * Tells the control plane, every `intervalMs`, which versions this worker serves and the machine it runs on (its
 * pool, GPU and instance type: the cluster groups). An entry lives three intervals, so a killed worker stops
 * counting as an instance within seconds.
 */
export function startHeartbeat(
  registry: FunctionRegistry,
  workerId: string,
  versionIds: () => readonly string[],
  intervalMs: number,
  logger: Logger,
  machine?: WorkerMachine,
): { stop(): Promise<void>; beat(): Promise<void> } {
  const ttl = intervalMs * 3;
  const beat = () => registry.heartbeat(workerId, versionIds(), ttl, machine);
  const timer = setInterval(() => {
    beat().catch((err: unknown) => logger.warn({ err }, 'heartbeat failed'));
  }, intervalMs);
  timer.unref();
  return {
    beat,
    async stop() {
      clearInterval(timer);
      await Promise.all([registry.removeWorker(workerId, versionIds()), registry.workerGone(workerId)]);
    },
  };
}
