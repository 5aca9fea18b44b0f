import { describe, expect, it } from 'vitest';
import { apiKeyIdOf, principalKey } from './principal.ts';

describe('principalKey', () => {
  it('tells apart the same token subject in two accounts, and a token from an API key', () => {
    const token = (ncaId: string, sub: string) => principalKey({ kind: 'jwt', ncaId, subject: `token:${sub}` });
    expect(token('team-a', 'ci-job')).toBe('jwt:team-a:token:ci-job');
    expect(token('team-a', 'ci-job')).not.toBe(token('team-b', 'ci-job'));
    // An account may hold ':': it cannot pass for another account's subject.
    expect(token('a:token:x', 'y')).not.toBe(token('a', 'x:token:y'));
    const id = '6f1c2a4e-0d7b-4c1e-9a57-3b2f0e8d1c44';
    expect(principalKey({ kind: 'api-key', ncaId: 'team-a', subject: id })).toBe(`api-key:${id}`);
    expect(token('team-a', id)).not.toBe(principalKey({ kind: 'api-key', ncaId: 'team-a', subject: id }));
  });

  it('gives back the API key id of a key’s principal key only', () => {
    const id = '6f1c2a4e-0d7b-4c1e-9a57-3b2f0e8d1c44';
    expect(apiKeyIdOf(principalKey({ kind: 'api-key', ncaId: 'n', subject: id }))).toBe(id);
    expect(apiKeyIdOf(principalKey({ kind: 'jwt', ncaId: 'n', subject: `token:${id}` }))).toBeUndefined();
  });
});
