import { lookup } from 'node:dns/promises';
import { createRequire } from 'node:module';
import { isIP, Socket } from 'node:net';
import type { StandaloneConnectionOptions } from 'ioredis';
import type * as StandaloneModule from 'ioredis/built/connectors/StandaloneConnector.js';

/**
 * ioredis's connector, with the Redis host's name resolved by us: at most one lookup of a name
 * at a time, and a connection attempt waits for it at most `lookupTimeoutMs`.
 *
 * Why: Node resolves names with getaddrinfo on libuv's thread pool (4 threads). When Redis's
 * name stops resolving quickly (a stopped container: Docker's DNS then forwards the name and
 * the lookup hangs ~10 s), every reconnect attempt (one a second) would hold one more thread,
 * and within seconds the gateway's own lookups of NerdGraph's host queue behind them: 503s
 * and 504s because Redis was gone. Seen with docker compose; the fix keeps Redis's lookups to
 * one thread whatever happens.
 */
// ioredis exports no StandaloneConnector from its index (only its type): its own module, the
// class ioredis itself uses.
const require = createRequire(import.meta.url);
type StandaloneConnectorConstructor = typeof StandaloneModule.default.default;
type ErrorEmitter = Parameters<InstanceType<StandaloneConnectorConstructor>['connect']>[0];
type NetStream = Awaited<ReturnType<InstanceType<StandaloneConnectorConstructor>['connect']>>;
const { default: StandaloneConnector } = require('ioredis/built/connectors/StandaloneConnector.js') as { default: StandaloneConnectorConstructor };

const lookups = new Map<string, Promise<string>>();

/** The name's address, sharing a lookup in flight; rejects after `timeoutMs` (the lookup itself goes on, alone). */
/**
 * The system resolver's answer for a name, an IPv4 address first when there is one (net.connect
 * would try each address in turn; ioredis is given one, and Redis most often listens on IPv4).
 */
async function systemLookup(name: string, family: 0 | 4 | 6): Promise<string> {
  const addresses = await lookup(name, { all: true, family });
  const chosen = addresses.find((entry) => entry.family === 4) ?? addresses[0];
  if (chosen === undefined) throw Object.assign(new Error('the Redis host name has no address'), { code: 'ENOTFOUND' });
  return chosen.address;
}

export function resolveOnce(host: string, timeoutMs: number, resolve: (name: string) => Promise<string> = (name) => systemLookup(name, 0)): Promise<string> {
  let pending = lookups.get(host);
  if (pending === undefined) {
    pending = resolve(host);
    lookups.set(host, pending);
    const forget = (): void => {
      if (lookups.get(host) === pending) lookups.delete(host);
    };
    pending.then(forget, forget);
  }
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`lookup of the Redis host timed out`)), timeoutMs);
  });
  return Promise.race([pending, timeout]).finally(() => clearTimeout(timer));
}

/** How a host name becomes an address (dns.lookup by default; tests give their own). */
export type HostResolver = (name: string) => Promise<string>;

export function resolvingConnector(lookupTimeoutMs: number, resolve?: HostResolver) {
  return class ResolvingConnector extends StandaloneConnector {
    private readonly named: StandaloneConnectionOptions;

    // ioredis types a connector's options as unknown; for a standalone connection they are these.
    constructor(options: unknown) {
      super(options as StandaloneConnectionOptions);
      this.named = options as StandaloneConnectionOptions;
    }

    override async connect(onError: ErrorEmitter): Promise<NetStream> {
      const named = this.named;
      const host = named.host;
      if (named.path || host === undefined || isIP(host) !== 0) return super.connect(onError);
      // Connecting from now, as the stock connector is: a disconnect() during the lookup clears
      // it, and no connection is then made after it.
      this.connecting = true;
      const family = named.family === 4 || named.family === 6 ? named.family : 0;
      let address: string | undefined;
      try {
        address = await resolveOnce(family === 0 ? host : `${host}#${family}`, lookupTimeoutMs, resolve ?? (() => systemLookup(host, family)));
      } catch (error) {
        this.firstError = error instanceof Error ? error : new Error('lookup of the Redis host failed');
      }
      if (address === undefined || !this.connecting) {
        // Not a rejection: ioredis ends a client whose connector rejects, for good. A destroyed
        // stream (with the lookup's error as the connector's first error) is a failed connection
        // attempt, which it reports and retries by its retryStrategy, as when net.connect's own
        // lookup fails; after a disconnect() it is simply closed.
        const failed = new Socket();
        failed.destroy();
        this.stream = failed;
        return failed;
      }
      // TLS still checks the certificate against the name, not the address.
      this.options = { ...named, host: address, ...(named.tls ? { tls: { servername: host, ...named.tls } } : {}) };
      return super.connect(onError);
    }
  };
}
