import { createApp } from '../src/app.ts';
import { createBudgets } from '../src/budget/budgets.ts';
import { loadConfig } from '../src/ops/config.ts';
import { createLogger } from '../src/ops/logger.ts';
import { createMetrics } from '../src/ops/metrics.ts';
import { openSharedState } from '../src/state/open.ts';
import { createNerdGraphClient } from '../src/upstream/client.ts';
import { loadDocuments } from '../src/upstream/documents.ts';
import { measureRoute, nothingSent, routeLabel, sendsNothing, type CostRequest, type CostSample, type CostSubject, type RouteCost } from '../src/routes/compat-costs.ts';
import { isReadMapping, type Mapping, type ReadMapping, type ReadSampleValue, type WriteMapping, type WriteSampleValue } from '../src/routes/mapping.ts';
import { fillJson, fillQuery, samplePath, type MissingValue, type SampleValues } from '../src/routes/route-sample.ts';
import { createSandbox, type Sandbox } from '../sandbox/server.ts';

/**
 * The sandbox half of the cost table (src/routes/compat-costs.ts): one sandbox, seeded and on a
 * fixed clock so the table is the same on every run, and fresh gateways built as production
 * builds them (src/gateway.ts: budgets, caches) but with the 1 s micro-cache off, so a warm call
 * shows what the gateway's own caches keep, not an identical answer replayed within a second.
 * Each route is measured with its mapping's sample (ReadSample, WriteSample of
 * src/routes/mapping-base.ts), filled with ids found in the sandbox; reads first, then writes.
 */
export const COST_SEED = 42;
export const COST_APPS = Number(process.env.COST_APPS ?? 500);
/** The clock of the sandbox and the gateways: the tests' (test/support/harness.ts FIXED_NOW). */
export const COST_NOW = Date.UTC(2026, 10, 22, 12, 0, 30);
const KEY = 'NRAK-SANDBOX-DEMO';
const ACCOUNT = 1000001;
const READ_HEADERS = { 'x-api-key': KEY, accept: 'application/json' };
const JSON_HEADERS = { 'x-api-key': KEY, 'content-type': 'application/json' };
const FORM_HEADERS = { 'x-api-key': KEY, 'content-type': 'application/x-www-form-urlencoded' };

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

/** ISO seconds, as v2's from/to take them. */
const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, '+00:00');

type Pair = readonly [cold: number, warm: number];

/** The sample values (mapping-base.ts ReadSampleValue, WriteSampleValue): the reads', and each write's pair of ids (cold, warm). */
interface Fixtures {
  reads: Record<ReadSampleValue, string | number | undefined>;
  writes: Record<Exclude<WriteSampleValue, 'call'>, Pair>;
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
    const to = Math.floor(COST_NOW / 60_000) * 60_000 - 5 * 60_000;
    const reads = {
      application_id: app,
      host_id: firstId(await list(`/v2/applications/${app}/hosts.json`, 'application_hosts')),
      instance_id: firstId(await list(`/v2/applications/${app}/instances.json`, 'application_instances')),
      key_transaction_id: firstId(await list('/v2/key_transactions.json', 'key_transactions'), reporting),
      mobile_application_id: firstId(await list('/v2/mobile_applications.json', 'applications'), reporting),
      user_id: firstId(await list('/v2/users.json', 'users')),
      policy_id: firstId(await list('/v2/alerts_policies.json', 'policies')),
      from: iso(to - 30 * 60_000),
      to: iso(to),
    };
    const ownApps = sandbox.data.apps.filter((candidate) => candidate.accountId === ACCOUNT);
    const reportingApps = ownApps.filter((candidate) => candidate.reporting && String(candidate.id) !== app).map((candidate) => candidate.id);
    const silentApps = ownApps.filter((candidate) => !candidate.reporting).map((candidate) => candidate.id);
    const channels = (await list('/v2/alerts_channels.json', 'channels')).filter((channel) => channel.type === 'email').map((channel) => Number(channel.id));
    // Policies no workflow names yet: linking a channel to one creates the gateway's own workflow, which unlinking deletes.
    const bound = new Set((await list('/v2/alerts_channels.json', 'channels')).flatMap((channel) => ((channel.links as { policy_ids?: number[] } | undefined)?.policy_ids ?? []).map(Number)));
    const bare = sandbox.data.alerts.policies.filter((policy) => policy.accountId === ACCOUNT && !bound.has(policy.id)).map((policy) => policy.id);
    const open = (await list('/v2/alerts_incidents.json?only_open=true', 'incidents')).map((incident) => Number(incident.id));
    /** The first `count` pairs of `values`: each the cold and the warm target of one write. */
    const pairs = (values: number[], what: string, count: number): Pair[] => {
      if (values.length < 2 * count) throw new Error(`cost fixtures: the sandbox lacks ${2 * count} ${what}`);
      return Array.from({ length: count }, (_, index) => [values[2 * index] as number, values[2 * index + 1] as number] as const);
    };
    const pair = (values: number[], what: string): Pair => pairs(values, what, 1)[0] as Pair;
    const conditionsOf = (family: string): number[] =>
      sandbox.data.alerts.conditions.filter((c) => c.accountId === ACCOUNT && c.family === family && (family !== 'alerts_nrql_conditions' || c.fields.type === 'static')).map((c) => c.id);
    const nrql = conditionsOf('alerts_nrql_conditions');
    const nrqlPolicy = sandbox.data.alerts.conditions.find((c) => c.id === nrql[0])?.policyId ?? 0;
    const [channelToDelete, channelToLink] = pairs(channels, 'email channels', 2) as [Pair, Pair];
    // The account's last four policies: no other sample uses them.
    const [policyToRename, policyToDelete] = pairs(sandbox.data.alerts.policies.filter((policy) => policy.accountId === ACCOUNT).map((policy) => policy.id).slice(-4), 'policies', 2) as [Pair, Pair];
    const [incidentToAcknowledge, incidentToClose] = pairs(open, 'open incidents', 2) as [Pair, Pair];
    const [nrqlToUpdate, nrqlToDelete] = pairs(nrql, 'static NRQL conditions', 2) as [Pair, Pair];
    return {
      // A condition of that policy no write sample deletes.
      reads: { ...reads, nrql_policy_id: nrqlPolicy, nrql_condition_id: nrql.find((id) => !nrqlToDelete.includes(id)) },
      writes: {
        reporting_app_id: pair(reportingApps, 'reporting applications'),
        silent_app_id: pair(silentApps, 'silent applications'),
        channel_to_delete_id: channelToDelete,
        channel_to_link_id: channelToLink,
        unlinked_policy_id: pair(bare, 'policies without channels'),
        policy_to_rename_id: policyToRename,
        policy_to_delete_id: policyToDelete,
        incident_to_acknowledge_id: incidentToAcknowledge,
        incident_to_close_id: incidentToClose,
        nrql_policy_id: [nrqlPolicy, nrqlPolicy],
        nrql_condition_to_update_id: nrqlToUpdate,
        nrql_condition_to_delete_id: nrqlToDelete,
        apm_condition_id: pair(conditionsOf('alerts_conditions'), 'APM conditions'),
        external_service_condition_id: pair(conditionsOf('alerts_external_service_conditions'), 'external service conditions'),
        synthetics_condition_id: pair(conditionsOf('alerts_synthetics_conditions'), 'synthetics conditions'),
        location_failure_condition_id: pair(conditionsOf('alerts_location_failure_conditions'), 'location failure conditions'),
      },
    };
  } finally {
    await scout.close?.();
  }
}

