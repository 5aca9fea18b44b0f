import { openAsBlob } from 'node:fs';
import { extname } from 'node:path';
import type { AssetSummary } from '@nvcf/client';
import type { Command } from 'commander';
import { contextFor } from '../context.ts';
import type { Column } from '../output.ts';

const assetColumns: readonly Column<AssetSummary>[] = [
  { header: 'ASSET ID', value: (a) => a.assetId },
  { header: 'CONTENT TYPE', value: (a) => a.contentType },
  { header: 'DESCRIPTION', value: (a) => a.description },
];

/** A content type from the file's extension, for the few kinds assets usually are. */
const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.json': 'application/json',
  '.txt': 'text/plain',
  '.zip': 'application/zip',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.wav': 'audio/wav',
};

export function registerAssets(program: Command): void {
  const assets = program.command('assets').description('files a function reads its input (or model) from');

  assets
    .command('upload')
    .description('create an asset and upload a file to it')
    .argument('<file>')
    .option('--content-type <type>', 'default: from the extension, else application/octet-stream')
    .option('--description <text>', 'Latin-1 text (it travels as a header)', '')
    .action(async (file: string, opts: { contentType?: string; description: string }, cmd: Command) => {
      const { client, out } = await contextFor(cmd);
      const contentType = opts.contentType ?? CONTENT_TYPES[extname(file).toLowerCase()] ?? 'application/octet-stream';
      // A Blob backed by the file: never read whole into memory, and sent again if a retry needs it.
      const body = await openAsBlob(file);
      const asset = await client.assets.upload(body, { contentType, description: opts.description });
      const { uploadUrl: _signed, ...shown } = asset;
      out.record({ ...shown, bytes: body.size }, { ...shown, bytes: body.size });
    });

  assets
    .command('list')
    .description("this key's assets")
    .action(async (_opts, cmd: Command) => {
      const { client, out } = await contextFor(cmd);
      out.list(await client.assets.list(), assetColumns);
    });

  assets
    .command('get')
    .description('one asset')
    .argument('<assetId>')
    .action(async (assetId: string, _opts, cmd: Command) => {
      const { client, out } = await contextFor(cmd);
      const asset = await client.assets.get(assetId);
      out.record({ ...asset }, asset);
    });

  assets
    .command('delete')
    .description('delete an asset and its bytes')
    .argument('<assetId>')
    .action(async (assetId: string, _opts, cmd: Command) => {
      const { client, out } = await contextFor(cmd);
      await client.assets.delete(assetId);
      out.done(`deleted asset ${assetId}`, { assetId, deleted: true });
    });
}
