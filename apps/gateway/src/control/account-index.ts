import type { FunctionAuthorizationStore, FunctionRegistry } from '@nvcf/control-store';
import type { Logger } from '@nvcf/service-kit';

/**
 * Brings the per-account indexes (the functions each account owns, those shared with it) up to what Redis holds:
 * a release before them stored functions and shared them without. Listing and the function quota read only the
 * indexes, so this runs before the gateway listens; it is idempotent, and every later change keeps them in step.
 * A failure is logged, not fatal: the next start tries again, and until then an unindexed function is missing from
 * its account's listing (never from another's).
 */
export async function indexAccounts(
  registry: Pick<FunctionRegistry, 'indexAccounts'>,
  authorizations: Pick<FunctionAuthorizationStore, 'indexAccounts'>,
  log: Logger,
): Promise<void> {
  try {
    const functionIds = await registry.indexAccounts();
    await authorizations.indexAccounts(functionIds);
  } catch (err) {
    log.warn({ err }, 'indexing functions by account failed; it is tried again at the next start');
  }
}
