import type { Metadata } from '@grpc/grpc-js';
import { AppError } from '@nvcf/protocol';
import type { Authenticator } from '../auth/authenticator.ts';
import { type Principal, requireFunction, requireScopes } from '../auth/principal.ts';
import { forwardedHeaders } from '../invocation/forwarded-headers.ts';
import { uuidParam } from '../invocation/uuid-param.ts';

/** Who calls which function: what every RPC of the gateway's gRPC port establishes first. */
export interface GrpcCaller {
  principal: Principal;
  functionId: string;
  /** `function-version-id`: pins the version; absent, the resolver picks one (as pexec does). */
  versionId?: string;
}

/** Metadata keys the gateway consumes; never forwarded to the function. */
const OWN_KEYS = new Set(['authorization', 'function-id', 'function-version-id']);

/** The first text value of a metadata key (binary `-bin` keys never match: the names here are text). */
function text(metadata: Metadata, key: string): string | undefined {
  const value = metadata.get(key)[0];
  return typeof value === 'string' ? value : undefined;
}

/**
 * Authenticates a call from its metadata and names its function (as NVCF gRPC invocation does), in pexec's order:
 * credential (UNAUTHENTICATED), scope `invoke_function` (PERMISSION_DENIED), `function-id` present and a
 * UUID (INVALID_ARGUMENT), the credential may use that function (PERMISSION_DENIED). Whether the
 * function exists is the resolver's business (NOT_FOUND).
 */
export async function authorizeCall(auth: Authenticator, metadata: Metadata): Promise<GrpcCaller> {
  const principal = await auth.authenticate(text(metadata, 'authorization'));
  requireScopes(principal, ['invoke_function']);
  const functionId = text(metadata, 'function-id')?.trim();
  if (!functionId) throw new AppError('INVALID_ARGUMENT', "metadata 'function-id' is required");
  const caller: GrpcCaller = { principal, functionId: uuidParam('function-id', functionId) };
  requireFunction(principal, caller.functionId);
  const versionId = text(metadata, 'function-version-id')?.trim();
  if (versionId) caller.versionId = uuidParam('function-version-id', versionId);
  return caller;
}

/**
 * The call's custom metadata as the headers a function may read, by pexec's rules (credentials,
 * hop-by-hop names and `nvcf-*` dropped), less gRPC's own `grpc-*` keys, binary keys and the routing keys.
 */
export function metadataHeaders(metadata: Metadata): Record<string, string> {
  const headers = new Headers();
  for (const [key, values] of Object.entries(metadata.getMap())) {
    if (typeof values !== 'string' || OWN_KEYS.has(key) || key.startsWith('grpc-') || key.endsWith('-bin')) continue;
    try {
      headers.set(key, values);
    } catch {
      // A value fetch's Headers refuses is not worth failing the call over: it is not forwarded.
    }
  }
  return forwardedHeaders(headers);
}
