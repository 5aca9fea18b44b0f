/**
 * API keys and tokens for the gateway, from the command line (REDIS_URL and NVCF_KEY_PREFIX as the
 * gateway's). `pnpm keys --help` for usage.
 */
import { parseArgs } from 'node:util';
import { isScope, SCOPES, type Scope } from '@nvcf/protocol';
import { createApiKeyStore, createKeys, createRedis } from '@nvcf/queue';
import { SignJWT } from 'jose';

const USAGE = `usage:
  keys create --name NAME [--scopes s1,s2 | --all-scopes] [--functions fid1,fid2]
  keys list
  keys revoke KEY_ID
  keys token --scopes s1,s2 [--functions fid1,fid2] [--ttl 600] [--subject NAME]   (needs NVCF_JWT_SECRET)
scopes: ${SCOPES.join(', ')}`;

function scopesFrom(value: string | undefined, all: boolean): Scope[] {
  if (all) return [...SCOPES];
  const names = (value ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  const bad = names.filter((s) => !isScope(s));
  if (names.length === 0 || bad.length > 0) {
    throw new Error(bad.length ? `unknown scope(s): ${bad.join(', ')}` : 'give --scopes or --all-scopes');
  }
  return names as Scope[];
}

const list = (value: string | undefined) =>
  value
    ?.split(',')
    .map((s) => s.trim())
    .filter(Boolean);

async function main(argv: string[]): Promise<number> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      name: { type: 'string' },
      scopes: { type: 'string' },
      'all-scopes': { type: 'boolean', default: false },
      functions: { type: 'string' },
      ttl: { type: 'string', default: '600' },
      subject: { type: 'string', default: 'cli' },
      help: { type: 'boolean', default: false },
    },
  });
  const [command, arg] = positionals;
  if (values.help || !command) {
    process.stdout.write(`${USAGE}\n`);
    return values.help ? 0 : 2;
  }
  const functionIds = list(values.functions);
  if (command === 'token') {
    const secret = process.env.NVCF_JWT_SECRET ?? '';
    if (secret.length < 32) throw new Error('NVCF_JWT_SECRET (at least 32 characters) must be set, as on the gateway');
    const jwt = await new SignJWT({
      scope: scopesFrom(values.scopes, values['all-scopes']).join(' '),
      ...(functionIds ? { function_ids: functionIds } : {}),
    })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(values.subject)
      .setIssuedAt()
      .setExpirationTime(`${Number(values.ttl)}s`)
      .sign(new TextEncoder().encode(secret));
    process.stdout.write(`${jwt}\n`);
    return 0;
  }
  const redis = createRedis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  try {
    const store = createApiKeyStore(redis, createKeys(process.env.NVCF_KEY_PREFIX ?? 'nvcf'));
    if (command === 'create') {
      if (!values.name) throw new Error('give --name');
      const { key, record } = await store.create({
        name: values.name,
        scopes: scopesFrom(values.scopes, values['all-scopes']),
        ...(functionIds ? { allowedFunctionIds: functionIds } : {}),
      });
      // The secret is shown once, here; only its hash is stored.
      process.stdout.write(`${JSON.stringify({ ...record, key }, null, 2)}\n`);
    } else if (command === 'list') {
      for (const r of await store.list()) {
        const state = r.revokedAt ? `revoked ${r.revokedAt}` : 'active';
        const fns = r.allowedFunctionIds ? ` functions=${r.allowedFunctionIds.join(',')}` : '';
        process.stdout.write(`${r.id}  ${r.name}  ${state}  scopes=${r.scopes.join(',')}${fns}\n`);
      }
    } else if (command === 'revoke') {
      if (!arg) throw new Error('give the key id to revoke (see `keys list`)');
      if (!(await store.revoke(arg))) throw new Error(`no key with id ${arg}`);
      process.stdout.write(`revoked ${arg}\n`);
    } else {
      process.stdout.write(`${USAGE}\n`);
      return 2;
    }
    return 0;
  } finally {
    redis.disconnect();
  }
}

main(process.argv.slice(2)).then(
  (code) => process.exit(code),
  (err: unknown) => {
    process.stderr.write(`keys: ${(err as Error).message}\n`);
    process.exit(1);
  },
);
