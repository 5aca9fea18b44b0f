import { describe, expect, it } from 'vitest';
import { clusterGroupId, clusterGroupsOf } from './cluster-group-service.ts';

const worker = (workerId: string, pool: string, gpu: string, instanceType: string) => ({
  workerId,
  pool,
  gpu,
  instanceType,
  expiresAt: 0,
});

describe('cluster groups from live workers', () => {
  it('makes one group per pool, each GPU once with every instance type its workers report', () => {
    const groups = clusterGroupsOf(
      [
        worker('w1', 'gpu', 'H100', 'h100.x2'),
        worker('w2', 'gpu', 'H100', 'h100.x1'),
        worker('w3', 'gpu', 'H100', 'h100.x1'),
        worker('w4', 'gpu', 'A10G', 'a10g.x1'),
        worker('w5', 'default', 'CPU', 'cpu.x1'),
      ],
      'acct',
    );
    expect(groups.map((g) => g.name)).toEqual(['default', 'gpu']);
    expect(groups[1]).toEqual({
      id: clusterGroupId('gpu'),
      name: 'gpu',
      ncaId: 'acct',
      authorizedNcaIds: ['acct'],
      gpus: [
        { name: 'A10G', instanceTypes: [{ name: 'a10g.x1', description: 'A10G worker (a10g.x1)', default: true }] },
        {
          name: 'H100',
          instanceTypes: [
            { name: 'h100.x1', description: 'H100 worker (h100.x1)', default: true },
            { name: 'h100.x2', description: 'H100 worker (h100.x2)', default: false },
          ],
        },
      ],
      clusters: [],
    });
    expect(clusterGroupsOf([], 'acct')).toEqual([]);
  });

  it('gives a pool the same UUID every time, another pool another', () => {
    expect(clusterGroupId('gpu')).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(clusterGroupId('gpu')).toBe(clusterGroupId('gpu'));
    expect(clusterGroupId('cpu')).not.toBe(clusterGroupId('gpu'));
  });
});
