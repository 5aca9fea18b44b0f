import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { corsHeaders } from './cors-headers.ts';

function app(): Hono {
  const a = new Hono();
  a.use(corsHeaders({ exposeHeaders: ['nvcf-reqid', 'location'], maxAge: 600 }));
  a.post('/json', (c) => c.json({ ok: true }, 200, { 'nvcf-reqid': 'r1' }));
  a.get('/redirect', () => Response.redirect('http://example.test/elsewhere', 302));
  a.get('/boom', () => {
    throw new Error('boom');
  });
  a.onError((_err, c) => c.json({ title: 'failed' }, 500));
  return a;
}

describe('corsHeaders', () => {
  it('adds the headers to a route answer and keeps the route headers', async () => {
    const res = await app().request('/json', { method: 'POST', headers: { origin: 'http://ui.test' } });
    expect(res.status).toBe(200);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-expose-headers')).toBe('nvcf-reqid,location');
    expect(res.headers.get('nvcf-reqid')).toBe('r1');
    expect(await res.json()).toEqual({ ok: true });
  });

  it('answers a preflight with the methods, the asked headers and the max age', async () => {
    const res = await app().request('/json', {
      method: 'OPTIONS',
      headers: {
        origin: 'http://ui.test',
        'access-control-request-method': 'POST',
        'access-control-request-headers': 'authorization, content-type',
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-max-age')).toBe('600');
    expect(res.headers.get('access-control-allow-methods')).toContain('POST');
    expect(res.headers.get('access-control-allow-headers')).toBe('authorization,content-type');
  });

  it('adds them to a response whose headers are immutable', async () => {
    const res = await app().request('/redirect');
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('http://example.test/elsewhere');
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
  });

  it('adds them to an error answer', async () => {
    const res = await app().request('/boom');
    expect(res.status).toBe(500);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
  });
});
