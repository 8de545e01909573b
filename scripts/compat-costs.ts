import { createApp } from '../src/app.ts';
import { createBudgets } from '../src/budget/budgets.ts';
import { loadConfig } from '../src/ops/config.ts';
import { createLogger } from '../src/ops/logger.ts';
import { createMetrics } from '../src/ops/metrics.ts';
import { openSharedState } from '../src/state/open.ts';
import { createNerdGraphClient } from '../src/upstream/client.ts';
import { loadDocuments } from '../src/upstream/documents.ts';
import { samplePath } from '../src/probe/routes.ts';
import { measureRoute, nothingSent, routeLabel, sendsNothing, type CostRequest, type CostSample, type CostSubject, type RouteCost } from '../src/routes/compat-costs.ts';
import type { Mapping } from '../src/routes/mapping.ts';
import { createSandbox, type Sandbox } from '../sandbox/server.ts';

/**
 * The sandbox half of the cost table (src/routes/compat-costs.ts): one sandbox, seeded and on a
 * fixed clock so the table is the same on every run, and fresh gateways built as production
 * builds them (src/gateway.ts: budgets, caches) but with the 1 s micro-cache off, so a warm call
 * shows what the gateway's own caches keep, not an identical answer replayed within a second.
 * Reads are measured first, then the writes in WRITE_ORDER (some write what the next one needs).
 */
export const COST_SEED = 42;
export const COST_APPS = Number(process.env.COST_APPS ?? 500);
/** The clock of the sandbox and the gateways: the tests' (test/support/harness.ts FIXED_NOW). */
export const COST_NOW = Date.UTC(2026, 10, 22, 12, 0, 30);
const KEY = 'NRAK-SANDBOX-DEMO';
const ACCOUNT = 1000001;
const READ_HEADERS = { 'x-api-key': KEY, accept: 'application/json' };
const JSON_HEADERS = { 'x-api-key': KEY, 'content-type': 'application/json' };

const now = (): number => COST_NOW;

/**
 * The sandbox, counting, and a way to build a fresh gateway on it: src/gateway.ts's NerdGraph
 * client (with its budgets) and app, without the migration modes and /bridge/ (no translated
 * route reaches them), and with the mappings and documents loaded once (they hold no cache).
 */
function costSubject(sandbox: Sandbox, url: string, mappings: readonly Mapping[]): CostSubject {
  const graphqlUrl = `${url}/graphql`;
  const config = loadConfig({ NERDGRAPH_URL: graphqlUrl, MICRO_CACHE_MS: '0', LOG_LEVEL: 'silent' });
  const logger = createLogger('silent');
  const documents = loadDocuments();
  return {
    async freshGateway() {
      const metrics = createMetrics({ defaultMetrics: false });
      const shared = openSharedState(config.sharedState, metrics, now);
      const nerdgraph = createNerdGraphClient({
        url: graphqlUrl,
        documents,
        metrics,
        timeoutMs: config.upstreamTimeoutMs,
        retries: config.upstreamRetries,
        microCache: { ...config.microCache, identityOf: shared.identityOf, shared },
        budget: createBudgets({ ...shared, limits: config.budgets, metrics, callBoundMs: config.upstreamTimeoutMs }),
      });
      const app = createApp({ config, shared, nerdgraph, nerdgraphUrl: graphqlUrl, mappings, metrics, logger, now });
      const send = (request: CostRequest): Promise<Response> =>
        Promise.resolve(app.request(request.path, { method: request.method, headers: request.headers ?? READ_HEADERS, ...(request.body !== undefined && { body: request.body }) }));
      return Object.assign(send, { close: () => shared.state.close() });
    },
    counted() {
      const reads = sandbox.reads();
      return { calls: reads.totalCalls, nrql: reads.totalNrql, operations: reads.calls };
    },
    reset: () => sandbox.resetReads(),
  };
}

