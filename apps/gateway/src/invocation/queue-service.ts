import type { FunctionRegistry } from '@nvcf/control-store';
import { AppError, type FunctionStatus, functionStatus } from '@nvcf/protocol';
import type { InvocationProducer, RequestStore } from '@nvcf/queue';
import type { Principal } from '../auth/principal.ts';
import type { FunctionAccess } from '../control/function-access.ts';
import type { RequestAccessCheck } from './request-access.ts';

/** One version's queue as a caller's account sees it. */
export interface VersionQueue {
  versionId: string;
  name: string;
  /** From its deployment and its live workers. */
  status: FunctionStatus;
  /** Waiting plus running requests (all gateways). */
  depth: number;
}

/** Where a queued request stands. */
export interface QueuePosition {
  functionId: string;
  versionId: string;
  /** Requests ahead of it; 0 once a worker has it. Not capped: the API caps what it reports. */
  position: number;
}

/** The invocation queues read for callers: depths, live workers and a request's position. */
export interface QueueService {
  /**
   * The queue of each version of `functionId` account `ncaId` sees (only `versionId`'s when given), oldest first;
   * NOT_FOUND when it sees none.
   */
  versionQueues(ncaId: string, functionId: string, versionId?: string): Promise<VersionQueue[]>;
  /** The depth of a version's queue, read by the function's owner account only (NOT_FOUND, PERMISSION_DENIED). */
  ownedVersionDepth(ncaId: string, functionId: string, versionId: string): Promise<number>;
  /** A request's place in its queue; NOT_FOUND when unknown, not the caller's, or no longer queued. */
  position(principal: Principal, requestId: string): Promise<QueuePosition>;
}

export interface QueueServiceDeps {
  /** The versions a caller's account may see (its own, or shared with it), and who owns them. */
  access: Pick<FunctionAccess, 'visibleVersions' | 'requireOwner'>;
  workers: Pick<FunctionRegistry, 'liveWorkers'>;
  producer: Pick<InvocationProducer, 'depth' | 'position'>;
  store: Pick<RequestStore, 'owner'>;
  /** Who may read a request's position. */
  requestAccess: RequestAccessCheck;
}

export function createQueueService(deps: QueueServiceDeps): QueueService {
  return {
    async versionQueues(ncaId, functionId, versionId) {
      const visible = await deps.access.visibleVersions(ncaId, functionId);
      const versions = visible.filter((v) => !versionId || v.versionId === versionId);
      if (versions.length === 0) {
        throw new AppError(
          'NOT_FOUND',
          versionId
            ? `Function '${functionId}' version '${versionId}' not found`
            : `Function '${functionId}' not found`,
        );
      }
      const live = await deps.workers.liveWorkers(versions.map((v) => v.versionId));
      return Promise.all(
        versions.map(async (v, i) => ({
          versionId: v.versionId,
          name: v.name,
          status: functionStatus(v.deployment, live[i]?.length ?? 0),
          depth: await deps.producer.depth(v.versionId),
        })),
      );
    },

    async ownedVersionDepth(ncaId, functionId, versionId) {
      // Everyone's traffic: the owner's to read, not the accounts it shared the function with.
      const versions = await deps.access.requireOwner(ncaId, functionId, versionId);
      const known = versions.some((v) => v.versionId === versionId);
      if (!known) throw new AppError('NOT_FOUND', `Function '${functionId}' version '${versionId}' not found`);
      return deps.producer.depth(versionId);
    },

    async position(principal, requestId) {
      const owner = await deps.store.owner(requestId);
      // Someone else's request is answered as an unknown one.
      if (!owner || !(await deps.requestAccess(principal, { requestId, ...owner }))) {
        throw new AppError('NOT_FOUND', `Request '${requestId}' not found`);
      }
      const position = await deps.producer.position(owner.versionId, requestId);
      if (position === undefined) throw new AppError('NOT_FOUND', `Request '${requestId}' is no longer queued`);
      return { functionId: owner.functionId, versionId: owner.versionId, position };
    },
  };
}
