import { createLocalDirStore } from './local-dir-store.ts';
import type { ObjectStore } from './object-store.ts';
import { createS3Store } from './s3-store.ts';

export interface ObjectStoreConfig {
  kind: 'local' | 's3';
  /** `local`: the directory (shared by gateway and workers on one machine). */
  dir: string;
  /** `s3`: an S3-compatible service (MinIO, AWS S3), for several machines. */
  s3?: { endpoint?: string; region: string; bucket: string; accessKeyId: string; secretAccessKey: string };
}

/** The object store the configuration names: assets, function models and large results live there. */
export async function openObjectStore(cfg: ObjectStoreConfig): Promise<ObjectStore> {
  if (cfg.kind === 'local') return createLocalDirStore(cfg.dir);
  if (!cfg.s3) throw new Error('OBJECT_STORE=s3 needs S3_BUCKET, S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY');
  return createS3Store(cfg.s3);
}
