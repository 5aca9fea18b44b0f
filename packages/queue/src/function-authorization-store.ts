import { AuthorizedPartyDto, MAX_AUTHORIZED_PARTIES } from '@nvcf/protocol';
import type { Keys } from './keys.ts';
import type { RedisClient } from './redis-connection.ts';

/** An account authorized to invoke a function it does not own (NVCF API reference: AuthorizedPartyDto). */
export type AuthorizedParty = AuthorizedPartyDto;

/** Who besides its owner may invoke a function (NVCF API reference: authorized accounts). */
export interface FunctionAuthorizations {
  /** Authorized for every version (NVCF: the function's "inheritable" parties). */
  function: AuthorizedParty[];
  /** Version id → the parties authorized for that version only (the inherited ones not repeated). */
  versions: Record<string, AuthorizedParty[]>;
}

/**
 * `added`; `exists`: the party was there already (NVCF: 409); `none`: there was no set to add to (NVCF: 404);
 * `full`: the scope holds `MAX_AUTHORIZED_PARTIES` already.
 */
export type AddPartyOutcome = 'added' | 'exists' | 'none' | 'full';
/** `removed`; `absent`: not among the parties (NVCF: 400); `none`: there are no parties (NVCF: 404). */
export type RemovePartyOutcome = 'removed' | 'absent' | 'none';

/**
 * The authorized accounts of functions. `versionId` undefined addresses the function's own parties (every
 * version), a version id that version's. One hash per function holds both, so one read gives what an
 * invocation checks.
 */
export interface FunctionAuthorizationStore {
  get(functionId: string): Promise<FunctionAuthorizations>;
  /** Replaces the parties (NVCF's POST: "existing authorized accounts will be overwritten"). */
  set(functionId: string, versionId: string | undefined, parties: readonly AuthorizedParty[]): Promise<void>;
  /**
   * Adds one party to parties that exist: the function's own, or for a version its own or the inherited ones
   * (NVCF's PATCH …/add answers 404 where there are none).
   */
  add(functionId: string, versionId: string | undefined, party: AuthorizedParty): Promise<AddPartyOutcome>;
  remove(functionId: string, versionId: string | undefined, ncaId: string): Promise<RemovePartyOutcome>;
  /** Drops the function's own parties, or a version's (it was deleted, or its parties were). */
  clear(functionId: string, versionId: string | undefined): Promise<void>;
  /** Drops every party of a function (it was deleted). */
  forget(functionId: string): Promise<void>;
}

/** The hash fields of one scope begin with this: `f:` for the function's own parties, `v:<versionId>:` for a version's. */
const scopePrefix = (versionId: string | undefined) => (versionId === undefined ? 'f:' : `v:${versionId}:`);

/**
 * Replaces one scope's parties. KEYS[1] functionAuthorizations(functionId); ARGV[1] the scope's field prefix,
 * ARGV[2..] field, party JSON pairs. Returns 1.
 */
const SET = `
local fields = redis.call('HKEYS', KEYS[1])
for _, f in ipairs(fields) do
  if string.sub(f, 1, #ARGV[1]) == ARGV[1] then redis.call('HDEL', KEYS[1], f) end
end
for i = 2, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
return 1
`;

/**
 * Adds a party where some exist already. KEYS[1] functionAuthorizations(functionId); ARGV[1] the party's field,
 * ARGV[2] its JSON, ARGV[3] the most parties its scope may hold, ARGV[4] its scope's prefix, ARGV[5..] other
 * prefixes: one of ARGV[4..] must have a field. Returns 1 added, 2 there already, 0 none, 3 full.
 */
const ADD = `
local found = false
local count = 0
for _, f in ipairs(redis.call('HKEYS', KEYS[1])) do
  if string.sub(f, 1, #ARGV[4]) == ARGV[4] then count = count + 1 end
  for i = 4, #ARGV do
    if string.sub(f, 1, #ARGV[i]) == ARGV[i] then found = true end
  end
end
if not found then return 0 end
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then return 2 end
if count >= tonumber(ARGV[3]) then return 3 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1
`;

