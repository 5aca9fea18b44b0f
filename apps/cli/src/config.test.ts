import { mkdtemp, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type ConfigFile,
  configPath,
  DEFAULT_BASE_URL,
  loadConfig,
  maskKey,
  readConfigFile,
  resolveConfig,
  writeConfigFile,
} from './config.ts';
import { UsageError } from './errors.ts';

const file: ConfigFile = {
  profiles: {
    default: { baseUrl: 'http://profile-default:8080', apiKey: 'nvapi-from-default-profile' },
    staging: { baseUrl: 'https://staging.example' },
  },
};
const path = '/cfg.json';

describe('resolveConfig: flags > env > profile > default', () => {
  it('takes each value from the first place that has it, and says where', () => {
    const env = { NVCF_BASE_URL: 'http://env:1', NVCF_API_KEY: 'nvapi-env' };
    expect(resolveConfig({ baseUrl: 'http://flag:2', apiKey: 'nvapi-flag' }, env, file, path)).toMatchObject({
      baseUrl: 'http://flag:2',
      apiKey: 'nvapi-flag',
      sources: { baseUrl: 'flag', apiKey: 'flag' },
    });
    expect(resolveConfig({}, env, file, path)).toMatchObject({
      baseUrl: 'http://env:1',
      apiKey: 'nvapi-env',
      sources: { baseUrl: 'env', apiKey: 'env' },
    });
    // Each value on its own: a flag for the URL, the environment for the key.
    expect(resolveConfig({ baseUrl: 'http://flag:2' }, env, file, path)).toMatchObject({
      sources: { baseUrl: 'flag', apiKey: 'env' },
    });
    expect(resolveConfig({}, {}, file, path)).toMatchObject({
      baseUrl: 'http://profile-default:8080',
      apiKey: 'nvapi-from-default-profile',
      profile: 'default',
      sources: { baseUrl: 'profile', apiKey: 'profile' },
    });
    expect(resolveConfig({}, {}, { profiles: {} }, path)).toMatchObject({
      baseUrl: DEFAULT_BASE_URL,
      apiKey: undefined,
      sources: { baseUrl: 'default', apiKey: 'none' },
    });
  });

  it('picks the profile by --profile, then NVCF_PROFILE; a named profile must exist', () => {
    expect(resolveConfig({ profile: 'staging' }, {}, file, path)).toMatchObject({
      profile: 'staging',
      baseUrl: 'https://staging.example',
      apiKey: undefined,
    });
    expect(resolveConfig({}, { NVCF_PROFILE: 'staging' }, file, path).baseUrl).toBe('https://staging.example');
    expect(resolveConfig({ profile: 'default' }, { NVCF_PROFILE: 'staging' }, file, path).profile).toBe('default');
    expect(() => resolveConfig({ profile: 'prod' }, {}, file, path)).toThrow(UsageError);
    expect(() => resolveConfig({ profile: 'prod' }, {}, file, path)).toThrow(/no profile 'prod'.*default, staging/);
  });

  it('refuses a base URL that is not http(s), naming where it came from', () => {
    expect(() => resolveConfig({}, { NVCF_BASE_URL: 'localhost:8080' }, file, path)).toThrow(/from env/);
    expect(() => resolveConfig({ baseUrl: 'ftp://x' }, {}, file, path)).toThrow(UsageError);
  });
});

describe('the config file', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'nvcf-cli-config-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('lives at $NVCF_CONFIG, else under $XDG_CONFIG_HOME, else ~/.config', () => {
    expect(configPath({ NVCF_CONFIG: '/x/c.json', XDG_CONFIG_HOME: '/xdg' })).toBe('/x/c.json');
    expect(configPath({ XDG_CONFIG_HOME: '/xdg', HOME: '/home/u' })).toBe('/xdg/nvcf/config.json');
    expect(configPath({ HOME: '/home/u' })).toBe('/home/u/.config/nvcf/config.json');
  });

  it('is written readable by its owner only, and read back; a missing file is an empty one', async () => {
    const p = join(dir, 'sub', 'config.json');
    expect(await readConfigFile(p)).toEqual({ profiles: {} });
    await writeConfigFile(p, file);
    expect((await stat(p)).mode & 0o777).toBe(0o600);
    expect(await readConfigFile(p)).toEqual(file);
    const loaded = await loadConfig({}, { NVCF_CONFIG: p, NVCF_API_KEY: 'nvapi-env' });
    expect(loaded).toMatchObject({ baseUrl: 'http://profile-default:8080', apiKey: 'nvapi-env', path: p });
  });

  it('refuses a file that is not JSON or not the schema, naming the file', async () => {
    const p = join(dir, 'config.json');
    await writeFile(p, '{ nope');
    await expect(readConfigFile(p)).rejects.toThrow(`${p} is not JSON`);
    await writeFile(p, JSON.stringify({ profiles: { default: { baseUrl: 42 } } }));
    await expect(readConfigFile(p)).rejects.toThrow(/baseUrl/);
  });

  it('masks keys when showing them', () => {
    expect(maskKey('nvapi-abcdefghijklmnopqrstuvwxyz')).toBe('nvapi-…wxyz');
    expect(maskKey('short')).toBe('****');
    expect(maskKey(undefined)).toBe('(none)');
  });
});