const filled = (mapping: Mapping, path: string | MissingValue): string => {
  if (typeof path !== 'string') throw new Error(`cost sample of ${mapping.route}: no ${path.value} for its ${path.where} parameter ${path.parameter}`);
  return path;
};

/**
 * A read's sample (its mapping's ReadSample). A list is also walked page by page; metric names
 * from their whole list (the sample filters it to a few names).
 */
function readSample(mapping: ReadMapping, f: Fixtures): CostSample {
  const path = filled(mapping, samplePath(mapping.route, mapping.sample, f.reads));
  // A show's route ends in its id, metric data in /data: every other read is a list.
  const list = !/(\}|\/data)\.\{format\}$/.test(mapping.route);
  const walk = mapping.kind === 'metric-names' ? path.replace(/\?.*$/, '') : path;
  return { cold: get(path), ...(list && { walk: get(walk) }) };
}

/** A write's sample (its mapping's WriteSample): cold with each pair's first id, warm with its second. */
function writeSample(mapping: WriteMapping, f: Fixtures): CostSample {
  const { sample } = mapping;
  if (sample === undefined) throw new Error(`no cost sample for ${routeLabel(mapping)}: declare the mapping's sample`);
  const request = (call: 'cold' | 'warm'): CostRequest => {
    const values: SampleValues = { call, ...Object.fromEntries(Object.entries(f.writes).map(([name, ids]) => [name, ids[call === 'cold' ? 0 : 1]])) };
    const path = filled(mapping, samplePath(mapping.route, sample, values, sample.format));
    const body = sample.body === undefined ? undefined : 'json' in sample.body ? JSON.stringify(fillJson(sample.body.json, values)) : filled(mapping, fillQuery(sample.body.form, values));
    const form = sample.body !== undefined && 'form' in sample.body;
    return { method: mapping.method, path, headers: form ? FORM_HEADERS : JSON_HEADERS, ...(body !== undefined && { body }) };
  };
  return { cold: request('cold'), warm: request('warm') };
}

/** The writes in mapping order, each after the write its sample names in `after` (which makes what it needs). */
function writeOrder(writes: readonly WriteMapping[]): WriteMapping[] {
  const ordered: WriteMapping[] = [];
  const pending = [...writes];
  while (pending.length > 0) {
    const next = pending.findIndex((mapping) => mapping.sample?.after === undefined || ordered.some((done) => done.id === mapping.sample?.after));
    if (next < 0) throw new Error(`cost samples wait on writes not measured: ${pending.map((mapping) => `${mapping.id} after ${mapping.sample?.after}`).join(', ')}`);
    ordered.push(...pending.splice(next, 1));
  }
  return ordered;
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
      else if (isReadMapping(mapping)) costs.set(mapping, await measureRoute(mapping, readSample(mapping, fixtures), subject));
    }
    // Reads first, then the writes: some write what a later one needs.
    for (const mapping of writeOrder(measured.filter((candidate): candidate is WriteMapping => candidate.kind === 'write'))) {
      costs.set(mapping, await measureRoute(mapping, writeSample(mapping, fixtures), subject));
    }
    const unmeasured = measured.filter((mapping) => !costs.has(mapping)).map(routeLabel);
    if (unmeasured.length > 0) throw new Error(`no cost sample for ${unmeasured.join(', ')}`);
    return measured.map((mapping) => costs.get(mapping) as RouteCost);
  } finally {
    await server.close();
  }
}
