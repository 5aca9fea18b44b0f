/**
 * API keys and tokens for the gateway, from the command line (REDIS_URL, NVCF_KEY_PREFIX and the
 * NVCF_JWT_* settings as the gateway's). `pnpm keys --help` for usage.
 */
import { parseArgs } from 'node:util';
import { createApiKeyStore } from '@nvcf/control-store';
import { isScope, NCA_ID_PATTERN, SCOPES, type Scope } from '@nvcf/protocol';
import { createKeys, createRedis } from '@nvcf/queue';
import { loadEnvConfig } from '@nvcf/service-kit';
import { SignJWT } from 'jose';
import { GatewayEnvFields } from '../config.ts';

const USAGE = `usage:
  keys create --name NAME [--scopes s1,s2 | --all-scopes] [--functions fid1,fid2] [--nca-id ACCOUNT]
  keys list
  keys revoke KEY_ID
  keys token --subject NAME --scopes s1,s2 [--functions fid1,fid2] [--nca-id ACCOUNT] [--ttl 600]
    (needs NVCF_JWT_SECRET; --ttl at most NVCF_JWT_MAX_TTL_SECONDS; NVCF_JWT_ISSUER / NVCF_JWT_AUDIENCE as the gateway's)
--nca-id: the account (NVIDIA Cloud Account id) the key or token belongs to; absent: the gateway's own (NVCF_NCA_ID)
scopes: ${SCOPES.join(', ')}`;

// The gateway's own variables and defaults, so a token signed here is one the gateway accepts.
const TokenEnv = GatewayEnvFields.pick({
  NVCF_JWT_SECRET: true,
  NVCF_JWT_MAX_TTL_SECONDS: true,
  NVCF_JWT_ISSUER: true,
  NVCF_JWT_AUDIENCE: true,
});

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

/** The `--nca-id` given, checked as the gateway checks one; undefined when absent. */
function ncaIdFrom(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  if (!NCA_ID_PATTERN.test(value)) throw new Error('--nca-id must be 1–128 visible ASCII characters (an NCA id)');
  return value;
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
      subject: { type: 'string' },
      'nca-id': { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  const [command, arg] = positionals;
  // Key management moved to the gateway's HTTP API; signing a token needs the secret, so it stays here.
  if (command !== 'token') {
    process.stderr.write(
      "keys: deprecated: use `nvcf keys create|list|revoke` (the gateway's keys API, scope manage_keys); `keys token` stays here (it signs locally with NVCF_JWT_SECRET)\n",
    );
  }
  if (values.help || !command) {
    process.stdout.write(`${USAGE}\n`);
    return values.help ? 0 : 2;
  }
  const functionIds = list(values.functions);
  const ncaId = ncaIdFrom(values['nca-id']);
  if (command === 'token') {
    const env = loadEnvConfig(TokenEnv, process.env, 'keys');
    if (!env.NVCF_JWT_SECRET) throw new Error('NVCF_JWT_SECRET (32+ characters) must be set, as on the gateway');
    // The subject is the principal: tokens sharing one would share its assets and rate bucket.
    if (!values.subject) throw new Error('give --subject (who the token is for; each holder needs its own)');
    const ttl = /^\d+$/.test(values.ttl) ? Number(values.ttl) : 0;
    if (ttl < 1 || ttl > env.NVCF_JWT_MAX_TTL_SECONDS) {
      throw new Error(
        `--ttl must be whole seconds from 1 to ${env.NVCF_JWT_MAX_TTL_SECONDS} (NVCF_JWT_MAX_TTL_SECONDS)`,
      );
    }
    const now = Math.floor(Date.now() / 1000);
    const jwt = new SignJWT({
      scope: scopesFrom(values.scopes, values['all-scopes']).join(' '),
      ...(functionIds ? { function_ids: functionIds } : {}),
      ...(ncaId ? { nca_id: ncaId } : {}),
    })
      .setProtectedHeader({ alg: 'HS256' })
      .setSubject(values.subject)
      .setIssuedAt(now)
      .setExpirationTime(now + ttl);
    if (env.NVCF_JWT_ISSUER) jwt.setIssuer(env.NVCF_JWT_ISSUER);
    if (env.NVCF_JWT_AUDIENCE) jwt.setAudience(env.NVCF_JWT_AUDIENCE);
    process.stdout.write(`${await jwt.sign(new TextEncoder().encode(env.NVCF_JWT_SECRET))}\n`);
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
        ...(ncaId ? { ncaId } : {}),
      });
      // The secret is shown once, here; only its hash is stored.
      process.stdout.write(`${JSON.stringify({ ...record, key }, null, 2)}\n`);
    } else if (command === 'list') {
      for (const r of await store.list()) {
        const state = r.revokedAt ? `revoked ${r.revokedAt}` : 'active';
        const fns = r.allowedFunctionIds ? ` functions=${r.allowedFunctionIds.join(',')}` : '';
        // A key stored without an account belongs to the gateway's own (NVCF_NCA_ID).
        const account = r.ncaId ? ` nca=${r.ncaId}` : '';
        process.stdout.write(`${r.id}  ${r.name}  ${state}  scopes=${r.scopes.join(',')}${fns}${account}\n`);
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
