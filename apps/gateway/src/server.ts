import { createLogger, type Logger } from '@nvcf/service-kit';
import type { GatewayConfig } from './config.ts';
import { createControlServices, startControlPlane } from './planes/control-plane.ts';
import { startGatewayInfrastructure } from './planes/gateway-infrastructure.ts';
import { startGatewaySurfaces } from './planes/gateway-surfaces.ts';
import { startInvocationPlane } from './planes/invocation-plane.ts';

export interface RunningGateway {
  url: string;
  /** The gRPC port (0 when disabled). */
  grpcPort: number;
  /** The Prometheus metrics port (0 when disabled). */
  metricsPort: number;
  port: number;
  /** Stops accepting, lets open long-polls end, closes Redis. */
  close(): Promise<void>;
}

/**
 * Starts a gateway: used by `main.ts`, by tests (port 0) and by the benchmark. The planes start in the order they
 * depend on each other (planes/): shared infrastructure, the control plane's state, the invocation plane that
 * reads it, the control plane's services that change it, then the surfaces that serve them all.
 */
export async function startGateway(config: GatewayConfig, logger?: Logger): Promise<RunningGateway> {
  const log = logger ?? createLogger({ name: 'gateway', level: config.logLevel });
  const infra = await startGatewayInfrastructure(config, log);
  const control = await startControlPlane(infra, config);
  const invocation = await startInvocationPlane(infra, control, config);
  const services = createControlServices(control, invocation, infra, config);
  const surfaces = await startGatewaySurfaces({ infra, control, services, invocation }, config);

  let closing: Promise<void> | undefined;
  return {
    url: surfaces.url,
    port: surfaces.port,
    grpcPort: surfaces.grpcPort,
    metricsPort: surfaces.metricsPort,
    close() {
      closing ??= shutdown();
      return closing;
    },
  };

  // The order is the drain: surfaces stop accepting, waits end, open streams get the grace, and only then the
  // completion waiter, the producer, the spans and Redis go.
  async function shutdown(): Promise<void> {
    // Background sweeps stop first; every plane's services go on serving until the surfaces have drained.
    control.close();
    invocation.stopSweeping();
    const stopping = surfaces.stopAccepting();
    // Waiting long-polls end now with a 202 the client can follow up on any replica; streams go on.
    invocation.completions.endWaits();
    if (!(await stopping.drainedWithin(config.shutdownGraceMs))) {
      log.warn({ graceMs: config.shutdownGraceMs }, 'open streams outlived the shutdown grace; closing them');
      await invocation.completions.close();
      await stopping.cutOpenConnections();
    }
    await invocation.completions.close();
    await stopping.closed();
    await invocation.close();
    await infra.close();
  }
}
