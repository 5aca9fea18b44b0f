import type { Command } from 'commander';
import { contextFor } from '../context.ts';
import { UsageError } from '../errors.ts';
import { parseSecretArgs } from '../secret-args.ts';

/** `nvcf functions secrets …`: a version's secrets (NVCF: updateSecrets; the key needs `update_secrets`). */
export function registerSecrets(functions: Command): void {
  const secrets = functions
    .command('secrets')
    .description("a version's secrets: its container server gets them as environment variables (never read back)");

  secrets
    .command('set')
    .description("replace a version's whole set of secrets (names not given are removed)")
    .argument('<functionId>')
    .argument('<versionId>')
    .argument('<NAME=VALUE...>', 'a value inline, from a file (NAME=@FILE) or from stdin (NAME=-)')
    .addHelpText(
      'after',
      '\nA value from a file or stdin stays out of your shell history (one trailing newline is dropped):\n' +
        '  nvcf functions secrets set $FID $VID API_TOKEN=@token.txt\n' +
        '  pass show api-token | nvcf functions secrets set $FID $VID API_TOKEN=-',
    )
    .action(async (functionId: string, versionId: string, pairs: string[], _opts, cmd: Command) => {
      const list = await parseSecretArgs(pairs);
      if (list.length === 0) throw new UsageError('give NAME=VALUE pairs (or `secrets clear` to remove them all)');
      const { client, out } = await contextFor(cmd);
      await client.functions.updateSecrets(functionId, versionId, { secrets: list });
      const names = list.map((s) => s.name);
      out.done(`set ${names.join(', ')} on ${functionId} version ${versionId}`, {
        functionId,
        versionId,
        secrets: names,
      });
    });

  secrets
    .command('clear')
    .description('remove every secret of a version')
    .argument('<functionId>')
    .argument('<versionId>')
    .action(async (functionId: string, versionId: string, _opts, cmd: Command) => {
      const { client, out } = await contextFor(cmd);
      await client.functions.updateSecrets(functionId, versionId, { secrets: [] });
      out.done(`removed the secrets of ${functionId} version ${versionId}`, { functionId, versionId, secrets: [] });
    });
}
