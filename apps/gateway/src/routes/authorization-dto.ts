import { MAX_AUTHORIZED_PARTIES, AuthorizedPartyDto as Party } from '@nvcf/protocol';
import { z } from 'zod';
import { uuidString } from '../http/openapi-schemas.ts';

/**
 * The bodies of the authorization routes, under NVCF's component names and with every field and constraint of
 * NVCF's document (NVCF API reference: authorized accounts): AuthorizedPartyDto (`ncaId` required, `clientId`
 * deprecated), AuthorizedPartiesRequest, PatchAuthorizedPartyRequest, AuthorizedPartiesByFunctionDto,
 * AuthorizedPartiesResponse, ListAuthorizedPartiesResponse. Ours adds bounds: an NCA id's characters and length,
 * at most `MAX_AUTHORIZED_PARTIES` parties.
 */
const required = (expected: string) => (issue: { input?: unknown }) =>
  issue.input === undefined ? 'is required' : `must be ${expected}`;

export const AuthorizedPartyDto = z.object(Party.shape, { error: required('an object {"ncaId"}') }).meta({
  id: 'AuthorizedPartyDto',
  description: 'Data Transfer Object(DTO) representing an authorized party.',
});

export const AuthorizedPartiesRequest = z
  .object(
    {
      authorizedParties: z
        .array(AuthorizedPartyDto, { error: required('an array of authorized parties') })
        .max(MAX_AUTHORIZED_PARTIES, `must hold at most ${MAX_AUTHORIZED_PARTIES} parties`)
        .describe('Parties authorized to invoke function'),
    },
    { error: 'the body must be a JSON object {"authorizedParties": [{"ncaId"}]}' },
  )
  .meta({
    id: 'AuthorizedPartiesRequest',
    description:
      'Request to associated authorized parties for a specific version or all versions of a function: they replace ' +
      'the existing ones.',
  });

export const PatchAuthorizedPartyRequest = z
  .object(
    { authorizedParty: AuthorizedPartyDto },
    { error: 'the body must be a JSON object {"authorizedParty": {"ncaId"}}' },
  )
  .meta({
    id: 'PatchAuthorizedPartyRequest',
    description: 'Request payload to associate/disassociate authorized party with function',
  });

const AuthorizedPartiesByFunctionDto = z
  .object({
    id: uuidString().describe('Function id'),
    ncaId: z.string().describe('NVIDIA Cloud Account Id (the function’s owner)'),
    versionId: uuidString().optional().describe('Function version id'),
    authorizedParties: z
      .array(AuthorizedPartyDto)
      .describe(
        'Authorized parties allowed to invoke the function: for the function, its own (which every version ' +
          'inherits); for a version, its own and the inherited ones.',
      ),
  })
  .meta({
    id: 'AuthorizedPartiesByFunctionDto',
    description: 'Data Transfer Object(DTO) representing a function with authorized accounts',
  });

export const AuthorizedPartiesResponse = z
  .object({ function: AuthorizedPartiesByFunctionDto })
  .meta({ id: 'AuthorizedPartiesResponse', description: 'Parties authorized to invoke function' });

export const ListAuthorizedPartiesResponse = z
  .object({
    functions: z
      .array(AuthorizedPartiesByFunctionDto)
      .describe('Functions with authorized parties and other details: one per version'),
  })
  .meta({ id: 'ListAuthorizedPartiesResponse', description: 'Parties authorized to invoke function' });
