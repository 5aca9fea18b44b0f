/** NVCF API key / token scopes (NVCF API: API key scopes). */
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
] as const;
export type Scope = (typeof SCOPES)[number];

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}
