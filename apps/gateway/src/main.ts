import { countExternalMemoryInHeapLimit, createLogger, loadEnvConfigOrExit, onShutdownSignal } from '@nvcf/service-kit';
import { GatewayEnv, toGatewayConfig } from './config.ts';
import { startGateway } from './server.ts';

const env = loadEnvConfigOrExit(GatewayEnv, process.env, 'gateway');
countExternalMemoryInHeapLimit(env.GC_EXTERNAL_MEMORY_IN_HEAP_LIMIT);
const config = toGatewayConfig(env);
const logger = createLogger({ name: 'gateway', level: config.logLevel });
const gateway = await startGateway(config, logger);
onShutdownSignal(logger, () => gateway.close());