const get = (path: string): CostRequest => ({ method: 'GET', path, headers: READ_HEADERS });
const send = (method: string, path: string, body?: unknown): CostRequest => ({
  method,
  path,
  headers: JSON_HEADERS,
  ...(body !== undefined && { body: JSON.stringify(body) }),
});

/** ISO seconds, as v2's from/to take them. */
const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, '+00:00');

interface Fixtures {
  ids: Record<string, string | undefined>;
  window: string;
  apps: { reporting: [number, number]; silent: [number, number] };
  channels: [number, number, number, number];
  policies: [number, number];
  /** Policies to rename and to delete (the last four of the account: no other sample uses them). */
  spare: [number, number, number, number];
  incidents: [number, number, number, number];
  /** Alert conditions by family (ids are one number in v2 and NerdGraph): a policy of NRQL conditions, two of each to write. */
  conditions: { policy: number; nrql: [number, number, number, number]; apm: [number, number]; external: [number, number]; synthetics: [number, number]; location: [number, number] };
}

/** The ids the samples need, found as a client finds them: in the gateway's own lists (on a scout gateway, before any count). */
async function findFixtures(subject: CostSubject, sandbox: Sandbox): Promise<Fixtures> {
  const scout = await subject.freshGateway();
  const list = async (path: string, wrapper: string): Promise<Array<Record<string, unknown>>> => {
    const response = await scout(get(path));
    if (!response.ok) throw new Error(`cost fixtures: ${path} answered ${response.status}`);
    const items = ((await response.json()) as Record<string, unknown>)[wrapper];
    return Array.isArray(items) ? (items as Array<Record<string, unknown>>) : [];
  };
  const firstId = (items: Array<Record<string, unknown>>, pick: (item: Record<string, unknown>) => boolean = () => true): string | undefined => {
    const chosen = items.find(pick) ?? items[0];
    return chosen?.id === undefined ? undefined : String(chosen.id);
  };
  try {
    const reporting = (item: Record<string, unknown>): boolean => item.reporting === true;
    const app = firstId(await list('/v2/applications.json', 'applications'), reporting);
    const ids = {
      app,
      host: firstId(await list(`/v2/applications/${app}/hosts.json`, 'application_hosts')),
      instance: firstId(await list(`/v2/applications/${app}/instances.json`, 'application_instances')),
      keyTransaction: firstId(await list('/v2/key_transactions.json', 'key_transactions'), reporting),
      mobile: firstId(await list('/v2/mobile_applications.json', 'applications'), reporting),
      user: firstId(await list('/v2/users.json', 'users')),
      policy: firstId(await list('/v2/alerts_policies.json', 'policies')),
    };
    const to = Math.floor(COST_NOW / 60_000) * 60_000 - 5 * 60_000;
    const window = `from=${encodeURIComponent(iso(to - 30 * 60_000))}&to=${encodeURIComponent(iso(to))}&summarize=true`;
    const ownApps = sandbox.data.apps.filter((candidate) => candidate.accountId === ACCOUNT);
    const reportingApps = ownApps.filter((candidate) => candidate.reporting && String(candidate.id) !== app).map((candidate) => candidate.id);
    const silentApps = ownApps.filter((candidate) => !candidate.reporting).map((candidate) => candidate.id);
    const channels = (await list('/v2/alerts_channels.json', 'channels')).filter((channel) => channel.type === 'email').map((channel) => Number(channel.id));
    // Policies no workflow names yet: linking a channel to one creates the gateway's own workflow, which unlinking deletes.
    const bound = new Set((await list('/v2/alerts_channels.json', 'channels')).flatMap((channel) => ((channel.links as { policy_ids?: number[] } | undefined)?.policy_ids ?? []).map(Number)));
    const bare = sandbox.data.alerts.policies.filter((policy) => policy.accountId === ACCOUNT && !bound.has(policy.id)).map((policy) => policy.id);
    const open = (await list('/v2/alerts_incidents.json?only_open=true', 'incidents')).map((incident) => Number(incident.id));
    const pair = (values: number[], what: string): [number, number] => {
      if (values.length < 2) throw new Error(`cost fixtures: the sandbox lacks two ${what}`);
      return [values[0] as number, values[1] as number];
    };
    const four = (values: number[], what: string): [number, number, number, number] => {
      if (values.length < 4) throw new Error(`cost fixtures: the sandbox lacks four ${what}`);
      return [values[0] as number, values[1] as number, values[2] as number, values[3] as number];
    };
    const conditionsOf = (family: string): number[] =>
      sandbox.data.alerts.conditions.filter((c) => c.accountId === ACCOUNT && c.family === family && (family !== 'alerts_nrql_conditions' || c.fields.type === 'static')).map((c) => c.id);
    const nrql = conditionsOf('alerts_nrql_conditions');
    return {
      ids,
      window,
      conditions: {
        policy: sandbox.data.alerts.conditions.find((c) => c.id === nrql[0])?.policyId ?? 0,
        nrql: four(nrql, 'static NRQL conditions'),
        apm: pair(conditionsOf('alerts_conditions'), 'APM conditions'),
        external: pair(conditionsOf('alerts_external_service_conditions'), 'external service conditions'),
        synthetics: pair(conditionsOf('alerts_synthetics_conditions'), 'synthetics conditions'),
        location: pair(conditionsOf('alerts_location_failure_conditions'), 'location failure conditions'),
      },
      apps: { reporting: pair(reportingApps, 'reporting applications'), silent: pair(silentApps, 'silent applications') },
      channels: four(channels, 'email channels'),
      policies: pair(bare, 'policies without channels'),
      spare: four(sandbox.data.alerts.policies.filter((policy) => policy.accountId === ACCOUNT).map((policy) => policy.id).slice(-4), 'policies'),
      incidents: four(open, 'open incidents'),
    };
  } finally {
    await scout.close?.();
  }
}

