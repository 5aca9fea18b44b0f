import { type AssetStore, assetObjectKey } from '@nvcf/control-store';
import type { ObjectStore } from '@nvcf/storage';
import type { AssetService } from './asset-service.ts';

export type AssetSweeper = Pick<AssetService, 'sweepExpired' | 'startSweeper'>;

/** Expired assets' bytes: their records expire in Redis on their own, their objects are removed here. */
export function createAssetSweeper(deps: { store: AssetStore; objects: ObjectStore; now: () => number }): AssetSweeper {
  const { store, objects, now } = deps;
  const sweepExpired = async (limit = 100) => {
    const ids = await store.expired(limit, now());
    if (ids.length === 0) return 0;
    // A record Redis still holds (clock skew) is left for a later sweep.
    const records = await store.getMany(ids);
    const gone = ids.filter((_, i) => records[i] === undefined);
    for (const id of gone) await objects.delete(assetObjectKey(id));
    await store.forgetExpired(gone);
    return gone.length;
  };
  return {
    sweepExpired,
    startSweeper(intervalMs, onError) {
      let running = false;
      const timer = setInterval(() => {
        if (running) return;
        running = true;
        sweepExpired()
          .catch(onError)
          .finally(() => {
            running = false;
          });
      }, intervalMs);
      timer.unref();
      return { stop: () => clearInterval(timer) };
    },
  };
}
