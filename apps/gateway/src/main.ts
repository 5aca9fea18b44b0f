import { createLogger, loadEnvConfigOrExit, onShutdownSignal } from '@nvcf/service-kit';
import { GatewayEnv, toGatewayConfig } from './config.ts';
import { startGateway } from './server.ts';

const config = toGatewayConfig(loadEnvConfigOrExit(GatewayEnv, process.env, 'gateway'));
const logger = createLogger({ name: 'gateway', level: config.logLevel });
const gateway = await startGateway(config, logger);
onShutdownSignal(logger, () => gateway.close());
