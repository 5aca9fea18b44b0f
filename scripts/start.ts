/**
 * Quick start: example models + Redis + one gateway + one worker, in the foreground. Ctrl-C stops all.
 * Redis: REDIS_URL when set, else a redis-server from PATH on a free port (data under .data/redis).
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { generateExampleRepository } from '@nvcf/models';
import { REDIS_INSTALL_HINT, type RedisHandle, startRedis } from '@nvcf/testing';

const root = resolve(import.meta.dirname, '..');
const modelRepository = resolve(root, process.env.MODEL_REPOSITORY ?? 'model-repository');
const gatewayPort = process.env.GATEWAY_PORT ?? '8080';
// Loopback unless told otherwise: the worker's KServe ports take no credential, and a quick start on a laptop
// or a shared host must not offer them (or the gateway) to the network. The apps' own default stays 0.0.0.0
// for containers, where the pod network is the boundary.
const gatewayHost = process.env.GATEWAY_HOST || '127.0.0.1';
const workerHost = process.env.WORKER_HOST || '127.0.0.1';
/** Where a browser on this machine reaches a server bound to `host`. */
const reachableAt = (host: string) => (host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host);
const urlHost = (host: string) => (host.includes(':') ? `[${host}]` : host);
const gatewayUrl = `http://${urlHost(reachableAt(gatewayHost))}:${gatewayPort}`;

await generateExampleRepository(modelRepository, {
  includeGenerative: true,
  includeDensenet: true,
  includeTritonExamples: true,
});

let redis: RedisHandle;
try {
  const persistDir = resolve(root, '.data/redis');
  mkdirSync(persistDir, { recursive: true });
  redis = await startRedis({ persistDir });
} catch (err) {
  process.stderr.write(`${(err as Error).message}\n${REDIS_INSTALL_HINT}\n`);
  process.exit(1);
}

// The operator's first credential: every scope, kept across restarts in .data/admin-key (mode 600).
const adminKeyFile = resolve(root, '.data/admin-key');
const adminKey =
  process.env.NVCF_BOOTSTRAP_ADMIN_KEY ||
  (existsSync(adminKeyFile)
    ? readFileSync(adminKeyFile, 'utf8').trim()
    : `nvapi-${randomBytes(32).toString('base64url')}`);
if (!process.env.NVCF_BOOTSTRAP_ADMIN_KEY) writeFileSync(adminKeyFile, `${adminKey}\n`, { mode: 0o600 });

// Signed upload and result URLs must survive a restart: the signing secret is kept beside the key.
const signingSecretFile = resolve(root, '.data/url-signing-secret');
const urlSigningSecret =
  process.env.URL_SIGNING_SECRET ||
  (existsSync(signingSecretFile)
    ? readFileSync(signingSecretFile, 'utf8').trim()
    : randomBytes(32).toString('base64url'));
if (!process.env.URL_SIGNING_SECRET) writeFileSync(signingSecretFile, `${urlSigningSecret}\n`, { mode: 0o600 });

const shared = {
  ...process.env,
  REDIS_URL: redis.url,
  MODEL_REPOSITORY: modelRepository,
  GATEWAY_HOST: gatewayHost,
  GATEWAY_PORT: gatewayPort,
  WORKER_HOST: workerHost,
};
/** The gateway's own credentials: a worker needs none of them, and what it runs must not find them in its environment. */
const GATEWAY_ONLY = ['NVCF_BOOTSTRAP_ADMIN_KEY', 'URL_SIGNING_SECRET', 'NVCF_JWT_SECRET'] as const;
const gatewayEnv = { ...shared, NVCF_BOOTSTRAP_ADMIN_KEY: adminKey, URL_SIGNING_SECRET: urlSigningSecret };
const workerEnv: NodeJS.ProcessEnv = { ...shared };
for (const name of GATEWAY_ONLY) delete workerEnv[name];
const children: ChildProcess[] = [];
const launch = (name: string, script: string, env: NodeJS.ProcessEnv) => {
  const child = spawn(process.execPath, [resolve(root, script)], { env, stdio: ['ignore', 'inherit', 'inherit'] });
  child.on('exit', (code, signal) => {
    if (!stopping) {
      process.stderr.write(`${name} exited (${signal ?? code}); stopping\n`);
      void stop(1);
    }
  });
  children.push(child);
};

let stopping = false;
async function stop(code: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  await Promise.all(
    children.map(
      (c) =>
        new Promise<void>((r) => {
          if (c.exitCode !== null || c.signalCode !== null) return r();
          c.once('exit', () => r());
          c.kill('SIGTERM');
        }),
    ),
  );
  await redis.close();
  process.exit(code);
}
process.on('SIGINT', () => void stop(0));
process.on('SIGTERM', () => void stop(0));

launch('worker', 'apps/worker/src/main.ts', workerEnv);
launch('gateway', 'apps/gateway/src/main.ts', gatewayEnv);

process.stderr.write(
  [
    '',
    `  NVCF gateway   ${gatewayUrl}   (redis: ${redis.url}, models: ${modelRepository})`,
    `  admin API key  ${adminKey}   (also in .data/admin-key; more keys: pnpm keys create --help)`,
    `  list functions curl -s -H "Authorization: Bearer $(cat .data/admin-key)" ${gatewayUrl}/v2/nvcf/functions`,
    `  worker         KServe V2 HTTP ${urlHost(workerHost)}:8000, gRPC :8001, metrics :8002`,
    '  Ctrl-C stops everything.',
    '',
  ].join('\n'),
);
