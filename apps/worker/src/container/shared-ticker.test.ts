import { describe, expect, it } from 'vitest';
import { createSharedTicker } from './shared-ticker.ts';

/** A promise and its resolve, for a test to decide when a check ends. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => {
    open = r;
  });
  return { opened, open };
}

describe('createSharedTicker', () => {
  it('runs every registered check each tick, never one twice at once, and waits for a running one on removal', async () => {
    const ticker = createSharedTicker(5);
    const held = gate();
    let started = 0;
    let ended = 0;
    const entered = gate();
    const remove = ticker.every(async () => {
      started++;
      entered.open();
      await held.opened;
      ended++;
    });
    let other = 0;
    const otherRan = gate();
    const removeOther = ticker.every(async () => {
      other++;
      otherRan.open();
    });
    await entered.opened;
    await otherRan.opened;
    // The held check is still running: later ticks do not start it again, the other check still runs.
    const seen = other;
    while (other < seen + 2) await new Promise((r) => setTimeout(r, 5));
    expect(started).toBe(1);
    const removed = remove();
    let done = false;
    void removed.then(() => {
      done = true;
    });
    await Promise.resolve();
    expect(done).toBe(false);
    held.open();
    await removed;
    expect(ended).toBe(1);
    await removeOther();
  });
});
