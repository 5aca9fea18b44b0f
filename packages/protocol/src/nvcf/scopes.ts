/**
 * NVCF API key / token scopes (NVCF API: API key scopes; `update_secrets`: updateSecrets), and `manage_keys` (ours:
 * the gateway's `/v2/nvcf/keys` routes). The bootstrap admin key holds every one, a new one included from the first
 * start of a release that adds it.
 */
export const SCOPES = [
  'invoke_function',
  'list_functions',
  'list_functions_details',
  'queue_details',
  'register_function',
  'update_function',
  'delete_function',
  'deploy_function',
  'authorize_clients',
  'list_cluster_groups',
  'update_secrets',
  'manage_keys',
] as const;
export type Scope = (typeof SCOPES)[number];

/**
 * NVCF's own scopes: holding every one (with no function restriction) makes an operator who may read anyone's
 * requests. `manage_keys` and `update_secrets` are not among them, so keys made as admins before they existed
 * stay admins.
 */
export const NVCF_SCOPES: readonly Scope[] = SCOPES.filter((s) => s !== 'manage_keys' && s !== 'update_secrets');

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}
