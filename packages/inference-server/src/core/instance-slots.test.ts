import { describe, expect, it } from 'vitest';
import { InstanceSlots } from './instance-slots.ts';

describe('InstanceSlots', () => {
  it('lets `count` holders in at once and the rest in arrival order', async () => {
    const slots = new InstanceSlots(2);
    const order: number[] = [];
    await slots.acquire();
    await slots.acquire();
    const third = slots.acquire().then(() => order.push(3));
    const fourth = slots.acquire().then(() => order.push(4));
    await Promise.resolve();
    expect(order).toEqual([]);
    slots.release();
    await third;
    expect(order).toEqual([3]);
    slots.release();
    await fourth;
    expect(order).toEqual([3, 4]);
  });
});
