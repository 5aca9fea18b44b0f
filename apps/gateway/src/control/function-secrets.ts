import type { FunctionSecretStore, SecretValues } from '@nvcf/control-store';
import { AppError, type SecretDto } from '@nvcf/protocol';

/** A request's secrets (names already checked unique and well-formed at the edge) as name → value. */
export function secretValuesOf(secrets: readonly SecretDto[] | undefined): SecretValues {
  return Object.fromEntries((secrets ?? []).map((s) => [s.name, s.value]));
}

/**
 * Refuses secrets that could not be kept or used, with why: a model function has no server to hand them to (only a
 * container function's server gets them, README: Secrets), and without `NVCF_SECRETS_KEY` they could only be
 * stored in plaintext, which this product never does (NVCF behaviour: Secrets). An empty set always passes (it
 * stores nothing).
 *
 * @throws AppError INVALID_ARGUMENT
 */
export function checkSecretsAccepted(
  store: FunctionSecretStore,
  fn: { container?: unknown },
  secrets: SecretValues,
): void {
  if (Object.keys(secrets).length === 0) return;
  if (!fn.container) {
    throw new AppError(
      'INVALID_ARGUMENT',
      "Invalid request: 'secrets' are handed to a container function's server; a model function has none to receive them",
    );
  }
  if (!store.enabled) {
    throw new AppError(
      'INVALID_ARGUMENT',
      "Invalid request: 'secrets' cannot be stored: this deployment has no NVCF_SECRETS_KEY (its operator sets one; README: Secrets)",
    );
  }
}
