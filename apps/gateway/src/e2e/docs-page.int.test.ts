import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningGateway } from '../server.ts';
import { createHarness, type Harness } from './harness.ts';

/** Debian's chromium (`apt-get install chromium`; `bash scripts/nvcf.sh test` installs it as root), or CHROMIUM_PATH. */
const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

let h: Harness;
let gw: RunningGateway;
let browser: Browser;

beforeAll(async () => {
  h = await createHarness();
  gw = await h.gateway();
  browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox'] });
});
afterAll(async () => {
  await browser?.close();
  await h?.close();
});

describe('/docs in a browser', () => {
  it('renders the API reference from /openapi.json, loading nothing from anywhere but the gateway', async () => {
    const page = await browser.newPage();
    const elsewhere: string[] = [];
    page.on('request', (req) => {
      const url = req.url();
      if (!url.startsWith(gw.url) && !url.startsWith('data:') && !url.startsWith('blob:')) elsewhere.push(url);
    });
    const res = await page.goto(`${gw.url}/docs`);
    expect(res?.status()).toBe(200);
    // Operations of the document, rendered by Scalar's script (served by the gateway).
    await page.getByText('Invoke a function', { exact: true }).first().waitFor({ timeout: 30_000 });
    await page.getByText('Cancel a request', { exact: false }).first().waitFor({ timeout: 30_000 });
    expect(await page.title()).toBe('Self-hosted NVIDIA Cloud Functions API');
    expect(elsewhere).toEqual([]);
    await page.close();
  });
});
