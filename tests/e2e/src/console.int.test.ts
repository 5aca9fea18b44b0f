import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { RunningGateway } from '@nvcf/gateway';
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_KEY, createHarness, type Harness } from './harness.ts';

/** Debian's chromium (`apt-get install chromium`; `bash scripts/nvcf.sh test` installs it as root), or CHROMIUM_PATH. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
/** Screenshots, kept as test artifacts (git-ignored); docs/images/console.png is one of them. */
const ARTIFACTS = join(import.meta.dirname, '..', '..', '..', 'test-results', 'console');
/** Generous: a wait ends when the page shows the state, never because time passed. */
const UI = { timeout: 30_000 };

let h: Harness;
let gw: RunningGateway;
let browser: Browser;
let page: Page | undefined;

beforeAll(async () => {
  h = await createHarness();
  gw = await h.gateway();
  // Publish the repository's models, then leave no worker: an invocation waits in its queue until the test starts one.
  await (await h.worker()).close();
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
  await mkdir(ARTIFACTS, { recursive: true });
});
afterAll(async () => {
  await page?.close();
  await browser?.close();
  await h?.close();
});

/** Opens the console in a new page and logs in with the admin key, recording requests that leave the gateway. */
async function loggedIn(elsewhere: string[]): Promise<Page> {
  const p = await browser.newPage({ viewport: { width: 1400, height: 900 } });
  page = p;
  p.on('request', (req) => {
    const url = req.url();
    if (!url.startsWith(gw.url) && !url.startsWith('data:') && !url.startsWith('blob:')) elsewhere.push(url);
  });
  await p.goto(`${gw.url}/console`);
  await p.fill('#api-key', ADMIN_KEY);
  await p.click('#login-form button[type=submit]');
  await row(p, 'simple').waitFor(UI);
  return p;
}

const row = (p: Page, name: string) => p.locator(`#functions-table tr[data-function="${name}"]`);
const tab = (p: Page, name: string) => p.locator(`nav button[data-tab="${name}"]`).click();

