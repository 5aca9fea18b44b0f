import type { ApiKey } from '@nvcf/client';
import type { Command } from 'commander';
import { commaList } from '../args.ts';
import { contextFor } from '../context.ts';
import { UsageError } from '../errors.ts';
import type { Column } from '../output.ts';

const keyColumns: readonly Column<ApiKey>[] = [
  { header: 'KEY ID', value: (k) => k.id },
  { header: 'NAME', value: (k) => k.name },
  { header: 'STATE', value: (k) => (k.revokedAt ? `revoked ${k.revokedAt}` : 'active') },
  { header: 'SCOPES', value: (k) => k.scopes.join(',') },
  { header: 'FUNCTIONS', value: (k) => k.functionIds?.join(',') ?? '(all)' },
  { header: 'CREATED', value: (k) => k.createdAt },
  { header: 'ACCOUNT', value: (k) => k.ncaId },
];

export function registerKeys(program: Command): void {
  const keys = program
    .command('keys')
    .description('API keys (the key in use needs the manage_keys scope)')
    .addHelpText(
      'after',
      "\nSigned tokens (JWTs) are made locally, with the gateway's secret: NVCF_JWT_SECRET=… pnpm keys token --help",
    );

  keys
    .command('create')
    .description('create a key: its secret is printed this once (only its hash is stored)')
    .requiredOption('--name <name>', 'what the key is for')
    .requiredOption('--scopes <a,b>', 'scopes, e.g. invoke_function,list_functions', commaList)
    .option('--functions <fid,…>', 'restrict the key to these functions', commaList)
    .option('--nca-id <ncaId>', "the key's account (default: the caller's; another account's: operators only)")
    .action(async (opts: { name: string; scopes: string[]; functions?: string[]; ncaId?: string }, cmd: Command) => {
      if (opts.scopes.length === 0) throw new UsageError('--scopes needs at least one scope');
      const { client, out } = await contextFor(cmd);
      const { key, value } = await client.keys.create({
        name: opts.name,
        scopes: opts.scopes,
        ...(opts.functions?.length ? { functionIds: opts.functions } : {}),
        ...(opts.ncaId ? { ncaId: opts.ncaId } : {}),
      });
      out.record(
        {
          id: key.id,
          name: key.name,
          scopes: key.scopes.join(','),
          functions: key.functionIds?.join(','),
          account: key.ncaId,
          createdAt: key.createdAt,
          key: value,
        },
        { key, value },
      );
      if (out.mode !== 'json' && process.stderr.isTTY)
        process.stderr.write('Keep the key now: it is not shown again.\n');
    });

  keys
    .command('list')
    .description('the keys this key manages, revoked ones included')
    .action(async (_opts, cmd: Command) => {
      const { client, out } = await contextFor(cmd);
      out.list(await client.keys.list(), keyColumns);
    });

  keys
    .command('revoke')
    .description('revoke a key: it gets 401 everywhere within seconds')
    .argument('<keyId>')
    .action(async (keyId: string, _opts, cmd: Command) => {
      const { client, out } = await contextFor(cmd);
      await client.keys.revoke(keyId);
      out.done(`revoked ${keyId}`, { keyId, revoked: true });
    });
}