/** The writes, in the order they are measured: each one's cold and warm calls write something different. */
function writeSamples(f: Fixtures): Array<[string, CostSample]> {
  const [appA, appB] = f.apps.reporting;
  const [silentA, silentB] = f.apps.silent;
  const [channelA, channelB, linkA, linkB] = f.channels;
  const [policyA, policyB] = f.policies;
  const [ackA, ackB, closeA, closeB] = f.incidents;
  const [renameA, renameB, doomedA, doomedB] = f.spare;
  const v0 = (app: number, revision: string): CostRequest => ({
    method: 'POST',
    path: '/deployments.xml',
    headers: { 'x-api-key': KEY, 'content-type': 'application/x-www-form-urlencoded' },
    body: `deployment[application_id]=${app}&deployment[revision]=${revision}`,
  });
  return [
    ['POST /v2/applications/{id}/deployments.{format}', { cold: send('POST', `/v2/applications/${appA}/deployments.json`, { deployment: { revision: 'costs-cold' } }), warm: send('POST', `/v2/applications/${appB}/deployments.json`, { deployment: { revision: 'costs-warm' } }) }],
    ['POST /deployments.{format}', { cold: v0(appA, 'costs-v0-cold'), warm: v0(appB, 'costs-v0-warm') }],
    ['PUT /v2/applications/{id}.{format}', { cold: send('PUT', `/v2/applications/${appA}.json`, { application: { settings: { app_apdex_threshold: 0.7 } } }), warm: send('PUT', `/v2/applications/${appB}.json`, { application: { settings: { app_apdex_threshold: 0.7 } } }) }],
    ['DELETE /v2/applications/{id}.{format}', { cold: send('DELETE', `/v2/applications/${silentA}.json`), warm: send('DELETE', `/v2/applications/${silentB}.json`) }],
    ['POST /v2/browser_applications.{format}', { cold: send('POST', '/v2/browser_applications.json', { browser_application: { name: 'costs cold' } }), warm: send('POST', '/v2/browser_applications.json', { browser_application: { name: 'costs warm' } }) }],
    ['POST /v2/mobile_applications.{format}', { cold: send('POST', '/v2/mobile_applications.json', { mobile_application: { name: 'costs cold' } }), warm: send('POST', '/v2/mobile_applications.json', { mobile_application: { name: 'costs warm' } }) }],
    ['PUT /v2/labels.{format}', { cold: send('PUT', '/v2/labels.json', { label: { category: 'Costs', name: 'cold', links: { applications: [appA] } } }), warm: send('PUT', '/v2/labels.json', { label: { category: 'Costs', name: 'warm', links: { applications: [appB] } } }) }],
    ['DELETE /v2/labels/{key}.{format}', { cold: send('DELETE', '/v2/labels/Costs:cold.json'), warm: send('DELETE', '/v2/labels/Costs:warm.json') }],
    ['POST /v2/alerts_channels.{format}', { cold: send('POST', '/v2/alerts_channels.json', { channel: { name: 'costs cold', type: 'email', configuration: { recipients: 'cold@example.com' } } }), warm: send('POST', '/v2/alerts_channels.json', { channel: { name: 'costs warm', type: 'email', configuration: { recipients: 'warm@example.com' } } }) }],
    ['DELETE /v2/alerts_channels/{channel_id}.{format}', { cold: send('DELETE', `/v2/alerts_channels/${channelA}.json`), warm: send('DELETE', `/v2/alerts_channels/${channelB}.json`) }],
    ['PUT /v2/alerts_policy_channels.{format}', { cold: send('PUT', `/v2/alerts_policy_channels.json?policy_id=${policyA}&channel_ids=${linkA}`), warm: send('PUT', `/v2/alerts_policy_channels.json?policy_id=${policyB}&channel_ids=${linkB}`) }],
    ['DELETE /v2/alerts_policy_channels.{format}', { cold: send('DELETE', `/v2/alerts_policy_channels.json?policy_id=${policyA}&channel_id=${linkA}`), warm: send('DELETE', `/v2/alerts_policy_channels.json?policy_id=${policyB}&channel_id=${linkB}`) }],
    ['POST /v2/alerts_policies.{format}', { cold: send('POST', '/v2/alerts_policies.json', { policy: { name: 'costs cold' } }), warm: send('POST', '/v2/alerts_policies.json', { policy: { name: 'costs warm' } }) }],
    ['PUT /v2/alerts_policies/{policy_id}.{format}', { cold: send('PUT', `/v2/alerts_policies/${renameA}.json`, { policy: { name: 'costs cold' } }), warm: send('PUT', `/v2/alerts_policies/${renameB}.json`, { policy: { name: 'costs warm' } }) }],
    ['DELETE /v2/alerts_policies/{policy_id}.{format}', { cold: send('DELETE', `/v2/alerts_policies/${doomedA}.json`), warm: send('DELETE', `/v2/alerts_policies/${doomedB}.json`) }],
    ['PUT /v2/alerts_incidents/{id}/acknowledge.{format}', { cold: send('PUT', `/v2/alerts_incidents/${ackA}/acknowledge.json`), warm: send('PUT', `/v2/alerts_incidents/${ackB}/acknowledge.json`) }],
    ['PUT /v2/alerts_incidents/{id}/close.{format}', { cold: send('PUT', `/v2/alerts_incidents/${closeA}/close.json`), warm: send('PUT', `/v2/alerts_incidents/${closeB}/close.json`) }],
    ...conditionWrites(f.conditions),
  ];
}

