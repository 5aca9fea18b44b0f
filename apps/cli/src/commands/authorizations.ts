import type { FunctionAuthorizations } from '@nvcf/client';
import type { Command } from 'commander';
import { contextFor } from '../context.ts';
import type { Column } from '../output.ts';

const authorizationColumns: readonly Column<FunctionAuthorizations>[] = [
  { header: 'FUNCTION ID', value: (a) => a.id },
  { header: 'VERSION ID', value: (a) => a.versionId ?? '(all)' },
  { header: 'OWNER', value: (a) => a.ncaId },
  { header: 'AUTHORIZED ACCOUNTS', value: (a) => a.authorizedParties.map((p) => p.ncaId).join(',') || '(none)' },
];

interface ShareFlags {
  ncaId: string;
  version?: string;
}

const scope = (functionId: string, version: string | undefined) =>
  version ? `${functionId} version ${version}` : functionId;

/**
 * `nvcf functions share|unshare|authorizations`: sharing a function with other accounts (NVCF's authorized
 * accounts; the key in use needs the authorize_clients scope and must be of the function's account).
 */
export function registerFunctionAuthorizations(functions: Command): void {
  functions
    .command('share')
    .description("authorize another account (NCA id) to invoke the function's every version, or one with --version")
    .argument('<functionId>')
    .requiredOption('--nca-id <ncaId>', 'the account to authorize')
    .option('--version <versionId>', 'that version only')
    .action(async (functionId: string, opts: ShareFlags, cmd: Command) => {
      const { client, out } = await contextFor(cmd);
      const versionOpt = opts.version ? { versionId: opts.version } : {};
      await client.functions.authorizations.share(functionId, opts.ncaId, versionOpt);
      out.done(`shared ${scope(functionId, opts.version)} with ${opts.ncaId}`, {
        functionId,
        ...versionOpt,
        ncaId: opts.ncaId,
        shared: true,
      });
    });

  functions
    .command('unshare')
    .description('withdraw an account’s authorization for the function (or, with --version, for that version)')
    .argument('<functionId>')
    .requiredOption('--nca-id <ncaId>', 'the account to withdraw')
    .option('--version <versionId>', 'the version it was authorized for')
    .action(async (functionId: string, opts: ShareFlags, cmd: Command) => {
      const { client, out } = await contextFor(cmd);
      const versionOpt = opts.version ? { versionId: opts.version } : {};
      await client.functions.authorizations.unshare(functionId, opts.ncaId, versionOpt);
      out.done(`unshared ${scope(functionId, opts.version)} from ${opts.ncaId}`, {
        functionId,
        ...versionOpt,
        ncaId: opts.ncaId,
        shared: false,
      });
    });

  functions
    .command('authorizations')
    .description('the accounts authorized to invoke each version of the function (own and inherited)')
    .argument('<functionId>')
    .option('--version <versionId>', 'one version')
    .action(async (functionId: string, opts: { version?: string }, cmd: Command) => {
      const { client, out } = await contextFor(cmd);
      const auth = client.functions.authorizations;
      const rows = opts.version ? [await auth.get(functionId, opts.version)] : await auth.list(functionId);
      out.list(rows, authorizationColumns);
    });
}
