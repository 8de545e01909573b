import type { IncomingMessage, ServerResponse } from 'node:http';
import { serveV2 } from './v2/client-error.ts';
import { buildGateway, type BuiltGateway } from './gateway.ts';
import { ConfigError, loadConfig, type GatewayConfig } from './ops/config.ts';
import { createLogger, stdoutLog } from './ops/logger.ts';
import { bringDeadlinesForward } from './routes/request-signal.ts';

/**
 * Process entry (`npm start`): validated configuration, then the gateway (src/gateway.ts),
 * served with v2-shaped socket errors and a draining shutdown. With no NerdGraph configured it
 * runs on the embedded sandbox.
 */
/** A configuration error is a message and exit code 1, not a stack trace. */
function exitOnConfigError(error: unknown): never {
  if (error instanceof ConfigError) {
    process.stderr.write(`v2-bridge: ${error.message}\n`);
    process.exit(1);
  }
  throw error;
}

async function main(): Promise<void> {
  let config: GatewayConfig;
  try {
    config = loadConfig();
  } catch (error) {
    exitOnConfigError(error);
  }
  const stdout = stdoutLog(config.logBufferMaxBytes);
  const logger = createLogger(config.logLevel, stdout.stream);
  let draining = false;
  let gateway: BuiltGateway;
  try {
    gateway = await buildGateway(config, { logger, draining: () => draining, processMetrics: true });
  } catch (error) {
    exitOnConfigError(error);
  }
  const { app, upstream } = gateway;
  const demo = gateway.sandbox ? { keys: [...gateway.sandbox.sandbox.data.keys.keys()] } : undefined;

  if (!config.publicBaseUrl && !['127.0.0.1', 'localhost', '::1'].includes(config.host)) {
    // Behind a proxy, Link URLs built from the Host header would point clients (and their
    // keys) at whatever origin the request named: say where the gateway really lives.
    logger.warn('PUBLIC_BASE_URL is not set: Link headers will use the origin each request names; set it when serving beyond loopback');
  }

  const server = serveV2({ fetch: app.fetch, port: config.port, hostname: config.host }, (info) => {
    const base = `http://${info.address.includes(':') ? `[${info.address}]` : info.address}:${info.port}`;
    // Tracing: on or off only (the endpoint's URL may carry credentials; its headers do).
    const tracing = gateway.tracing ? 'otlp' : 'off';
    logger.info({ port: info.port, upstream: demo ? 'embedded sandbox' : upstream.graphqlUrl, legacy: demo ? 'embedded sandbox' : upstream.legacyUrl, tracing }, 'v2-bridge listening');
    if (demo) {
      const demoKey = demo.keys[0] ?? '';
      process.stdout.write(
        `\nv2-bridge is running on the embedded sandbox (a simulated New Relic account).\n` +
          `  sandbox keys: ${demo.keys.join(', ')}\n` +
          `  demo key:     ${demoKey}\n` +
          `  try:          curl -H 'X-Api-Key: ${demoKey}' ${base}/v2/applications.json\n\n`,
      );
    }
  });

  // Requests in flight, so a shutdown knows what it waits for (and what a cut would drop).
  let inFlight = 0;
  // Draining: once nothing is in flight, every connection left is idle or never sent a request
  // (opened ahead by a load balancer, a TCP health check, a slowloris): closeIdleConnections()
  // leaves the latter open until the drain bound, so they are all closed then.
  const closeUnusedConnections = (): void => {
    if (inFlight === 0) server.closeAllConnections();
    else server.closeIdleConnections();
  };
  server.on('request', (_req: IncomingMessage, res: ServerResponse) => {
    inFlight++;
    res.once('close', () => {
      inFlight--;
      if (draining) closeUnusedConnections();
    });
  });

  /**
   * SIGTERM (docker stop, Kubernetes) or SIGINT (Ctrl-C): stop accepting connections, answer
   * /readyz with 503, let the requests in flight finish (their connections close after the
   * answer; connections with no request in progress close now), then exit 0. Request deadlines
   * are brought forward to end a margin before SHUTDOWN_DRAIN_MS, so a request still waiting on
   * NerdGraph answers 504 (or "outcome unknown") rather than being cut. After SHUTDOWN_DRAIN_MS
   * whatever is still open is cut and the exit code is 1; a second signal exits at once, without
   * the final log flush. The exit's log flush is bounded (FINAL_FLUSH_MS), so a log destination
   * that stopped reading adds at most that to the exit: the bound is never cleared before it.
   */
  const shutdown = (signal: NodeJS.Signals): void => {
    if (draining) {
      stdout.abandon();
      try {
        logger.warn({ signal, inFlight }, 'second signal during drain: exiting now');
      } catch {
        // Exiting matters more than the line.
      }
      process.exit(1);
    }
    draining = true;
    logger.info({ signal, inFlight, drainMs: config.shutdownDrainMs }, 'shutting down: draining requests in flight');
    // Time left after the deadline to write the answer: up to 1 s, a quarter of a short drain.
    bringDeadlinesForward(config.shutdownDrainMs - Math.min(1000, Math.floor(config.shutdownDrainMs / 4)));
    setTimeout(() => {
      logger.warn({ inFlight }, 'drain bound reached: cutting the requests still in flight');
      server.closeAllConnections();
      process.exit(1);
    }, config.shutdownDrainMs);
    server.close(() => {
      // The last parity batch goes out and Redis is closed before exit; the drain bound still holds.
      void gateway.close().then(
        () => {
          logger.info('drained: exiting');
          process.exit(0);
        },
        (error: unknown) => {
          // Drained, but what the gateway still had to hand over (the last parity batch) may be lost.
          logger.warn({ err: { name: (error as Error).name } }, 'drained, but closing the gateway failed: exiting');
          process.exit(1);
        },
      );
    });
    closeUnusedConnections();
  };
  process.on('SIGINT', shutdown);
  process.on('SIGTERM', shutdown);
}

await main();
