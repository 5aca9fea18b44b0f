import type { RunningGateway } from '@nvcf/gateway';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
    const violations: string[] = [];
    page.on('console', (msg) => {
      if (/Content Security Policy/i.test(msg.text())) violations.push(msg.text());
    });
    const res = await page.goto(`${gw.url}/docs`);
    expect(res?.status()).toBe(200);
    // Operations of the document, rendered by Scalar's script (served by the gateway).
    await page.getByText('Invoke a function', { exact: true }).first().waitFor({ timeout: 30_000 });
    await page.getByText('Cancel a request', { exact: false }).first().waitFor({ timeout: 30_000 });
    expect(await page.title()).toBe('Self-hosted NVIDIA Cloud Functions API');
    expect(elsewhere).toEqual([]);
    // It renders under its own strict policy: nothing it needs is refused.
    expect(violations).toEqual([]);
    await page.close();
  });

  it('is served with a strict Content-Security-Policy and may not be framed', async () => {
    for (const path of ['/docs', '/docs/scalar.js']) {
      const res = await fetch(`${gw.url}${path}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
      await res.arrayBuffer();
    }
    const csp = (await fetch(`${gw.url}/docs`)).headers.get('content-security-policy') ?? '';
    const directives = new Map(
      csp.split(';').map((d) => {
        const [name = '', ...values] = d.trim().split(/\s+/);
        return [name, values] as const;
      }),
    );
    expect(directives.get('frame-ancestors')).toEqual(["'none'"]);
    expect(directives.get('default-src')).toEqual(["'self'"]);
    expect(directives.get('object-src')).toEqual(["'none'"]);
    const scripts = directives.get('script-src') ?? [];
    expect(scripts).toContain("'self'");
    // Inline scripts run by hash only: never 'unsafe-inline' or 'unsafe-eval' for scripts.
    expect(scripts.filter((s) => !s.startsWith("'sha256-"))).toEqual(["'self'"]);

    // A page elsewhere that frames the reference gets nothing rendered.
    const page = await browser.newPage();
    const blocked: string[] = [];
    page.on('console', (msg) => {
      if (/frame-ancestors|Refused to (display|frame)/i.test(msg.text())) blocked.push(msg.text());
    });
    await page.setContent(`<iframe src="${gw.url}/docs" width="800" height="600"></iframe>`);
    await expect.poll(() => blocked.length, { timeout: 30_000 }).toBeGreaterThan(0);
    await page.close();
  });
});
