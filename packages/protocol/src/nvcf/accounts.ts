import { z } from 'zod';

/**
 * An NVIDIA Cloud Account (NCA) id, as this gateway accepts one: 1–128 visible ASCII characters (NVCF's document
 * types it a plain string; NGC's ids are base64url-like). Functions, API keys and authorizations belong to one.
 */
export const NCA_ID_PATTERN = /^[\x21-\x7e]{1,128}$/;

const required = (expected: string) => (issue: { input?: unknown }) =>
  issue.input === undefined ? 'is required' : `must be ${expected}`;

/** An NCA id (`NCA_ID_PATTERN`). */
export const NcaId = z
  .string({ error: required('a string') })
  .regex(NCA_ID_PATTERN, 'must be 1–128 visible ASCII characters (an NCA id)');

/**
 * A party authorized to invoke a function (NVCF API reference: AuthorizedPartyDto): an account. `clientId` (the
 * `sub` of a JWT) is deprecated in NVCF's document ("should not be specified anymore"): kept as given, never
 * checked.
 */
export const AuthorizedPartyDto = z.object({
  ncaId: NcaId.describe('NVIDIA Cloud Account authorized to invoke the function'),
  clientId: z
    .string({ error: 'must be a string' })
    .max(256, 'must be at most 256 characters')
    .optional()
    .meta({ deprecated: true })
    .describe("Client Id -- 'sub' claim in the JWT. This field should not be specified anymore."),
});
export type AuthorizedPartyDto = z.infer<typeof AuthorizedPartyDto>;

/** Most parties one function or version may have: a bound on what every invocation's check reads. */
export const MAX_AUTHORIZED_PARTIES = 1000;
