import { Command } from 'commander';
import { registerAssets } from './commands/assets.ts';
import { registerCancel } from './commands/cancel.ts';
import { registerClusterGroups } from './commands/cluster-groups.ts';
import { registerConfig } from './commands/config.ts';
import { registerDeploy } from './commands/deploy.ts';
import { registerFunctions } from './commands/functions.ts';
import { registerInvoke } from './commands/invoke.ts';
import { registerKeys } from './commands/keys.ts';
import { registerKube } from './commands/kube.ts';
import { registerQueue } from './commands/queue.ts';
import { registerStatus } from './commands/status.ts';
import { DEFAULT_BASE_URL } from './config.ts';
import { EXIT } from './errors.ts';

const HELP_AFTER = `
Configuration (first found wins):
  --base-url / --api-key  >  NVCF_BASE_URL / NVCF_API_KEY  >  the profile (--profile NAME, NVCF_PROFILE, else
  "default") in $NVCF_CONFIG or ~/.config/nvcf/config.json  >  ${DEFAULT_BASE_URL} with no key.
  Set a profile with: nvcf config set base-url URL; nvcf config set api-key KEY

Output: tables on a terminal, tab-separated lines otherwise, --json for scripts.

Exit codes:
  ${EXIT.OK}    success
  ${EXIT.CLIENT}    the gateway refused the call (4xx), or a local file or input could not be used
  ${EXIT.USAGE}    bad usage: unknown command or option, missing or malformed argument
  ${EXIT.SERVER}    the gateway failed (5xx) or could not be reached
  ${EXIT.INTERRUPTED}  interrupted (Ctrl-C)`;

/** The `nvcf` command tree. Errors are thrown (exitOverride), for main to print and map to an exit code. */
export function createProgram(): Command {
  const program = new Command('nvcf')
    .description(
      'NVIDIA Cloud Functions API from the command line: functions, deployments, invocation, assets, queues, keys',
    )
    .option('--base-url <url>', `the gateway (env NVCF_BASE_URL; default ${DEFAULT_BASE_URL})`)
    .option('--api-key <key>', 'the API key (env NVCF_API_KEY)')
    .option('--profile <name>', 'a profile of the config file (env NVCF_PROFILE; default "default")')
    .option('--json', 'print JSON (stable field names) instead of tables or lines')
    .addHelpText('after', HELP_AFTER)
    .showHelpAfterError('(add --help for usage)')
    .exitOverride();
  registerFunctions(program);
  registerDeploy(program);
  registerInvoke(program);
  registerStatus(program);
  registerCancel(program);
  registerQueue(program);
  registerClusterGroups(program);
  registerAssets(program);
  registerKeys(program);
  registerConfig(program);
  registerKube(program);
  return program;
}
