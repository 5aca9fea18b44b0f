import { describe, expect, it } from 'vitest';
import { parsePollSeconds } from './poll-seconds.ts';

describe('parsePollSeconds', () => {
  it('uses the default when absent and accepts 1..3600', () => {
    expect(parsePollSeconds(undefined, 60)).toBe(60);
    expect(parsePollSeconds('1', 60)).toBe(1);
    expect(parsePollSeconds(' 300 ', 60)).toBe(300);
    expect(parsePollSeconds('3600', 60)).toBe(3600);
  });

  it('clamps values below 1 to 1', () => {
    expect(parsePollSeconds('0', 60)).toBe(1);
    expect(parsePollSeconds('-20', 60)).toBe(1);
  });

  it('refuses > 3600 with NVCF’s message, and anything that is not an integer', () => {
    expect(() => parsePollSeconds('3601', 60)).toThrow('NVCF-POLL-SECONDS must be <= 3600');
    for (const bad of ['abc', '1.5', '', '1e3', '0x10', '12abc']) {
      expect(() => parsePollSeconds(bad, 60), bad).toThrow(/NVCF-POLL-SECONDS/);
    }
  });
});
