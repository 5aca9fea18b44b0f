import { Argument, type Command } from 'commander';
import {
  configPath,
  DEFAULT_PROFILE,
  loadConfig,
  maskKey,
  Profile,
  readConfigFile,
  writeConfigFile,
} from '../config.ts';
import { globalOptions } from '../context.ts';
import { UsageError } from '../errors.ts';
import { createOutput, outputMode } from '../output.ts';

const KEYS = { 'base-url': 'baseUrl', 'api-key': 'apiKey' } as const;
type Key = keyof typeof KEYS;

export function registerConfig(program: Command): void {
  const config = program
    .command('config')
    .description(`profiles in the config file ($NVCF_CONFIG, default ~/.config/nvcf/config.json)`);

  config
    .command('set')
    .description('set a value of a profile (--profile, default "default"); the file is kept mode 600')
    .addArgument(new Argument('<key>').choices(Object.keys(KEYS)))
    .argument('<value>')
    .action(async (key: string, value: string, _opts, cmd: Command) => {
      const field = KEYS[key as Key];
      const checked = Profile.shape[field].safeParse(value);
      if (!checked.success) throw new UsageError(`${key} '${value}' is not valid: ${checked.error.issues[0]?.message}`);
      const path = configPath();
      const file = await readConfigFile(path);
      const profile = globalOptions(cmd).profile ?? process.env.NVCF_PROFILE ?? DEFAULT_PROFILE;
      file.profiles[profile] = { ...file.profiles[profile], [field]: value };
      await writeConfigFile(path, file);
      const shown = field === 'apiKey' ? maskKey(value) : value;
      const out = createOutput(outputMode(globalOptions(cmd).json === true, process.stdout), process.stdout);
      out.done(`${path}: profile ${profile}: ${key} = ${shown}`, { path, profile, [field]: shown });
    });

  config
    .command('show')
    .description('the settings a command would use, and where each comes from (flag, env, profile, default)')
    .action(async (_opts, cmd: Command) => {
      const opts = globalOptions(cmd);
      const resolved = await loadConfig({ baseUrl: opts.baseUrl, apiKey: opts.apiKey, profile: opts.profile });
      const shown = {
        path: resolved.path,
        profile: resolved.profile,
        baseUrl: resolved.baseUrl,
        baseUrlFrom: resolved.sources.baseUrl,
        apiKey: maskKey(resolved.apiKey),
        apiKeyFrom: resolved.sources.apiKey,
      };
      createOutput(outputMode(opts.json === true, process.stdout), process.stdout).record(shown, shown);
    });
}
