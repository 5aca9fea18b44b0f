/**
 * The whole test suite as CI runs it: typecheck, lint, the compose-file check, then vitest. Ends with the
 * plain line `N passed, N failed` (checks count one each, plus every vitest test) and exits non-zero on
 * any failure.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

interface Tally {
  passed: number;
  failed: number;
}
const tally: Tally = { passed: 0, failed: 0 };

function run(label: string, cmd: string, args: string[], env: NodeJS.ProcessEnv = process.env): number {
  process.stdout.write(`\n› ${label}: ${cmd} ${args.join(' ')}\n`);
  const r = spawnSync(cmd, args, { stdio: 'inherit', env });
  return r.status ?? 1;
}

function check(label: string, cmd: string, args: string[], env?: NodeJS.ProcessEnv): void {
  const ok = run(label, cmd, args, env) === 0;
  if (ok) tally.passed++;
  else tally.failed++;
  process.stdout.write(`${ok ? '✓' : '✗'} ${label}\n`);
}

check('typecheck', 'pnpm', ['exec', 'turbo', 'run', 'typecheck', '--continue', '--output-logs=errors-only']);
check('lint', 'pnpm', ['exec', 'biome', 'check', '.']);
if (spawnSync('docker-compose', ['version'], { stdio: 'ignore' }).status === 0) {
  // The compose file takes its secrets from .env; it is checked with stand-ins, and must refuse to
  // start without them (no secret is hard-coded in it).
  const secrets = {
    S3_SECRET_ACCESS_KEY: 'check-stand-in-secret-0123456789abcdef',
    URL_SIGNING_SECRET: 'check-stand-in-secret-0123456789abcdef',
    NVCF_BOOTSTRAP_ADMIN_KEY: 'check-stand-in-secret-0123456789abcdef',
  };
  // An empty env file: a developer's own .env must not make the check pass.
  const noEnvFile = join(mkdtempSync(join(tmpdir(), 'nvcf-compose-')), 'empty.env');
  writeFileSync(noEnvFile, '');
  // `--profile gpu` and `--profile observability`: the GPU worker's and the monitoring services are checked too.
  const profiles = ['--profile', 'gpu', '--profile', 'observability'];
  const compose = ['-f', 'docker-compose.yml', '--env-file', noEnvFile, ...profiles, 'config', '-q'];
  check('docker-compose.yml', 'docker-compose', compose, { ...process.env, ...secrets });
  const without = spawnSync('docker-compose', compose, { stdio: 'pipe', env: { PATH: process.env.PATH ?? '' } });
  const refused =
    without.status !== 0 &&
    /S3_SECRET_ACCESS_KEY|URL_SIGNING_SECRET|NVCF_BOOTSTRAP_ADMIN_KEY/.test(String(without.stderr));
  if (refused) tally.passed++;
  else tally.failed++;
  process.stdout.write(`${refused ? '✓' : '✗'} docker-compose.yml refuses to start without its secrets\n`);
} else {
  tally.failed++;
  process.stdout.write('✗ docker-compose.yml: no docker-compose to validate it (apt-get install docker-compose)\n');
}

const out = join(mkdtempSync(join(tmpdir(), 'nvcf-vitest-')), 'results.json');
const extra = process.argv.slice(2);
const status = run('tests', 'pnpm', [
  'exec',
  'vitest',
  'run',
  '--reporter=default',
  '--reporter=json',
  `--outputFile.json=${out}`,
  ...extra,
]);
try {
  const results = JSON.parse(readFileSync(out, 'utf8')) as {
    numPassedTests: number;
    numFailedTests: number;
    numFailedTestSuites: number;
  };
  tally.passed += results.numPassedTests;
  tally.failed += results.numFailedTests + results.numFailedTestSuites;
  if (status !== 0 && results.numFailedTests + results.numFailedTestSuites === 0) tally.failed++;
} catch {
  tally.failed++;
  process.stdout.write('✗ vitest wrote no results\n');
}

process.stdout.write(`\n${tally.passed} passed, ${tally.failed} failed\n`);
process.exit(tally.failed === 0 ? 0 : 1);