/** The condition writes: NRQL create, update and delete, and every family's delete. */
function conditionWrites(c: Fixtures['conditions']): Array<[string, CostSample]> {
  const nrql = (name: string) => ({ nrql_condition: { name, terms: [{ duration: '5', operator: 'above', priority: 'critical', threshold: '1', time_function: 'all' }], nrql: { query: 'SELECT count(*) FROM Transaction', since_value: '3' } } });
  const [updateA, updateB, deleteA, deleteB] = c.nrql;
  const deletes = (namespace: string, [a, b]: [number, number]): [string, CostSample] => [`DELETE /v2/${namespace}/{condition_id}.{format}`, { cold: send('DELETE', `/v2/${namespace}/${a}.json`), warm: send('DELETE', `/v2/${namespace}/${b}.json`) }];
  return [
    ['POST /v2/alerts_nrql_conditions/policies/{policy_id}.{format}', { cold: send('POST', `/v2/alerts_nrql_conditions/policies/${c.policy}.json`, nrql('costs cold')), warm: send('POST', `/v2/alerts_nrql_conditions/policies/${c.policy}.json`, nrql('costs warm')) }],
    ['PUT /v2/alerts_nrql_conditions/{condition_id}.{format}', { cold: send('PUT', `/v2/alerts_nrql_conditions/${updateA}.json`, { nrql_condition: { name: 'costs cold' } }), warm: send('PUT', `/v2/alerts_nrql_conditions/${updateB}.json`, { nrql_condition: { name: 'costs warm' } }) }],
    ['DELETE /v2/alerts_nrql_conditions/{condition_id}.{format}', { cold: send('DELETE', `/v2/alerts_nrql_conditions/${deleteA}.json`), warm: send('DELETE', `/v2/alerts_nrql_conditions/${deleteB}.json`) }],
    deletes('alerts_conditions', c.apm),
    deletes('alerts_external_service_conditions', c.external),
    deletes('alerts_synthetics_conditions', c.synthetics),
    deletes('alerts_location_failure_conditions', c.location),
  ];
}

