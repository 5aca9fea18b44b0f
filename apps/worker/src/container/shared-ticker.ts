/**
 * One timer for every in-flight request's periodic check (a progress file's mtime, whether a streaming client
 * left): each registered check runs once per tick, never twice at once, and the timer runs only while some check
 * is registered. A worker holds one, instead of a timer per request.
 */
export interface SharedTicker {
  /** Runs `check` every tick until the returned function is called; that resolves once a running check ended. */
  every(check: () => Promise<void>): () => Promise<void>;
}

export function createSharedTicker(intervalMs: number): SharedTicker {
  /** Each check, with its run in progress (if any). */
  const checks = new Map<() => Promise<void>, Promise<void> | undefined>();
  let timer: NodeJS.Timeout | undefined;
  const tick = () => {
    for (const [check, running] of checks) {
      if (running) continue;
      const run = check()
        .catch(() => undefined)
        .finally(() => {
          if (checks.has(check)) checks.set(check, undefined);
        });
      checks.set(check, run);
    }
  };
  return {
    every(check) {
      checks.set(check, undefined);
      if (!timer) {
        timer = setInterval(tick, intervalMs);
        timer.unref();
      }
      return async () => {
        const running = checks.get(check);
        checks.delete(check);
        if (checks.size === 0 && timer) {
          clearInterval(timer);
          timer = undefined;
        }
        await running;
      };
    },
  };
}
