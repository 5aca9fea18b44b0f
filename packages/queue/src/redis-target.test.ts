import { describe, expect, it } from 'vitest';
import { parseRedisTarget, redact } from './redis-target.ts';

describe('REDIS_URL forms', () => {
  it('keeps a single-server URL as ioredis reads it', () => {
    expect(parseRedisTarget('redis://127.0.0.1:6379/2')).toEqual({ kind: 'single', url: 'redis://127.0.0.1:6379/2' });
    expect(parseRedisTarget('rediss://:pw@cache:6380')).toEqual({ kind: 'single', url: 'rediss://:pw@cache:6380' });
  });

  it('reads a cluster as its seed nodes, with credentials and TLS', () => {
    expect(parseRedisTarget('redis+cluster://10.0.0.1:7000,10.0.0.2:7001,node3')).toEqual({
      kind: 'cluster',
      tls: false,
      nodes: [
        { host: '10.0.0.1', port: 7000 },
        { host: '10.0.0.2', port: 7001 },
        { host: 'node3', port: 6379 },
      ],
    });
    expect(parseRedisTarget('rediss+cluster://app:s%40cret@[::1]:7000')).toEqual({
      kind: 'cluster',
      tls: true,
      username: 'app',
      password: 's@cret',
      nodes: [{ host: '::1', port: 7000 }],
    });
  });

  it('reads Sentinel: sentinels, the primary name, db and the sentinels’ own password', () => {
    expect(parseRedisTarget('redis+sentinel://:pw@s1:26379,s2/mymaster?db=3&sentinelPassword=sp')).toEqual({
      kind: 'sentinel',
      tls: false,
      sentinels: [
        { host: 's1', port: 26379 },
        { host: 's2', port: 26379 },
      ],
      primaryName: 'mymaster',
      db: 3,
      password: 'pw',
      sentinelPassword: 'sp',
    });
  });

  it('refuses what it cannot connect to, naming the problem and hiding the password', () => {
    expect(() => parseRedisTarget('http://x')).toThrow(/is not redis:\/\//);
    expect(() => parseRedisTarget('redis+sentinel://s1:26379')).toThrow(/name the monitored primary/);
    expect(() => parseRedisTarget('redis+cluster://a:1/3')).toThrow(/no database path/);
    expect(() => parseRedisTarget('redis+cluster://:hunter2@a:99999')).toThrow(/'a:99999' is not host:port/);
    expect(() => parseRedisTarget('redis+cluster://:hunter2@a:99999')).not.toThrow(/hunter2/);
    expect(redact('redis://user:hunter2@h:1')).toBe('redis://user:***@h:1');
  });
});