/**
 * A read's sample: the probe's request of the route (src/probe/routes.ts). A list is also walked
 * page by page; metric names from their whole list (the sample filters it to a few names).
 */
function readSample(mapping: Mapping, f: Fixtures): CostSample {
  const sampled = samplePath(mapping.route, f.ids, f.window);
  if (typeof sampled !== 'string') throw new Error(`cost sample of ${mapping.route}: ${sampled.skipped}`);
  // The NRQL conditions of a policy: policy_id is required.
  const path = mapping.route === '/v2/alerts_nrql_conditions.{format}' ? `${sampled}?policy_id=${f.conditions.policy}` : sampled;
  // A show's route ends in its id, metric data in /data: every other read is a list.
  const list = !/(\}|\/data)\.\{format\}$/.test(mapping.route);
  const walk = mapping.kind === 'metric-names' ? path.replace(/\?.*$/, '') : path;
  return { cold: get(path), ...(list && { walk: get(walk) }) };
}

/** Measures every route (or those `only` accepts) on a fresh sandbox; rows in the order of `mappings`. */
export async function measureSandboxCosts(mappings: readonly Mapping[], only: (mapping: Mapping) => boolean = () => true): Promise<RouteCost[]> {
  const sandbox = createSandbox({ seed: COST_SEED, apmApps: COST_APPS, now, behave: { ingestLagMs: 0 } });
  const server = await sandbox.listen(0, '127.0.0.1');
  try {
    const subject = costSubject(sandbox, server.url, mappings);
    const fixtures = await findFixtures(subject, sandbox);
    const costs = new Map<Mapping, RouteCost>();
    const measured = mappings.filter(only);
    for (const mapping of measured) {
      if (sendsNothing(mapping)) costs.set(mapping, nothingSent(mapping));
      else if (mapping.kind !== 'write') costs.set(mapping, await measureRoute(mapping, readSample(mapping, fixtures), subject));
    }
    const byLabel = new Map(measured.map((mapping) => [routeLabel(mapping), mapping]));
    for (const [label, sample] of writeSamples(fixtures)) {
      const mapping = byLabel.get(label);
      if (mapping !== undefined) costs.set(mapping, await measureRoute(mapping, sample, subject));
    }
    const unmeasured = measured.filter((mapping) => !costs.has(mapping)).map(routeLabel);
    if (unmeasured.length > 0) throw new Error(`no cost sample for ${unmeasured.join(', ')}`);
    return measured.map((mapping) => costs.get(mapping) as RouteCost);
  } finally {
    await server.close();
  }
}
