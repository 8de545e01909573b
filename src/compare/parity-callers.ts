import type { SeenCaller } from '../caller/seen-caller.ts';
import { cleanText } from './parity-clean.ts';
import type { Readiness } from './types.ts';

/**
 * The parity store's integrations (parity-store.ts): callers grouped by User-Agent and key
 * fingerprint (src/caller/seen-caller.ts; never the key), with the routes each one calls, so the
 * /bridge/ page can say which script to fix first. Shared by the replicas through the store's
 * events (a `caller` event per integration, route and method, counts summed per batch).
 *
 * Bounded whatever callers send: at most MAX_INTEGRATIONS integrations (later ones counted
 * together under OTHER_INTEGRATIONS), at most MAX_ROUTES_PER_INTEGRATION routes and methods
 * each (the rest under OTHER_ROUTES), a User-Agent kept to AGENT_CHARS characters, redacted,
 * and withheld whole when it carries the caller's key or any New Relic key, plain or disguised.
 */
export const MAX_INTEGRATIONS = 100;
export const MAX_ROUTES_PER_INTEGRATION = 50;
export const AGENT_CHARS = 160;
export const OTHER_INTEGRATIONS = '(others)';
export const OTHER_ROUTES = '(other routes)';
export const NO_AGENT = '(no User-Agent)';
export const WITHHELD_AGENT = '(User-Agent withheld: it carries a key)';
const OTHERS_AGENT = `(callers past the first ${MAX_INTEGRATIONS} integrations)`;
/** This replica's User-Agents as sent, remembered so a known caller costs two map look-ups. */
const MAX_SEEN = 4 * MAX_INTEGRATIONS;

interface RouteCalls {
  route: string;
  method: string;
  calls: number;
}

export interface IntegrationStats {
  fingerprint: string;
  agent: string;
  calls: number;
  /** By route, then method (nested maps: no key string built per request). */
  routes: Map<string, Map<string, RouteCalls>>;
  routeCount: number;
}

export interface CallerTallies {
  /** By fingerprint and User-Agent as shown. */
  integrations: Map<string, IntegrationStats>;
  others: IntegrationStats;
  /** By fingerprint, then User-Agent as sent (this replica's requests): the integration counted. */
  seen: Map<string, Map<string, IntegrationStats>>;
  seenCount: number;
}

const emptyIntegration = (fingerprint: string, agent: string): IntegrationStats => ({ fingerprint, agent, calls: 0, routes: new Map(), routeCount: 0 });

export function createCallerTallies(): CallerTallies {
  return { integrations: new Map(), others: emptyIntegration(OTHER_INTEGRATIONS, OTHERS_AGENT), seen: new Map(), seenCount: 0 };
}

/** A User-Agent as shown: one line, redacted, cut to AGENT_CHARS. */
export function cleanAgent(agent: string): string {
  // Control characters (a header cannot carry most, a remote event could): one line of text.
  // eslint-disable-next-line no-control-regex -- matching them is the point
  const line = agent.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  return line === '' ? NO_AGENT : cleanText(line, AGENT_CHARS);
}

function integrationOf(callers: CallerTallies, fingerprint: string, agent: string): IntegrationStats {
  if (fingerprint === OTHER_INTEGRATIONS) return callers.others;
  const label = `${fingerprint}\n${agent}`;
  let integration = callers.integrations.get(label);
  if (integration === undefined) {
    if (callers.integrations.size >= MAX_INTEGRATIONS) return callers.others;
    integration = emptyIntegration(fingerprint, agent);
    callers.integrations.set(label, integration);
  }
  return integration;
}

function countCalls(integration: IntegrationStats, route: string, method: string, count: number): void {
  integration.calls += count;
  let calls = integration.routes.get(route)?.get(method);
  if (calls === undefined) {
    // Past the bound, one row (OTHER_ROUTES, no method) takes the rest.
    const full = integration.routeCount >= MAX_ROUTES_PER_INTEGRATION;
    const [slotRoute, slotMethod] = full ? [OTHER_ROUTES, ''] : [route, method];
    let methods = integration.routes.get(slotRoute);
    if (methods === undefined) {
      methods = new Map();
      integration.routes.set(slotRoute, methods);
    }
    calls = methods.get(slotMethod);
    if (calls === undefined) {
      calls = { route: slotRoute, method: slotMethod, calls: 0 };
      methods.set(slotMethod, calls);
      if (!full) integration.routeCount += 1;
    }
  }
  calls.calls += count;
}

