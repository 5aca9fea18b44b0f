/**
 * What `REDIS_URL` points at. Besides ioredis' own `redis://` and `rediss://` URLs (one server), two forms name
 * several hosts, which a WHATWG URL cannot hold:
 *   redis+cluster://[user:pass@]host1:port,host2:port[,...]       a Redis Cluster: any reachable nodes seed it
 *   redis+sentinel://[user:pass@]host1:port,host2:port/<primary>[?db=N&sentinelPassword=...]
 *                                                                a primary with replicas under Redis Sentinel
 * `rediss+cluster` and `rediss+sentinel` use TLS to the data nodes.
 * (Sentinel: https://redis.io/docs/latest/operate/oss_and_stack/management/sentinel/,
 * Cluster: https://redis.io/docs/latest/operate/oss_and_stack/management/scaling/.)
 */
export type RedisTarget =
  | { kind: 'single'; url: string }
  | { kind: 'cluster'; nodes: HostPort[]; tls: boolean; username?: string; password?: string }
  | {
      kind: 'sentinel';
      sentinels: HostPort[];
      primaryName: string;
      tls: boolean;
      db: number;
      username?: string;
      password?: string;
      sentinelPassword?: string;
    };

export interface HostPort {
  host: string;
  port: number;
}

const MULTI_HOST = /^(rediss?)\+(cluster|sentinel):\/\/(?:([^@/]*)@)?([^/?#]+)(\/[^?#]*)?(\?[^#]*)?$/;

/** Parses `REDIS_URL`; throws an error naming the problem when it is not one of the accepted forms. */
export function parseRedisTarget(url: string): RedisTarget {
  const m = MULTI_HOST.exec(url.trim());
  if (!m) {
    if (!/^rediss?:\/\//.test(url)) {
      throw new Error(
        `REDIS_URL '${redact(url)}' is not redis://, rediss://, redis+cluster://host:port,... or redis+sentinel://host:port,.../primary`,
      );
    }
    return { kind: 'single', url };
  }
  const [, scheme, mode, userinfo, hostList = '', path, query] = m;
  const tls = scheme === 'rediss';
  const credentials = parseUserinfo(userinfo);
  const hosts = hostList.split(',').map((h) => parseHostPort(h, mode === 'sentinel' ? 26379 : 6379, url));
  const params = new URLSearchParams(query?.slice(1) ?? '');
  if (mode === 'cluster') {
    if (path && path !== '/')
      throw new Error(`REDIS_URL '${redact(url)}': a cluster has no database path (it uses db 0)`);
    return { kind: 'cluster', nodes: hosts, tls, ...credentials };
  }
  const primaryName = decodeURIComponent(path?.slice(1) ?? '');
  if (!primaryName) throw new Error(`REDIS_URL '${redact(url)}': name the monitored primary, e.g. .../mymaster`);
  const db = Number(params.get('db') ?? 0);
  if (!Number.isInteger(db) || db < 0) throw new Error(`REDIS_URL '${redact(url)}': db must be a non-negative integer`);
  const sentinelPassword = params.get('sentinelPassword') ?? undefined;
  return {
    kind: 'sentinel',
    sentinels: hosts,
    primaryName,
    tls,
    db,
    ...credentials,
    ...(sentinelPassword ? { sentinelPassword } : {}),
  };
}

function parseUserinfo(userinfo: string | undefined): { username?: string; password?: string } {
  if (!userinfo) return {};
  const colon = userinfo.indexOf(':');
  const user = decodeURIComponent(colon < 0 ? userinfo : userinfo.slice(0, colon));
  const password = colon < 0 ? undefined : decodeURIComponent(userinfo.slice(colon + 1));
  return { ...(user ? { username: user } : {}), ...(password !== undefined ? { password } : {}) };
}

function parseHostPort(text: string, defaultPort: number, url: string): HostPort {
  // [v6]:port, host:port or host alone.
  const m = /^(?:\[([^\]]+)\]|([^:[\]]+))(?::(\d+))?$/.exec(text.trim());
  const host = m?.[1] ?? m?.[2];
  const port = m?.[3] === undefined ? defaultPort : Number(m[3]);
  if (!host || !Number.isInteger(port) || port < 1 || port > 65535) {
    throw new Error(`REDIS_URL '${redact(url)}': '${text}' is not host:port`);
  }
  return { host, port };
}

/** The URL without its password, for error messages and logs. */
export function redact(url: string): string {
  return url.replace(/\/\/([^@/]*):[^@/]*@/, '//$1:***@');
}
