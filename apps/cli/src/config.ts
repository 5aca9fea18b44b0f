/**
 * Where `nvcf` finds its gateway and credential: flags, then the environment, then a profile file, then the
 * default. The file is JSON, `{"profiles": {"default": {"baseUrl": …, "apiKey": …}}}`, at `$NVCF_CONFIG` or
 * `$XDG_CONFIG_HOME/nvcf/config.json` (`~/.config/nvcf/config.json`).
 */
import { chmod, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { UsageError } from './errors.ts';

export const DEFAULT_BASE_URL = 'http://localhost:8080';
export const DEFAULT_PROFILE = 'default';

export const Profile = z.object({
  baseUrl: z.url({ protocol: /^https?$/ }).optional(),
  apiKey: z.string().min(1).optional(),
});
export type Profile = z.infer<typeof Profile>;

export const ConfigFile = z.object({ profiles: z.record(z.string(), Profile).default({}) });
export type ConfigFile = z.infer<typeof ConfigFile>;

export type Source = 'flag' | 'env' | 'profile' | 'default' | 'none';

/** What a command runs with, and where each value came from (`nvcf config show`). */
export interface ResolvedConfig {
  baseUrl: string;
  apiKey: string | undefined;
  profile: string;
  path: string;
  sources: { baseUrl: Source; apiKey: Source };
}

export interface ConfigFlags {
  baseUrl?: string | undefined;
  apiKey?: string | undefined;
  profile?: string | undefined;
}

/** The profile file's path: `$NVCF_CONFIG`, else under `$XDG_CONFIG_HOME` (default `~/.config`). */
export function configPath(env: NodeJS.ProcessEnv = process.env): string {
  if (env.NVCF_CONFIG) return env.NVCF_CONFIG;
  const base = env.XDG_CONFIG_HOME || join(env.HOME || homedir(), '.config');
  return join(base, 'nvcf', 'config.json');
}

/** Reads and checks the profile file; a missing file is an empty one. */
export async function readConfigFile(path: string): Promise<ConfigFile> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { profiles: {} };
    throw err;
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (err) {
    throw new Error(`${path} is not JSON: ${(err as Error).message}`);
  }
  const parsed = ConfigFile.safeParse(json);
  if (!parsed.success) throw new Error(`${path}: ${z.prettifyError(parsed.error).replaceAll('\n', '; ')}`);
  return parsed.data;
}

/** Writes the profile file readable by its owner only (it holds API keys), replacing it whole. */
export async function writeConfigFile(path: string, config: ConfigFile): Promise<void> {
  await mkdir(dirname(path), { recursive: true, mode: 0o700 });
  const temp = `${path}.${process.pid}.tmp`;
  await writeFile(temp, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  await chmod(temp, 0o600);
  await rename(temp, path);
}

/**
 * The precedence, as a pure function: `--base-url`/`--api-key` over `NVCF_BASE_URL`/`NVCF_API_KEY` over the
 * profile (`--profile`, else `NVCF_PROFILE`, else `default`) over the default URL. A profile named explicitly must
 * exist; the default one may be absent.
 */
export function resolveConfig(flags: ConfigFlags, env: NodeJS.ProcessEnv, file: ConfigFile, path: string) {
  const named = flags.profile ?? env.NVCF_PROFILE;
  const profileName = named || DEFAULT_PROFILE;
  const profile = file.profiles[profileName];
  if (named && !profile) {
    const known = Object.keys(file.profiles);
    throw new UsageError(
      `no profile '${profileName}' in ${path}${known.length ? ` (it has: ${known.join(', ')})` : ''}`,
    );
  }
  const pick = (flag: string | undefined, fromEnv: string | undefined, fromProfile: string | undefined) =>
    flag
      ? { value: flag, source: 'flag' as const }
      : fromEnv
        ? { value: fromEnv, source: 'env' as const }
        : fromProfile
          ? { value: fromProfile, source: 'profile' as const }
          : undefined;
  const baseUrl = pick(flags.baseUrl, env.NVCF_BASE_URL, profile?.baseUrl) ?? {
    value: DEFAULT_BASE_URL,
    source: 'default' as const,
  };
  const apiKey = pick(flags.apiKey, env.NVCF_API_KEY, profile?.apiKey);
  if (!z.url({ protocol: /^https?$/ }).safeParse(baseUrl.value).success) {
    throw new UsageError(`the base URL '${baseUrl.value}' (from ${baseUrl.source}) is not an http(s) URL`);
  }
  return {
    baseUrl: baseUrl.value,
    apiKey: apiKey?.value,
    profile: profileName,
    path,
    sources: { baseUrl: baseUrl.source, apiKey: apiKey?.source ?? 'none' },
  } satisfies ResolvedConfig;
}

/** Reads the file and resolves: what every command that talks to the gateway starts with. */
export async function loadConfig(flags: ConfigFlags, env: NodeJS.ProcessEnv = process.env): Promise<ResolvedConfig> {
  const path = configPath(env);
  return resolveConfig(flags, env, await readConfigFile(path), path);
}

/** An API key as `config show` prints it: enough to tell keys apart, never the secret. */
export function maskKey(key: string | undefined): string {
  if (!key) return '(none)';
  return key.length <= 12 ? '****' : `${key.slice(0, 6)}…${key.slice(-4)}`;
}
