import type { VersionPolicy } from './model-config.ts';

// Version directories are decimal without a leading zero (Triton ignores others); compare as integers of any size.
const VERSION = /^(0|[1-9][0-9]*)$/;

/**
 * The versions a policy serves out of those found on disk, in ascending numeric order: `latest` the N highest,
 * `all` every one, `specific` those listed that exist (a listed version with no directory is not served).
 *
 * @example
 * selectVersions({ latest: { num_versions: 2 } }, ['1', '10', '9']); // ['9', '10']
 * selectVersions({ specific: { versions: [1, 3] } }, ['1', '2']); // ['1']
 */
export function selectVersions(policy: VersionPolicy, available: readonly string[]): string[] {
  const versions = [...new Set(available.filter((v) => VERSION.test(v)))].sort((a, b) =>
    BigInt(a) < BigInt(b) ? -1 : BigInt(a) > BigInt(b) ? 1 : 0,
  );
  if ('all' in policy) return versions;
  if ('specific' in policy) {
    const wanted = new Set(policy.specific.versions.map((v) => BigInt(v)));
    return versions.filter((v) => wanted.has(BigInt(v)));
  }
  const n = Math.max(0, policy.latest.num_versions);
  return n === 0 ? [] : versions.slice(-n);
}
