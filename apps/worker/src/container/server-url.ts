import { parseServerPath } from '@nvcf/protocol';

/**
 * A path of a container function (`inferenceUrl`, its health URI) on its server, and nowhere else. The gateway
 * refuses anything but a path, but versions stored before it did are still read here: resolving such a value as
 * a relative URL (`//host/x`, `/\host/x`) would send the client's body and NVCF headers to another address.
 *
 * @returns the URL on `base`'s origin; undefined when `path` is not a path of that server
 */
export function serverUrl(base: URL, path: string): URL | undefined {
  const target = parseServerPath(path);
  if (target === undefined) return undefined;
  const url = new URL(target, base.origin);
  return url.origin === base.origin ? url : undefined;
}
