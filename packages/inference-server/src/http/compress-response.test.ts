import { describe, expect, it } from 'vitest';
import { preferredCoding } from './compress-response.ts';

describe('preferredCoding', () => {
  it.each([
    [undefined, undefined],
    ['', undefined],
    ['identity', undefined],
    ['br', undefined],
    ['gzip', 'gzip'],
    ['deflate', 'deflate'],
    ['gzip, deflate', 'gzip'],
    ['deflate, gzip', 'deflate'],
    ['identity, gzip', undefined],
    ['identity;q=0.5, gzip', 'gzip'],
    ['deflate;q=1, gzip;q=0.5', 'deflate'],
    ['gzip;q=0, deflate', 'deflate'],
    ['gzip;q=0', undefined],
    ['x-gzip', undefined],
    ['gzip;q=abc, deflate;q=0.1', 'deflate'],
    [' GZIP ; q=0.8 ', 'gzip'],
    ['*', undefined],
  ])('%s → %s', (header, expected) => {
    expect(preferredCoding(header)).toBe(expected);
  });
});
