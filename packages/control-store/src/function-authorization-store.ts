import { AuthorizedPartyDto, MAX_AUTHORIZED_PARTIES } from '@nvcf/protocol';
import type { Keys, RedisClient } from '@nvcf/queue';

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
  /**
   * The ids of the functions with a party of account `ncaId` (for some version or all): its index, kept by every
   * change above, so a listing reads no other function's parties.
   */
  sharedWith(ncaId: string): Promise<string[]>;
  /**
   * Indexes the parties of these functions: hashes written by a release before the index existed. Idempotent; a
   * gateway runs it at start.
   */
  indexAccounts(functionIds: readonly string[]): Promise<void>;
}

/** The hash fields of one scope begin with this: `f:` for the function's own parties, `v:<versionId>:` for a version's. */
const scopePrefix = (versionId: string | undefined) => (versionId === undefined ? 'f:' : `v:${versionId}:`);

/**
 * Every script below ends by bringing the shared-function index (`accountSharedFunctions`) of the accounts it
 * touched in line with the hash: an account holding a party field of the function has its id, one holding none has
 * not. The index keys are built from `accountKeyPrefix` (ARGV[1]), in `{fn}` like the hash. ARGV[2] is the function
 * id. `touch(field)` notes a field's account; `reindex()` writes the index of every account noted.
 */
const REINDEX = `
local touched = {}
local function account(f)
  if string.sub(f, 1, 2) == 'f:' then return string.sub(f, 3) end
  local colon = string.find(f, ':', 3, true)
  if colon then return string.sub(f, colon + 1) end
  return nil
end
local function touch(f)
  local a = account(f)
  if a then touched[a] = true end
end
local function reindex()
  local held = {}
  for _, f in ipairs(redis.call('HKEYS', KEYS[1])) do
    local a = account(f)
    if a then held[a] = true end
  end
  for a in pairs(touched) do
    local key = ARGV[1] .. a .. ':shared'
    if held[a] then redis.call('SADD', key, ARGV[2]) else redis.call('SREM', key, ARGV[2]) end
  end
end
`;

/**
 * Replaces one scope's parties. KEYS[1] functionAuthorizations(functionId); ARGV[1] accountKeyPrefix, ARGV[2] the
 * function id, ARGV[3] the scope's field prefix, ARGV[4..] field, party JSON pairs. Returns 1.
 */
const SET = `${REINDEX}
local fields = redis.call('HKEYS', KEYS[1])
for _, f in ipairs(fields) do
  if string.sub(f, 1, #ARGV[3]) == ARGV[3] then
    redis.call('HDEL', KEYS[1], f)
    touch(f)
  end
end
for i = 4, #ARGV, 2 do
  redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1])
  touch(ARGV[i])
end
reindex()
return 1
`;

/**
 * Adds a party where some exist already. KEYS[1] functionAuthorizations(functionId); ARGV[1] accountKeyPrefix,
 * ARGV[2] the function id, ARGV[3] the party's field, ARGV[4] its JSON, ARGV[5] the most parties its scope may hold,
 * ARGV[6] its scope's prefix, ARGV[7..] other prefixes: one of ARGV[6..] must have a field. Returns 1 added, 2 there
 * already, 0 none, 3 full.
 */
const ADD = `${REINDEX}
local found = false
local count = 0
for _, f in ipairs(redis.call('HKEYS', KEYS[1])) do
  if string.sub(f, 1, #ARGV[6]) == ARGV[6] then count = count + 1 end
  for i = 6, #ARGV do
    if string.sub(f, 1, #ARGV[i]) == ARGV[i] then found = true end
  end
end
if not found then return 0 end
if redis.call('HEXISTS', KEYS[1], ARGV[3]) == 1 then return 2 end
if count >= tonumber(ARGV[5]) then return 3 end
redis.call('HSET', KEYS[1], ARGV[3], ARGV[4])
touch(ARGV[3])
reindex()
return 1
`;

/**
 * Removes a party. KEYS[1] functionAuthorizations(functionId); ARGV[1] accountKeyPrefix, ARGV[2] the function id,
 * ARGV[3] the party's field, ARGV[4] its scope's prefix. Returns 1 removed, 2 not among the scope's parties, 0 the
 * scope has none.
 */
const REMOVE = `${REINDEX}
if redis.call('HDEL', KEYS[1], ARGV[3]) == 1 then
  touch(ARGV[3])
  reindex()
  return 1
end
for _, f in ipairs(redis.call('HKEYS', KEYS[1])) do
  if string.sub(f, 1, #ARGV[4]) == ARGV[4] then return 2 end
end
return 0
`;

/**
 * Drops every party of a function. KEYS[1] functionAuthorizations(functionId); ARGV[1] accountKeyPrefix, ARGV[2]
 * the function id. Returns 1.
 */
const FORGET = `${REINDEX}
for _, f in ipairs(redis.call('HKEYS', KEYS[1])) do touch(f) end
redis.call('DEL', KEYS[1])
reindex()
return 1
`;

/**
 * Adds each function of a hash's parties to their accounts' indexes: hashes a release before the index wrote.
 * KEYS[1] functionAuthorizations(functionId); ARGV[1] accountKeyPrefix, ARGV[2] the function id. Returns 1.
 */
const INDEX = `${REINDEX}
for _, f in ipairs(redis.call('HKEYS', KEYS[1])) do touch(f) end
reindex()
return 1
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
  /** A script's key and its first two arguments (what REINDEX needs). */
  const on = (functionId: string) => [1, key(functionId), keys.accountKeyPrefix, functionId] as const;
  return {
    async get(functionId) {
      return parse(await redis.hgetall(key(functionId)));
    },
    async set(functionId, versionId, parties) {
      const unique = new Map(parties.map((p) => [p.ncaId, p]));
      const pairs = [...unique.values()].flatMap((p) => [field(versionId, p.ncaId), partyJson(p)]);
      await redis.eval(SET, ...on(functionId), scopePrefix(versionId), ...pairs);
    },
    async add(functionId, versionId, party) {
      // A version's parties may be added to where the function has some (NVCF: "inheritable").
      const prefixes = versionId === undefined ? ['f:'] : [scopePrefix(versionId), 'f:'];
      const r = await redis.eval(
        ADD,
        ...on(functionId),
        field(versionId, party.ncaId),
        partyJson(party),
        MAX_AUTHORIZED_PARTIES,
        ...prefixes,
      );
      return r === 1 ? 'added' : r === 2 ? 'exists' : r === 3 ? 'full' : 'none';
    },
    async remove(functionId, versionId, ncaId) {
      const r = await redis.eval(REMOVE, ...on(functionId), field(versionId, ncaId), scopePrefix(versionId));
      return r === 1 ? 'removed' : r === 2 ? 'absent' : 'none';
    },
    async clear(functionId, versionId) {
      await redis.eval(SET, ...on(functionId), scopePrefix(versionId));
    },
    async forget(functionId) {
      await redis.eval(FORGET, ...on(functionId));
    },
    async sharedWith(ncaId) {
      return (await redis.smembers(keys.accountSharedFunctions(ncaId))).sort();
    },
    async indexAccounts(functionIds) {
      // Each batch sent in one tick leaves in one write (auto-pipelining); batches bound what waits at once.
      for (let i = 0; i < functionIds.length; i += 500) {
        await Promise.all(functionIds.slice(i, i + 500).map((id) => redis.eval(INDEX, ...on(id))));
      }
    },
  };
}