/**
 * Removes a party. KEYS[1] functionAuthorizations(functionId); ARGV[1] the party's field, ARGV[2] its scope's
 * prefix. Returns 1 removed, 2 not among the scope's parties, 0 the scope has none.
 */
const REMOVE = `
if redis.call('HDEL', KEYS[1], ARGV[1]) == 1 then return 1 end
for _, f in ipairs(redis.call('HKEYS', KEYS[1])) do
  if string.sub(f, 1, #ARGV[2]) == ARGV[2] then return 2 end
end
return 0
`;

const partyJson = (p: AuthorizedParty) =>
  JSON.stringify({ ncaId: p.ncaId, ...(p.clientId !== undefined ? { clientId: p.clientId } : {}) });

/** Parties in the order their accounts sort: a stable answer whatever order Redis keeps a hash in. */
const byAccount = (a: AuthorizedParty, b: AuthorizedParty) => a.ncaId.localeCompare(b.ncaId);

function parse(hash: Record<string, string>): FunctionAuthorizations {
  const out: FunctionAuthorizations = { function: [], versions: {} };
  for (const [field, json] of Object.entries(hash)) {
    const party = AuthorizedPartyDto.safeParse(JSON.parse(json));
    if (!party.success) continue;
    if (field.startsWith('f:')) out.function.push(party.data);
    else if (field.startsWith('v:')) {
      // Version ids are UUIDs: the field's second colon ends one.
      const versionId = field.slice(2, field.indexOf(':', 2));
      out.versions[versionId] = [...(out.versions[versionId] ?? []), party.data];
    }
  }
  out.function.sort(byAccount);
  for (const parties of Object.values(out.versions)) parties.sort(byAccount);
  return out;
}

/**
 * @example
 * const store = createFunctionAuthorizationStore(redis, keys);
 * await store.set(functionId, undefined, [{ ncaId: 'team-b' }]); // every version
 * (await store.get(functionId)).function; // [{ ncaId: 'team-b' }]
 */
export function createFunctionAuthorizationStore(redis: RedisClient, keys: Keys): FunctionAuthorizationStore {
  const key = (functionId: string) => keys.functionAuthorizations(functionId);
  const field = (versionId: string | undefined, ncaId: string) => `${scopePrefix(versionId)}${ncaId}`;
  return {
    async get(functionId) {
      return parse(await redis.hgetall(key(functionId)));
    },
    async set(functionId, versionId, parties) {
      const unique = new Map(parties.map((p) => [p.ncaId, p]));
      const pairs = [...unique.values()].flatMap((p) => [field(versionId, p.ncaId), partyJson(p)]);
      await redis.eval(SET, 1, key(functionId), scopePrefix(versionId), ...pairs);
    },
    async add(functionId, versionId, party) {
      // A version's parties may be added to where the function has some (NVCF: "inheritable").
      const prefixes = versionId === undefined ? ['f:'] : [scopePrefix(versionId), 'f:'];
      const r = await redis.eval(
        ADD,
        1,
        key(functionId),
        field(versionId, party.ncaId),
        partyJson(party),
        MAX_AUTHORIZED_PARTIES,
        ...prefixes,
      );
      return r === 1 ? 'added' : r === 2 ? 'exists' : r === 3 ? 'full' : 'none';
    },
    async remove(functionId, versionId, ncaId) {
      const r = await redis.eval(REMOVE, 1, key(functionId), field(versionId, ncaId), scopePrefix(versionId));
      return r === 1 ? 'removed' : r === 2 ? 'absent' : 'none';
    },
    async clear(functionId, versionId) {
      await redis.eval(SET, 1, key(functionId), scopePrefix(versionId));
    },
    async forget(functionId) {
      await redis.del(key(functionId));
    },
  };
}
