import { describe, expect, it } from 'vitest';
import { selectVersions } from './version-policy.ts';

describe('selectVersions', () => {
  const available = ['3', '1', '10', '2'];

  it('serves the latest N by numeric (not lexical) order, ascending', () => {
    expect(selectVersions({ latest: { num_versions: 1 } }, available)).toEqual(['10']);
    expect(selectVersions({ latest: { num_versions: 2 } }, available)).toEqual(['3', '10']);
    expect(selectVersions({ latest: { num_versions: 9 } }, available)).toEqual(['1', '2', '3', '10']);
    expect(selectVersions({ latest: { num_versions: 0 } }, available)).toEqual([]);
  });

  it('serves all versions', () => {
    expect(selectVersions({ all: {} }, available)).toEqual(['1', '2', '3', '10']);
  });

  it('serves only the specific versions that exist on disk', () => {
    expect(selectVersions({ specific: { versions: [1, 3, 7] } }, available)).toEqual(['1', '3']);
    expect(selectVersions({ specific: { versions: [] } }, available)).toEqual([]);
  });

  it('orders versions beyond 2^53 exactly, and ignores duplicates and non-versions', () => {
    const big = ['18446744073709551617', '18446744073709551616', '9', '9', '07', 'x'];
    expect(selectVersions({ latest: { num_versions: 2 } }, big)).toEqual([
      '18446744073709551616',
      '18446744073709551617',
    ]);
    expect(selectVersions({ all: {} }, big)).toEqual(['9', '18446744073709551616', '18446744073709551617']);
  });

  it('returns nothing when nothing is available', () => {
    expect(selectVersions({ latest: { num_versions: 1 } }, [])).toEqual([]);
  });
});
