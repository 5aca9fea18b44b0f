import { describe, expect, it } from 'vitest';
import { httpApiGroups } from '../http/restricted-api-middleware.ts';
import { parseRestrictedApis, unmetRestriction } from './restricted-apis.ts';

describe('parseRestrictedApis', () => {
  it('reads Triton’s <apis>:<key>=<value> form, several specs separated by ;', () => {
    const r = parseRestrictedApis(' model-repository, model-config :X-Admin=a=b:c ; inference:infer-key=v');
    expect(Object.fromEntries(r)).toEqual({
      'model-repository': { header: 'x-admin', value: 'a=b:c' },
      'model-config': { header: 'x-admin', value: 'a=b:c' },
      inference: { header: 'infer-key', value: 'v' },
    });
    expect(parseRestrictedApis('').size).toBe(0);
  });

  it.each([
    ['model-repository', /not of the form/],
    ['model-repository:key', /not of the form/],
    ['model-repository:=v', /not a valid header name/],
    ['model-repository:bad key=v', /not a valid header name/],
    ['model-repository:k=', /must not be empty/],
    ['models:k=v', /unknown API 'models'/],
    ['statistics:a=1;statistics:b=2', /named in more than one/],
  ])('refuses %j', (text, message) => {
    expect(() => parseRestrictedApis(text)).toThrow(message);
  });
});

describe('unmetRestriction', () => {
  const r = parseRestrictedApis('model-repository:k=v;statistics:s=w');
  it('is the first restricted group the request does not satisfy', () => {
    const headers: Record<string, string> = { k: 'v' };
    const read = (h: string) => headers[h];
    expect(unmetRestriction(r, ['model-repository'], read)).toBeUndefined();
    expect(unmetRestriction(r, ['health'], read)).toBeUndefined();
    expect(unmetRestriction(r, ['metadata', 'statistics'], read)).toEqual({ header: 's', value: 'w' });
    expect(unmetRestriction(r, ['model-repository'], () => 'V')).toEqual({ header: 'k', value: 'v' });
  });
});

describe('httpApiGroups', () => {
  it.each([
    ['/v2', ['metadata']],
    ['/v2/health/ready', ['health']],
    ['/v2/models/stats', ['statistics']],
    ['/v2/models/m', ['metadata']],
    ['/v2/models/m/versions/1', ['metadata']],
    ['/v2/models/m/ready', ['health']],
    ['/v2/models/m/versions/1/infer', ['inference']],
    ['/v2/models/m/config/', ['model-config']],
    ['/v2/models/m/versions/2/stats', ['statistics']],
    ['/v2/repository/index', ['model-repository']],
    ['/v2/repository/models/m/unload', ['model-repository']],
    ['/v2/repository/repo/models/m/load', ['model-repository']],
    ['/v2/systemsharedmemory/status', ['shared-memory']],
    ['/api/status/m', ['metadata', 'model-config', 'statistics']],
    ['/api/modelcontrol/unload/m', ['model-repository']],
    ['/api/infer/m/1', ['inference']],
    ['/metrics', []],
    ['/v2/models/m/other', []],
  ])('%s → %j', (path, groups) => {
    expect(httpApiGroups(path)).toEqual(groups);
  });
});