/**
 * One request of this replica (route and method already the store's labels): counted, and the
 * integration's labels returned for the other replicas. A caller met before costs two map
 * look-ups; a new one also a key check of its User-Agent.
 */
export function noteLocalCaller(callers: CallerTallies, route: string, method: string, caller: SeenCaller): { fingerprint: string; agent: string } {
  let integration = callers.seen.get(caller.fingerprint)?.get(caller.userAgent);
  if (integration === undefined) {
    if (callers.integrations.size >= MAX_INTEGRATIONS) {
      // Full: a new caller is one of the others, whatever its User-Agent says (not read at all).
      integration = callers.others;
    } else {
      const agent = caller.agentCarriesKey(caller.userAgent) ? WITHHELD_AGENT : cleanAgent(caller.userAgent);
      integration = integrationOf(callers, caller.fingerprint, agent);
    }
    if (callers.seenCount < MAX_SEEN) {
      let agents = callers.seen.get(caller.fingerprint);
      if (agents === undefined) {
        agents = new Map();
        callers.seen.set(caller.fingerprint, agents);
      }
      agents.set(caller.userAgent, integration);
      callers.seenCount += 1;
    }
  }
  countCalls(integration, route, method, 1);
  return { fingerprint: integration.fingerprint, agent: integration.agent };
}

/** Another replica's counts (its labels, cleaned there; redacted and bounded again here). */
export function applyRemoteCaller(callers: CallerTallies, event: { fingerprint: string; agent: string; route: string; method: string; count: number }): void {
  const agent = event.agent === WITHHELD_AGENT ? WITHHELD_AGENT : cleanAgent(event.agent);
  countCalls(integrationOf(callers, cleanText(event.fingerprint, 32), agent), event.route, event.method, event.count);
}

export interface IntegrationRoute {
  route: string;
  method: string;
  calls: number;
  /** The route's readiness now; null for OTHER_ROUTES. */
  readiness: Readiness | null;
  /** Readiness `safe to translate`. */
  ready: boolean;
}

export interface IntegrationReport {
  /** The key's fingerprint (an HMAC, shortened), `(no key)` or OTHER_INTEGRATIONS. */
  fingerprint: string;
  agent: string;
  calls: number;
  /** Calls to routes that are not safe to translate: what sorts the integrations. */
  notReadyCalls: number;
  /** Routes not ready first, then by calls. */
  routes: IntegrationRoute[];
}

/** The integrations, the one with most calls to routes not ready first. */
export function integrationsReport(callers: CallerTallies, readinessOf: (route: string, method: string) => Readiness): IntegrationReport[] {
  const all = [...callers.integrations.values(), ...(callers.others.calls > 0 ? [callers.others] : [])];
  const rows = all.map((integration) => {
    const routes = [...integration.routes.values()].flatMap((methods) => [...methods.values()]).map((r): IntegrationRoute => {
      const readiness = r.route === OTHER_ROUTES ? null : readinessOf(r.route, r.method);
      return { route: r.route, method: r.method, calls: r.calls, readiness, ready: readiness === 'safe to translate' };
    });
    routes.sort((a, b) => Number(a.ready) - Number(b.ready) || b.calls - a.calls || a.route.localeCompare(b.route) || a.method.localeCompare(b.method));
    const notReadyCalls = routes.reduce((n, r) => n + (r.ready ? 0 : r.calls), 0);
    return { fingerprint: integration.fingerprint, agent: integration.agent, calls: integration.calls, notReadyCalls, routes };
  });
  return rows.sort((a, b) => b.notReadyCalls - a.notReadyCalls || b.calls - a.calls || a.agent.localeCompare(b.agent) || a.fingerprint.localeCompare(b.fingerprint));
}
