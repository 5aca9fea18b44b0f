import { NvcfClient } from '@nvcf/client';
import type { Command } from 'commander';
import { loadConfig, type ResolvedConfig } from './config.ts';
import { createOutput, type Output, outputMode } from './output.ts';

/** The options every command takes (declared once, on the program). */
export interface GlobalOptions {
  baseUrl?: string;
  apiKey?: string;
  profile?: string;
  json?: boolean;
}

/** What a command runs with: the SDK client for the resolved gateway, and where its output goes. */
export interface Context {
  client: NvcfClient;
  out: Output;
  config: ResolvedConfig;
  json: boolean;
}

export function globalOptions(cmd: Command): GlobalOptions {
  return cmd.optsWithGlobals<GlobalOptions>();
}

export async function contextFor(cmd: Command): Promise<Context> {
  const opts = globalOptions(cmd);
  const config = await loadConfig({ baseUrl: opts.baseUrl, apiKey: opts.apiKey, profile: opts.profile });
  const json = opts.json === true;
  return {
    client: new NvcfClient({ baseUrl: config.baseUrl, ...(config.apiKey ? { apiKey: config.apiKey } : {}) }),
    out: createOutput(outputMode(json, process.stdout), process.stdout),
    config,
    json,
  };
}
