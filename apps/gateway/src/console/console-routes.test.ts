import { SCOPES } from '@nvcf/protocol';
import { describe, expect, it } from 'vitest';
import { CONSOLE_PATH, consoleRoutes } from './console-routes.ts';

const app = consoleRoutes();

describe('console routes', () => {
  it('serve the page without a credential, allowed to load and call nothing but its own origin', async () => {
    const page = await app.request(CONSOLE_PATH);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/^text\/html/);
    const csp = page.headers.get('content-security-policy') ?? '';
    for (const directive of ["default-src 'self'", "script-src 'self'", "connect-src 'self'"]) {
      expect(csp).toContain(directive);
    }
    const html = await page.text();
    expect(html).toContain('/console/main.js');
    // Every script and style sheet the page names is local.
    expect(html).not.toMatch(/(src|href)="(https?:)?\/\//);
  });

  it('serve its modules and style sheet with their types', async () => {
    const js = await app.request(`${CONSOLE_PATH}/main.js`);
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toMatch(/^text\/javascript/);
    expect(await js.text()).toContain("from './api.js'");
    const css = await app.request(`${CONSOLE_PATH}/console.css`);
    expect(css.headers.get('content-type')).toMatch(/^text\/css/);
  });

  it('serve the key form’s scope list made from the gateway’s own, as a module', async () => {
    const res = await app.request(`${CONSOLE_PATH}/scopes.js`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/javascript/);
    const text = await res.text();
    const listed = JSON.parse(text.slice(text.indexOf('['), text.lastIndexOf(']') + 1)) as string[];
    expect(listed).toEqual([...SCOPES]);
    expect(text).toMatch(/^export const SCOPES = \[/);
  });

  it('serve nothing outside the console directory, nor files it does not have', async () => {
    for (const path of [
      '/console/missing.js',
      '/console/..%2Fpackage.json',
      '/console/../src/app.ts',
      '/console/x.ts',
    ]) {
      expect((await app.request(path)).status, path).toBe(404);
    }
  });
});
