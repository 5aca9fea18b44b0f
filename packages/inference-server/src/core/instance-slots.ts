/**
 * At most `count` executions of a model version at a time, as Triton's instance_group count allows;
 * the rest wait in arrival order. The wait is the request's queue time in the statistics.
 */
export class InstanceSlots {
  #free: number;
  readonly #waiting: (() => void)[] = [];

  constructor(count: number) {
    this.#free = Math.max(1, count);
  }

  async acquire(): Promise<void> {
    if (this.#free > 0) {
      this.#free--;
      return;
    }
    await new Promise<void>((resolve) => this.#waiting.push(resolve));
  }

  release(): void {
    const next = this.#waiting.shift();
    if (next) next();
    else this.#free++;
  }
}
