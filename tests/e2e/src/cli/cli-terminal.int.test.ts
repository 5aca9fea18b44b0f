/**
 * `nvcf` on a terminal (a pseudo-terminal from util-linux `script`): tables, and the progress line of an
 * invocation that stays pending for exactly as long as the test says — no worker at first, then a worker whose runs
 * of the `held` model wait at a gate the test opens.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type RunningCli, runCli, startCli, startCliInTerminal } from '@nvcf/cli/testing/cli-process';
import { bytesOf, npyFile } from '@nvcf/cli/testing/npy-file';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, createHarness, fnId, type Harness, pexec } from '../harness.ts';
import { createRunGate, HELD_WIDTH, heldRequest } from '../held-model.ts';

let h: Harness;
let env: Record<string, string>;
let gatewayUrl: string;
let dir: string;
const started: RunningCli[] = [];
const inTerminal = (args: string[]) => {
  const cli = startCliInTerminal(args, env);
  started.push(cli);
  return cli;
};

beforeAll(async () => {
  h = await createHarness({ heldModel: true });
  // Publishes the repository's functions, then leaves: requests wait in their queues until a test starts a worker.
  await (await h.worker()).close();
  gatewayUrl = (await h.gateway()).url;
  env = { NVCF_BASE_URL: gatewayUrl, NVCF_API_KEY: ADMIN_KEY };
  dir = await mkdtemp(join(tmpdir(), 'nvcf-cli-tty-'));
});
afterAll(async () => {
  for (const cli of started) if (cli.child.exitCode === null) cli.child.kill('SIGKILL');
  await h?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

/** Starts a request of `held` with a 1 s window, so it answers 202 at once: its request id. */
async function heldPending(value: number): Promise<string> {
  const res = await pexec(
    gatewayUrl,
    `/v2/nvcf/pexec/functions/${fnId('held')}`,
    heldRequest(Array(HELD_WIDTH).fill(value)),
    {
      'nvcf-poll-seconds': '1',
    },
  );
  expect(res.status).toBe(202);
  return res.headers.get('nvcf-reqid') ?? '';
}

describe('on a terminal', () => {
  it('lists as a table', async () => {
    const cli = inTerminal(['functions', 'list']);
    const { code, stdout } = await cli.exited;
    expect(code).toBe(0);
    expect(stdout).toMatch(/┌─+┬/);
    expect(stdout).toMatch(/│ NAME +│ FUNCTION ID +│ VERSION ID +│ STATUS +│/);
    expect(stdout).toMatch(new RegExp(`│ simple +│ ${fnId('simple')} │`));
    expect(stdout).not.toContain('\t');
  });

  it('shows percent, elapsed time, queue position and request while an invocation waits (nothing without a terminal); Ctrl-C stops one', async () => {
    const first = await heldPending(1);
    const second = await heldPending(2);

    // One status poll: pending, and it says so (not an error).
    const pending = await runCli(['status', first, '--json'], env);
    expect(pending.code, pending.stderr).toBe(0);
    expect(JSON.parse(pending.stdout)).toEqual({ requestId: first, status: 'pending', percent: 0 });
    expect((await runCli(['queue', 'position', second, '--json'], env)).stdout).toMatch(/"positionInQueue": 1/);

    const npy = join(dir, 'hold.npy');
    await writeFile(npy, npyFile('<f4', [1, HELD_WIDTH], bytesOf(new Float32Array(HELD_WIDTH).fill(3))));
    const waiting = inTerminal(['invoke', fnId('held'), '--input', `HOLD=@${npy}`]);
    // The first poll window on a terminal is 2 s; then the 202's request id, and the position asked for it.
    const line = await waiting.waitFor(/\d+% \| \d+s \| queued, 2 ahead \| req [0-9a-f]{8}/);
    expect(line).toMatch(/░{20} 0% \| \d+s/);

    // The same wait without a terminal: nothing on stderr, however many polls it takes.
    const piped = startCli(['invoke', fnId('held'), '--poll-seconds', '1', '--input', `HOLD=@${npy}`], env);
    started.push(piped);

    // Ctrl-C typed at the terminal aborts the SDK's call, which cancels the request: exit 130, and which one.
    const interrupted = inTerminal(['invoke', fnId('held'), '--input', `HOLD=@${npy}`]);
    await interrupted.waitFor(/req [0-9a-f]{8}/);
    interrupted.child.stdin?.write('\x03');
    const stopped = await interrupted.exited;
    expect(stopped.code).toBe(130);
    const cancelledId = /nvcf: interrupted \(request ([0-9a-f-]{36}) cancelled\)/.exec(stopped.stdout)?.[1] ?? '';
    expect(cancelledId).not.toBe('');
    const gone = await runCli(['status', cancelledId], env);
    expect(gone.code).toBe(1);
    expect(gone.stderr).toContain(`nvcf: Client Closed Request: request '${cancelledId}' was cancelled by its owner`);

    // `nvcf cancel` does the same to a request by its id; once it has its answer, a cancel is a refusal.
    const cancelled = await runCli(['cancel', second], env);
    expect(cancelled).toMatchObject({ code: 0, stdout: `cancelled request ${second}\n` });
    const again = await runCli(['cancel', second], env);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^nvcf: Conflict: /);

    // A worker comes; its runs of `held` wait at the gate until the test opens it.
    const gate = await createRunGate();
    await h.spawnWorker(gate.env, { execArgv: gate.execArgv });
    await gate.entered();
    expect(waiting.child.exitCode).toBeNull();
    await gate.open();
    const done = await waiting.exited;
    expect(done.code).toBe(0);
    // The progress line is cleared, then the answer: KServe JSON of the held model's output.
    expect(done.stdout).toMatch(
      /\{"model_name":"held",.*"outputs":\[\{"name":"OUTPUT0","datatype":"FP32","shape":\[1,4\],"data":\[3,3,3,3\]\}\]\}/,
    );

    const quiet = await piped.exited;
    expect(quiet).toMatchObject({ code: 0, stderr: '' });
    expect(JSON.parse(quiet.stdout)).toMatchObject({ outputs: [{ data: [3, 3, 3, 3] }] });

    // The first request's answer, fetched by its id with one status poll.
    const answer = await runCli(['status', first, '--poll-seconds', '30'], env);
    expect(answer.code, answer.stderr).toBe(0);
    expect(JSON.parse(answer.stdout)).toMatchObject({ outputs: [{ name: 'OUTPUT0', data: [1, 1, 1, 1] }] });
  });
});
