import { countExternalMemoryInHeapLimit, createLogger, loadEnvConfigOrExit, onShutdownSignal } from '@nvcf/service-kit';
import { toWorkerConfig, WorkerEnv } from './config.ts';
import { startWorker } from './worker-runtime.ts';

const env = loadEnvConfigOrExit(WorkerEnv, process.env, 'worker');
countExternalMemoryInHeapLimit(env.GC_EXTERNAL_MEMORY_IN_HEAP_LIMIT);
const config = toWorkerConfig(env);
const logger = createLogger({ name: 'worker', level: config.logLevel });
const worker = await startWorker(config, logger);
// SIGTERM drains: in-flight jobs finish before the process exits.
onShutdownSignal(logger, () => worker.close());