describe('/console in a browser', () => {
  it('logs in, creates and deploys a function, invokes it from the playground and charts its queue', async () => {
    page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const p = page;
    const elsewhere: string[] = [];
    p.on('request', (req) => {
      const url = req.url();
      if (!url.startsWith(gw.url) && !url.startsWith('data:') && !url.startsWith('blob:')) elsewhere.push(url);
    });
    const failures: string[] = [];
    p.on('pageerror', (err) => failures.push(err.message));
    // What the page's Content-Security-Policy refused (an inline style, a script from elsewhere) is a bug.
    p.on('console', (msg) => {
      if (msg.type() === 'error' && msg.text().includes('Content Security Policy')) failures.push(msg.text());
    });

    const res = await p.goto(`${gw.url}/console`);
    expect(res?.status()).toBe(200);
    // A wrong key is refused and the page stays at the login.
    await p.fill('#api-key', 'nvapi-not-a-key');
    await p.click('#login-form button[type=submit]');
    await p.locator('#login-error').getByText('Login failed').waitFor(UI);
    await p.fill('#api-key', ADMIN_KEY);
    await p.click('#login-form button[type=submit]');
    await row(p, 'simple').waitFor(UI);
    expect(await p.evaluate(() => sessionStorage.getItem('nvcf-console-key'))).toBe(ADMIN_KEY);
    await expect(row(p, 'simple').locator('td').nth(3).textContent()).resolves.toContain('INPUT0 INT32[-1,16]');

    // Create a function from the repository's `simple`, then deploy it with minInstances 0.
    await p.fill('#create-name', 'console-sum');
    await p.selectOption('#create-model', 'model-repository://simple/1');
    await p.click('#create-form button[type=submit]');
    await row(p, 'console-sum').locator('td.status-INACTIVE').waitFor(UI);
    await row(p, 'console-sum').getByRole('button', { name: 'Deploy', exact: true }).click();
    await row(p, 'console-sum').locator('td.status-DEPLOYING').waitFor(UI);

    // The live view of the version: its queue is empty.
    await row(p, 'console-sum').getByRole('button', { name: 'Live', exact: true }).click();
    await p.locator('#chart-queue .value[data-value="0"]').waitFor(UI);

    // Invoke from the playground, prefilled from the signature; no worker yet, so the request waits in the queue.
    await tab(p, 'functions');
    await row(p, 'console-sum').getByRole('button', { name: 'Invoke', exact: true }).click();
    // The playground fills the request once it has read the function list. Polled from the test: a string predicate
    // evaluated in the page is refused by the console's CSP (no 'unsafe-eval') whenever it must be evaluated twice.
    await expect.poll(() => p.inputValue('#playground-body'), UI).toContain('INPUT1');
    const request = JSON.parse(await p.inputValue('#playground-body')) as {
      inputs: { name: string; shape: number[] }[];
    };
    expect(request.inputs.map((i) => [i.name, i.shape])).toEqual([
      ['INPUT0', [1, 16]],
      ['INPUT1', [1, 16]],
    ]);
    await p.click('#playground-send');
    await tab(p, 'live');
    await p.locator('#chart-queue .value[data-value="1"]').waitFor(UI);
    await p.screenshot({ path: join(ARTIFACTS, 'live-queued.png'), fullPage: true });

    // A worker comes: the request runs, the queue drains, the throughput chart sees one answer.
    await h.worker();
    await p.locator('#chart-queue .value[data-value="0"]').waitFor(UI);
    await p.locator('#chart-throughput[data-max]:not([data-max="0"])').waitFor(UI);
    await p.screenshot({ path: join(ARTIFACTS, 'live-drained.png'), fullPage: true });

    await tab(p, 'playground');
    await p.locator('#playground-status[data-status="200"]').waitFor(UI);
    const answer = JSON.parse((await p.textContent('#playground-response')) ?? '') as {
      outputs: { name: string; data: number[] }[];
    };
    // The placeholder data: INPUT0 = INPUT1 = 1..16, so OUTPUT0 = 2..32.
    expect(answer.outputs.find((o) => o.name === 'OUTPUT0')?.data.slice(0, 3)).toEqual([2, 4, 6]);
    await expect(p.locator('#playground-headers').textContent()).resolves.toContain('fulfilled');
    await p.screenshot({ path: join(ARTIFACTS, 'playground.png'), fullPage: true });

    // What the charts are drawn from: this gateway's counters of the version, through the public API.
    const versionId = await row(p, 'console-sum').getAttribute('data-version');
    const fid = (await row(p, 'console-sum').locator('td code').first().textContent()) ?? '';
    const stats = await fetch(`${gw.url}/v2/nvcf/stats/functions/${fid}/versions/${versionId}`, {
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
    });
    expect(stats.status).toBe(200);
    expect(await stats.json()).toMatchObject({
      functionVersionId: versionId,
      queueDepth: 0,
      accepted: 1,
      finished: { '200': 1 },
      latency: { count: 1 },
    });

    await tab(p, 'functions');
    // The worker that answered serves the version; its heartbeat shows it as a live instance (refresh until then).
    const deadline = Date.now() + UI.timeout;
    while ((await row(p, 'console-sum').locator('td.instances').textContent()) !== '1') {
      if (Date.now() > deadline) throw new Error('the live instance never showed');
      const drawn = Number(await p.getAttribute('#functions-list', 'data-refreshed'));
      await p.click('#functions-refresh');
      // A list drawn after the click: the tab's own refresh may still have been in flight, so the count can pass
      // `drawn + 1` on its way. Polled from here: the page's CSP refuses a predicate evaluated as a string.
      await expect
        .poll(async () => Number(await p.getAttribute('#functions-list', 'data-refreshed')), {
          timeout: UI.timeout,
          interval: 50,
        })
        .toBeGreaterThan(drawn);
    }
    await p.screenshot({ path: join(ARTIFACTS, 'functions.png'), fullPage: true });

    expect(failures).toEqual([]);
    expect(elsewhere).toEqual([]);
    await p.close();
    page = undefined;
  });

  it('streams a generative function’s tokens, looks the request up, and manages API keys and assets', async () => {
    await h.worker();
    const elsewhere: string[] = [];
    const p = await loggedIn(elsewhere);

    // Streaming: the events of `generative` appear one by one, the last `[DONE]`.
    await tab(p, 'playground');
    const generative = await p.locator('#playground-function option', { hasText: 'generative' }).getAttribute('value');
    await p.selectOption('#playground-function', generative ?? '');
    await p.fill('#playground-body', JSON.stringify({ prompt: 'H', max_tokens: 5 }));
    await p.check('#playground-stream');
    await p.click('#playground-send');
    await p.locator('#playground-status[data-stream="ended"]').waitFor(UI);
    const events = await p.locator('#playground-events li').allTextContents();
    // A chunk per token (and one that finishes), then `[DONE]`.
    expect(events.length).toBeGreaterThanOrEqual(6);
    expect(events.at(-1)).toBe('[DONE]');
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e) as { object: string });
    expect(new Set(chunks.map((c) => c.object))).toEqual(new Set(['text_completion']));
    const reqId =
      (await p.locator('#playground-headers tr', { hasText: 'nvcf-reqid' }).locator('td').textContent()) ?? '';
    expect(reqId).toMatch(/^[0-9a-f-]{36}$/);
    await p.screenshot({ path: join(ARTIFACTS, 'playground-stream.png'), fullPage: true });

    // Request lookup: its answer was streamed, so the API no longer has it; the tab's own timings remain.
    await tab(p, 'requests');
    await p.fill('#request-id', reqId);
    await p.click('#requests form button[type=submit]');
    await p.locator('#request-result td[data-status="404"]').waitFor(UI);
    await expect(p.locator('#request-result').textContent()).resolves.toContain('generative: sent');

    // API keys: the secret is shown once; revoking marks the key.
    await tab(p, 'keys');
    await p.fill('#key-name', 'console-reader');
    await p
      .locator('#keys label.scope', { hasText: /^list_functions$/ })
      .locator('input')
      .check();
    await p.click('#keys form button[type=submit]');
    const secret = (await p.locator('#key-secret code').textContent({ timeout: UI.timeout })) ?? '';
    expect(secret).toMatch(/^nvapi-/);
    const key = p.locator('#keys-table tr[data-key="console-reader"]');
    await expect(key.locator('td').nth(2).textContent()).resolves.toBe('list_functions');
    const listed = await fetch(`${gw.url}/v2/nvcf/functions`, { headers: { authorization: `Bearer ${secret}` } });
    expect(listed.status).toBe(200);
    await p.screenshot({ path: join(ARTIFACTS, 'keys.png'), fullPage: true });
    await key.getByRole('button', { name: 'Revoke' }).click();
    await key
      .locator('td')
      .nth(5)
      .filter({ hasText: /\d{4}-/ })
      .waitFor(UI);
    expect(await p.locator('#key-secret').textContent()).toBe('');

    // A function's whole life: create, deploy, edit its description, undeploy, delete.
    await tab(p, 'functions');
    await p.fill('#create-name', 'console-life');
    await p.selectOption('#create-model', 'model-repository://simple/1');
    await p.click('#create-form button[type=submit]');
    const life = row(p, 'console-life');
    await life.locator('td.status-INACTIVE').waitFor(UI);
    await life.getByRole('button', { name: 'Deploy', exact: true }).click();
    await life.locator('td.status-DEPLOYING, td.status-ACTIVE').waitFor(UI);
    await life.locator('input').fill('sums, from the console');
    const saved = p.waitForResponse((r) => r.url().includes('/v2/nvcf/metadata/') && r.request().method() === 'PUT');
    await life.getByRole('button', { name: 'Save description' }).click();
    expect((await saved).status()).toBe(200);
    const lifeId = (await life.locator('td code').first().textContent()) ?? '';
    const lifeVersion = (await life.getAttribute('data-version')) ?? '';
    const described = await fetch(`${gw.url}/v2/nvcf/functions/${lifeId}/versions/${lifeVersion}`, {
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
    });
    expect(((await described.json()) as { function: { description: string } }).function.description).toBe(
      'sums, from the console',
    );
    await life.getByRole('button', { name: 'Undeploy', exact: true }).click();
    await life.locator('td.status-INACTIVE').waitFor(UI);
    await life.getByRole('button', { name: 'Delete', exact: true }).click();
    await life.waitFor({ state: 'detached', ...UI });
    await expect(p.locator('#functions .error').count()).resolves.toBe(0);

    // A function from an uploaded .onnx file (sent as an asset, then named by `asset://<id>`).
    await p.fill('#create-name', 'uploaded-sum');
    await p.selectOption('#create-model', '');
    await p.setInputFiles('#create-file', join(h.modelRepository, 'simple', '1', 'model.onnx'));
    await p.click('#create-form button[type=submit]');
    await row(p, 'uploaded-sum').locator('td.status-INACTIVE').waitFor(UI);
    await expect(row(p, 'uploaded-sum').locator('td').nth(3).textContent()).resolves.toContain('INPUT0 INT32');

    // Assets: an upload appears in the list.
    await tab(p, 'assets');
    await p.setInputFiles('#asset-file', {
      name: 'tensor.bin',
      mimeType: 'application/octet-stream',
      buffer: Buffer.alloc(64, 1),
    });
    await p.click('#assets form button[type=submit]');
    await p.locator('#assets-table td', { hasText: 'tensor.bin' }).waitFor(UI);

    expect(elsewhere).toEqual([]);
    await p.close();
    page = undefined;
  });

  it('is not served with GATEWAY_CONSOLE=false', async () => {
    const off = await h.gateway({ GATEWAY_CONSOLE: 'false' });
    expect((await fetch(`${off.url}/console`)).status).toBe(404);
    expect((await fetch(`${off.url}/console/main.js`)).status).toBe(404);
    expect((await fetch(`${gw.url}/console/main.js`)).status).toBe(200);
  });
});
