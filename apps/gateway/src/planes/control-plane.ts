import {
  type ApiKeyStore,
  createApiKeyStore,
  createAssetStore,
  createFunctionAuthorizationStore,
  createFunctionRegistry,
  createFunctionSecretStore,
  createSecretCipher,
  type FunctionAuthorizationStore,
  type FunctionRegistry,
  type FunctionSecretStore,
} from '@nvcf/control-store';
import { SCOPES } from '@nvcf/protocol';
import { type AssetService, createAssetService } from '../assets/index.ts';
import { type Authenticator, createAuthenticator } from '../auth/authenticator.ts';
import type { GatewayConfig } from '../config.ts';
import { indexAccounts } from '../control/account-index.ts';
import { type AuthorizationService, createAuthorizationService } from '../control/authorization-service.ts';
import { type ClusterGroupService, createClusterGroupService } from '../control/cluster-group-service.ts';
import { createFunctionAccess, type FunctionAccess } from '../control/function-access.ts';
import { createFunctionService, type FunctionService } from '../control/function-service.ts';
import { createKeyService, type KeyService } from '../control/key-service.ts';
import { reencryptSecrets } from '../control/secret-rotation.ts';
import type { FunctionResolver } from '../invocation/function-resolver.ts';
import type { GatewayInfrastructure } from './gateway-infrastructure.ts';

/** Functions, their sharing, API keys, assets and secrets: the state the control plane API manages. */
export interface ControlPlane {
  registry: FunctionRegistry;
  authorizationStore: FunctionAuthorizationStore;
  /** Which account sees and manages which function. */
  access: FunctionAccess;
  /** API keys as callers manage them (`/v2/nvcf/keys`). */
  apiKeys: KeyService;
  auth: Authenticator;
  /** The worker pools, from the live workers' heartbeats. */
  clusterGroups: ClusterGroupService;
  assets: AssetService;
  secretStore: FunctionSecretStore;
  /**
   * Stops reclaiming expired assets: all the control plane runs of its own (its stores share the infrastructure's
   * Redis), so its services still answer until the surfaces have drained.
   */
  close(): void;
}

/** What the control plane's services ask of the invocation plane when a function changes. */
export interface InvocationHooks {
  /** The invocation path's cached view of functions, dropped for a function that changed. */
  resolver: Pick<FunctionResolver, 'invalidate'>;
  /** Ends a deleted version's queue, answering the requests still in it. */
  retireQueue(versionId: string): Promise<void>;
}

/** The control plane API's services: they change functions the invocation plane serves. */
export interface ControlServices {
  functions: FunctionService;
  authorizations: AuthorizationService;
}

export async function startControlPlane(infra: GatewayInfrastructure, config: GatewayConfig): Promise<ControlPlane> {
  const { redis, keys, log } = infra;
  const registry = createFunctionRegistry(redis, keys);
  const authorizationStore = createFunctionAuthorizationStore(redis, keys);
  const access = createFunctionAccess(registry, authorizationStore);
  await indexAccounts(registry, authorizationStore, log);
  const keyStore = await openKeyStore(infra, config);
  const assets = createAssetService({
    store: createAssetStore(redis, keys, { ttlSeconds: config.assetTtlSeconds }),
    objects: infra.objects,
    signingSecret: infra.signingSecret,
    maxBytes: config.assetMaxBytes,
    quotaBytes: config.assetQuotaBytes,
    quotaCount: config.assetQuotaCount,
    ...(config.publicBaseUrl ? { publicBaseUrl: config.publicBaseUrl } : {}),
  });
  const assetSweeper = assets.startSweeper(config.storageSweepMs, (err) =>
    log.warn({ err }, 'reclaiming expired assets failed'),
  );
  return {
    registry,
    authorizationStore,
    access,
    apiKeys: createKeyService(keyStore, { ncaId: config.ncaId, quotaCount: config.apiKeyQuotaCount }),
    auth: createAuthenticator({ keyStore, cacheMs: config.authCacheMs, jwt: config.jwt, ncaId: config.ncaId }),
    clusterGroups: createClusterGroupService(registry, config.ncaId),
    assets,
    secretStore: openSecretStore(infra, registry, config),
    close: () => assetSweeper.stop(),
  };
}

export function createControlServices(
  control: ControlPlane,
  invocation: InvocationHooks,
  infra: GatewayInfrastructure,
  config: GatewayConfig,
): ControlServices {
  const { registry, access, authorizationStore } = control;
  return {
    authorizations: createAuthorizationService({
      access,
      store: authorizationStore,
      onChange: (fid) => {
        invocation.resolver.invalidate(fid);
        // Workers serve a repository model to the accounts its function is shared with: they re-check at once.
        registry.notifyChanged().catch((err: unknown) => infra.log.warn({ err }, 'announcing a sharing change failed'));
      },
    }),
    functions: createFunctionService(registry, {
      onChange: (fid) => invocation.resolver.invalidate(fid),
      access,
      authorizations: authorizationStore,
      assets: control.assets,
      objects: infra.objects,
      maxModelBytes: config.assetMaxBytes,
      archiveLimits: { maxBytes: config.modelArchiveMaxBytes, maxRatio: config.modelArchiveMaxRatio },
      secrets: control.secretStore,
      quota: {
        functionsPerAccount: config.functionQuotaCount,
        versionsPerFunction: config.functionVersionQuotaCount,
      },
      retireQueue: invocation.retireQueue,
    }),
  };
}

async function openKeyStore({ redis, keys, log }: GatewayInfrastructure, config: GatewayConfig): Promise<ApiKeyStore> {
  const keyStore = createApiKeyStore(redis, keys);
  if (config.bootstrapAdminKey) {
    // Created once: a revoked bootstrap key stays revoked across restarts (set a new one to get a new admin).
    const boot = await keyStore.bootstrap({
      name: 'bootstrap-admin',
      scopes: [...SCOPES],
      secret: config.bootstrapAdminKey,
    });
    if (!boot.record || boot.record.revokedAt) {
      log.warn('NVCF_BOOTSTRAP_ADMIN_KEY was revoked; it is not created again');
    }
  }
  return keyStore;
}

/** With a previous key configured, secrets still under it are re-encrypted in the background. */
function openSecretStore(
  { redis, keys, log }: GatewayInfrastructure,
  registry: FunctionRegistry,
  config: GatewayConfig,
): FunctionSecretStore {
  const { key: secretsKey, previousKey } = config.secrets;
  const secretStore = createFunctionSecretStore(
    redis,
    keys,
    secretsKey ? createSecretCipher({ key: secretsKey, ...(previousKey ? { previousKey } : {}) }) : undefined,
  );
  if (previousKey) {
    reencryptSecrets(registry, secretStore, log).catch((err: unknown) =>
      log.warn({ err }, 'rotating function secrets to NVCF_SECRETS_KEY failed; it is tried again at the next start'),
    );
  }
  return secretStore;
}
