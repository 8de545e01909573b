import { z } from 'zod';
import { keyTransactionSumsQuery } from '../../mappings/key-transactions/key-transaction-queries.ts';
import { acceptedFormulasOf } from '../../mappings/common/metric-values.ts';
import { appInstancesQuery, currentWindow, facetedSummaryQuery } from '../../mappings/common/topology-queries.ts';
import { EntityKinds } from '../routes/entity-ref.ts';
import { entityQuery } from '../upstream/entity-query.ts';
import { UNSCOPED_ROWS, expandFormula, metricNamesQuery, sinceUntil, timesliceWhere } from '../upstream/nrql.ts';
import type { ProbeResult, Verdict } from './report.ts';

/**
 * The named probes of `npm run probe`: each checks on a real account one fact the mappings take
 * as UNCONFIRMED, and answers confirmed, refuted or unknown (no data to tell) with its evidence.
 * Reads only: the static documents queries/Probe*.graphql (every input a variable); NRQL is
 * built by src/upstream/nrql.ts and the mappings' query modules (mappings/<resource>/*-queries.ts),
 * whose client values go through quoteLiteral, the one literal function. Evidence is numbers,
 * ids and names, never a key.
 */
export type ProbeOperation =
  | 'ProbeEntities'
  | 'ProbeKeyTransactions'
  | 'ProbeApplicationInstances'
  | 'ProbeNrql'
  | 'ProbeBrowserLoaders'
  | 'ProbeNrqlCondition'
  | 'ProbeAlertPolicies'
  | 'ProbeConditionEntity';
export const PROBE_OPERATIONS: readonly ProbeOperation[] = ['ProbeEntities', 'ProbeKeyTransactions', 'ProbeApplicationInstances', 'ProbeNrql', 'ProbeBrowserLoaders', 'ProbeNrqlCondition', 'ProbeAlertPolicies', 'ProbeConditionEntity'];

export interface ProbeContext {
  accountId: number;
  /** Epoch ms the probe runs at. */
  now: number;
  /** One read; a failure throws (the probe then answers unknown with the reason). */
  read(operation: ProbeOperation, variables: Record<string, unknown>): Promise<unknown>;
}

export interface Probe {
  name: string;
  checks: string;
  settles: string;
  run(ctx: ProbeContext, shared: SharedReads): Promise<{ verdict: Verdict; evidence: string }>;
}

/** Seconds an NRQL query of the probe may take (NerdGraph's default is 5, its maximum 120). */
const NRQL_TIMEOUT_SECONDS = 30;
/** How many apps (or key transactions) a probe reads in detail: a sample, not the account. */
const SAMPLE = 5;
const HOUR_MS = 3_600_000;

const num = z.number().nullable().optional();
const Outline = z.object({
  guid: z.string(),
  accountId: z.number().int(),
  name: z.string().nullable().optional(),
  reporting: z.boolean().nullable().optional(),
  applicationId: z.number().int().nullable().optional(),
  servingApmApplicationId: z.number().int().nullable().optional(),
  apmSummary: z.object({ errorRate: num }).nullable().optional(),
});
type Outline = z.infer<typeof Outline>;
const SearchAnswer = z.object({
  actor: z.object({ entitySearch: z.object({ results: z.object({ entities: z.array(z.unknown()).nullable() }).nullable() }).nullable() }),
});
const NrqlAnswer = z.object({ actor: z.object({ account: z.object({ nrql: z.object({ results: z.array(z.unknown()).nullable() }).nullable() }).nullable() }) });

const InstancesAnswer = z.object({
  actor: z.object({
    entity: z
      .object({
        applicationId: z.number().int().optional(),
        applicationInstancesV2: z.object({ applicationInstances: z.array(z.object({ details: z.object({ id: z.string(), host: z.string() }) })).nullable().optional() }).nullable().optional(),
      })
      .nullable(),
  }),
});

export type EntityKindName = keyof typeof EntityKinds;

/** An app's instances as applicationInstancesV2 lists them, and as its Metric rows of the last 10 minutes name them. */
export interface AppAgents {
  details: Array<{ id: string; host: string }>;
  realAgentIds: Set<string>;
  hosts: Set<string>;
}


/** Reads several probes need, made once per run. */
export class SharedReads {
  private readonly searches = new Map<EntityKindName, Promise<Outline[]>>();
  private readonly ctx: ProbeContext;

  constructor(ctx: ProbeContext) {
    this.ctx = ctx;
  }

  /** The first page (up to 200) of one kind of entity of the account, valid outlines only. */
  entities(kind: EntityKindName): Promise<Outline[]> {
    let search = this.searches.get(kind);
    if (!search) {
      const query = entityQuery([
        { field: 'domain', op: '=', value: EntityKinds[kind].domain },
        { field: 'type', op: '=', value: EntityKinds[kind].type },
        { field: 'accountId', op: '=', value: this.ctx.accountId },
      ]);
      search = this.ctx.read('ProbeEntities', { query }).then((data) => {
        const entities = SearchAnswer.parse(data).actor.entitySearch?.results?.entities ?? [];
        return entities.flatMap((entity) => {
          const parsed = Outline.safeParse(entity);
          return parsed.success && parsed.data.accountId === this.ctx.accountId ? [parsed.data] : [];
        });
      });
      this.searches.set(kind, search);
    }
    return search;
  }

  private readonly agents = new Map<string, Promise<AppAgents>>();

  /** The instances of an APM app, both ways (ProbeApplicationInstances and appInstancesQuery). */
  agentsOf(app: { guid: string; applicationId: number }): Promise<AppAgents> {
    let read = this.agents.get(app.guid);
    if (!read) {
      read = (async () => {
        const entity = InstancesAnswer.parse(await this.ctx.read('ProbeApplicationInstances', { guid: app.guid })).actor.entity;
        const details = (entity?.applicationInstancesV2?.applicationInstances ?? []).map((instance) => instance.details);
        const [row] = await this.nrql(appInstancesQuery({ appIds: [app.applicationId], ...currentWindow(this.ctx.now) }));
        return { details, realAgentIds: new Set(listOf(row?.instances)), hosts: new Set(listOf(row?.hosts)) };
      })();
      this.agents.set(app.guid, read);
    }
    return read;
  }

  /** NRQL result rows of the account. */
  async nrql(query: string): Promise<Array<Record<string, unknown>>> {
    const data = await this.ctx.read('ProbeNrql', { accountId: this.ctx.accountId, query, timeout: NRQL_TIMEOUT_SECONDS });
    const rows = NrqlAnswer.parse(data).actor.account?.nrql?.results ?? [];
    return rows.filter((row): row is Record<string, unknown> => row !== null && typeof row === 'object' && !Array.isArray(row));
  }
}

const numberOf = (value: unknown): number | undefined => (typeof value === 'number' && Number.isFinite(value) ? value : undefined);
const listOf = (value: unknown): string[] => (Array.isArray(value) ? value.map(String) : []);
const formula = (metric: string, value: string): string => {
  const expression = acceptedFormulasOf(metric)[value];
  if (expression === undefined) throw new Error(`no formula ${metric}:${value}`);
  return expression;
};
const round = (value: number, digits = 4): number => Number(value.toPrecision(digits));

// ---------------------------------------------------------------------------------------------

export const errorRateIsPercent: Probe = {
  name: 'apm-error-rate-is-percent',
  checks: 'apmSummary.errorRate is a percentage (0-100), not a fraction (0-1): compared with Errors/all over HttpDispatcher + OtherTransaction/all calls from NRQL',
  settles: "mappings/applications/application.ts APPLICATION_ASSUMPTIONS: error_rate is apmSummary.errorRate unscaled; hosts/instances compute a percentage 'as the application summary scale'",
  async run(ctx, shared) {
    const apps = (await shared.entities('apmApplication')).filter((app) => app.reporting === true && numberOf(app.apmSummary?.errorRate) !== undefined);
    if (apps.length === 0) return { verdict: 'unknown', evidence: 'no reporting APM application with apmSummary.errorRate in the first page' };
    const rates = apps.map((app) => ({ app, rate: app.apmSummary?.errorRate as number }));
    const above = rates.filter(({ rate }) => rate > 1);
    if (above.length > 0) {
      const top = above.reduce((a, b) => (b.rate > a.rate ? b : a));
      return { verdict: 'confirmed', evidence: `${above.length} of ${rates.length} reporting apps have errorRate above 1 (app ${top.app.applicationId}: ${top.rate}); a fraction cannot exceed 1` };
    }
    // All within 0-1: tell the scale from the NRQL ratio of the same apps' last 10 minutes.
    const window = currentWindow(ctx.now);
    const items = [
      { alias: 'errors', metrics: ['Errors/all'], expression: formula('Errors/all', 'error_count') },
      { alias: 'transactions', metrics: ['HttpDispatcher', 'OtherTransaction/all'], expression: formula('HttpDispatcher', 'call_count') },
    ];
    let percent = 0;
    let fraction = 0;
    const examples: string[] = [];
    for (const { app, rate } of rates.filter(({ rate, app }) => rate > 0 && app.applicationId != null).slice(0, SAMPLE)) {
      const [row] = await shared.nrql(facetedSummaryQuery({ scope: [{ attribute: 'appId', value: app.applicationId as number }], facet: 'appId', items, ...window }));
      const errors = numberOf(row?.errors) ?? 0;
      const transactions = numberOf(row?.transactions) ?? 0;
      if (errors <= 0 || transactions <= 0) continue;
      const ratio = errors / transactions;
      // Nearer (by factor) to the ratio itself, or to 100 times it?
      if (Math.abs(Math.log(rate / (100 * ratio))) < Math.abs(Math.log(rate / ratio))) percent++;
      else fraction++;
      if (examples.length < 3) examples.push(`app ${app.applicationId}: errorRate ${round(rate)}, NRQL ratio ${round(ratio)}`);
    }
    const seen = `${examples.join('; ')}${examples.length > 0 ? '; ' : ''}all ${rates.length} rates within 0-1`;
    if (percent + fraction === 0) return { verdict: 'unknown', evidence: `no app with errors in the last 10 minutes to compare (${rates.length} rates within 0-1)` };
    if (percent > fraction) return { verdict: 'confirmed', evidence: `${percent} of ${percent + fraction} apps read as percent (${seen})` };
    if (fraction > percent) return { verdict: 'refuted', evidence: `${fraction} of ${percent + fraction} apps read as a fraction (${seen})` };
    return { verdict: 'unknown', evidence: `as many apps read as percent as as a fraction (${seen})` };
  },
};

const KeyTransactionsAnswer = z.object({ actor: z.object({ entities: z.array(z.unknown()).nullable() }) });
const KeyTransaction = z.object({
  guid: z.string(),
  accountId: z.number().int(),
  reporting: z.boolean().nullable().optional(),
  metricName: z.string(),
  application: z.object({ entity: z.object({ applicationId: z.number().int().nullable().optional() }).nullable().optional() }).nullable().optional(),
});

export const keyTransactionRowsCarryEntityGuid: Probe = {
  name: 'key-transaction-rows-carry-entity-guid',
  checks: "a key transaction's timeslices answer `FROM Metric WHERE entity.guid = '<KT GUID>'` (its parent app's rows of its metricName)",
  settles: 'mappings/key-transactions/key-transaction.ts KEY_TRANSACTION_ASSUMPTIONS: KT summaries are NRQL on the KT entity.guid',
  async run(ctx, shared) {
    const outlines = (await shared.entities('keyTransaction')).slice(0, 25);
    if (outlines.length === 0) return { verdict: 'unknown', evidence: 'the account has no key transactions' };
    const data = await ctx.read('ProbeKeyTransactions', { guids: outlines.map((outline) => outline.guid) });
    const kts = (KeyTransactionsAnswer.parse(data).actor.entities ?? [])
      .flatMap((entity) => {
        const parsed = KeyTransaction.safeParse(entity);
        return parsed.success && parsed.data.accountId === ctx.accountId ? [parsed.data] : [];
      })
      .filter((kt) => kt.reporting === true && kt.application?.entity?.applicationId != null)
      .slice(0, SAMPLE);
    if (kts.length === 0) return { verdict: 'unknown', evidence: `no reporting key transaction with a parent app among ${outlines.length}` };
    const window = currentWindow(ctx.now);
    const rows = await shared.nrql(keyTransactionSumsQuery({ guids: kts.map((kt) => kt.guid), ...window }));
    const withRows = new Set(rows.filter((row) => (numberOf(row.calls) ?? 0) > 0).map((row) => String(row['entity.guid'] ?? row.facet)));
    const found: string[] = [];
    const missing: string[] = [];
    for (const kt of kts) {
      if (withRows.has(kt.guid)) {
        found.push(kt.guid);
        continue;
      }
      // No rows by GUID: does the parent app have rows of the KT's metric in the same window?
      const [names] = await shared.nrql(metricNamesQuery({ scope: [{ attribute: 'appId', value: kt.application?.entity?.applicationId as number }], names: [kt.metricName], ...window }));
      if (listOf(names?.names).includes(kt.metricName)) missing.push(`${kt.metricName} (app ${kt.application?.entity?.applicationId})`);
    }
    if (missing.length > 0) {
      return { verdict: 'refuted', evidence: `${missing.length} of ${kts.length} reporting key transactions have no rows by entity.guid while their app has rows of their metric: ${missing.slice(0, 3).join('; ')}` };
    }
    if (found.length > 0) return { verdict: 'confirmed', evidence: `${found.length} of ${kts.length} reporting key transactions have rows by entity.guid in the last 10 minutes (the others had no data)` };
    return { verdict: 'unknown', evidence: `${kts.length} reporting key transactions, none with rows of its metric in the last 10 minutes` };
  },
};

/**
 * What one attribute of an app's instances reads as in applicationInstancesV2 (`details`) against
 * its Metric rows of the last 10 minutes, over the sampled reporting apps: refuted as soon as one
 * app's two sets share nothing, confirmed when some share, unknown without both sides.
 */
async function instancesAgainstRows(
  shared: SharedReads,
  sides: { details: string; rows: string; attribute: string; unit: string; valuesOf: (agents: AppAgents) => string[]; rowsOf: (agents: AppAgents) => ReadonlySet<string> },
): Promise<{ verdict: Verdict; evidence: string }> {
  const apps = (await shared.entities('apmApplication')).filter((app) => app.reporting === true && app.applicationId != null).slice(0, SAMPLE);
  if (apps.length === 0) return { verdict: 'unknown', evidence: 'no reporting APM application in the first page' };
  const matched: string[] = [];
  const disjoint: string[] = [];
  for (const app of apps) {
    const agents = await shared.agentsOf({ guid: app.guid, applicationId: app.applicationId as number });
    const values = sides.valuesOf(agents);
    const rows = sides.rowsOf(agents);
    if (values.length === 0 || rows.size === 0) continue;
    const common = values.filter((value) => rows.has(value));
    if (common.length > 0) matched.push(`app ${app.applicationId}: ${common.length} of ${values.length} ${sides.unit}`);
    else disjoint.push(`app ${app.applicationId}: ${sides.details} ${values.slice(0, 2).join(', ')}; ${sides.rows} ${[...rows].slice(0, 2).join(', ')}`);
  }
  if (disjoint.length > 0) return { verdict: 'refuted', evidence: `${disjoint.length} app(s) whose instance ${sides.unit} share none with ${sides.rows}: ${disjoint.slice(0, 2).join('; ')}` };
  if (matched.length > 0) return { verdict: 'confirmed', evidence: `${sides.details} found among ${sides.rows}: ${matched.slice(0, 3).join('; ')}` };
  return { verdict: 'unknown', evidence: `${apps.length} reporting apps, none with both instances and ${sides.attribute} rows in the last 10 minutes` };
}

export const instanceIdIsRealAgentId: Probe = {
  name: 'instance-id-is-real-agent-id',
  checks: 'applicationInstancesV2 details.id is the realAgentId the Metric rows of that instance carry',
  settles: 'mappings/hosts-and-instances/app-topology.ts TOPOLOGY_ASSUMPTIONS: instance ids are details.id = realAgentId (instance metric data filters on realAgentId)',
  run: (_ctx, shared) =>
    instancesAgainstRows(shared, { details: 'details.id', rows: 'realAgentId', attribute: 'realAgentId', unit: 'ids', valuesOf: (agents) => agents.details.map((detail) => detail.id), rowsOf: (agents) => agents.realAgentIds }),
};

export const metricHostIsInstanceHost: Probe = {
  name: 'metric-host-is-instance-host',
  checks: 'the Metric attribute `host` carries the host names applicationInstancesV2 gives as details.host',
  settles: 'mappings/hosts-and-instances/app-topology.ts TOPOLOGY_ASSUMPTIONS: host summaries FACET host and host metric data WHERE host = details.host; host ids hash details.host',
  run: (_ctx, shared) =>
    instancesAgainstRows(shared, { details: 'details.host', rows: 'Metric host', attribute: 'host', unit: 'hosts', valuesOf: (agents) => [...new Set(agents.details.map((detail) => detail.host))], rowsOf: (agents) => agents.hosts }),
};

export const browserAppCarriesApmAppId: Probe = {
  name: 'browser-app-carries-apm-app-id',
  checks: "the browser app of an APM app (servingApmApplicationId set) has the APM app's id as its applicationId",
  settles: "mappings/applications/application.ts: end_user_apdex_threshold reads the browser app whose GUID is computed from the APM app's id",
  async run(_ctx, shared) {
    const attached = (await shared.entities('browserApplication')).filter((app) => app.servingApmApplicationId != null);
    if (attached.length === 0) return { verdict: 'unknown', evidence: 'no browser application serving an APM app in the first page' };
    const differ = attached.filter((app) => app.applicationId !== app.servingApmApplicationId);
    if (differ.length > 0) {
      const examples = differ.slice(0, 3).map((app) => `applicationId ${app.applicationId ?? 'null'} serves APM app ${app.servingApmApplicationId}`);
      return { verdict: 'refuted', evidence: `${differ.length} of ${attached.length} APM-attached browser apps have another id: ${examples.join('; ')}` };
    }
    return { verdict: 'confirmed', evidence: `all ${attached.length} APM-attached browser apps have their APM app's id (e.g. ${attached[0]?.applicationId})` };
  },
};

/** Names with rows of one mobile app over the last hour, by one GUID attribute; undefined when the query failed. */
async function mobileNames(shared: SharedReads, attribute: 'entity.guid' | 'entityGuid', guid: string, now: number): Promise<{ names: string[] } | { error: string }> {
  const until = Math.floor(now / 60_000) * 60_000;
  try {
    const [row] = await shared.nrql(metricNamesQuery({ scope: [{ attribute, value: guid }], since: until - HOUR_MS, until }));
    return { names: listOf(row?.names) };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

function mobileProbe(attribute: 'entity.guid' | 'entityGuid', settles: string): Probe {
  const other = attribute === 'entity.guid' ? 'entityGuid' : 'entity.guid';
  return {
    name: `mobile-rows-carry-${attribute === 'entity.guid' ? 'entity-guid' : 'entityGuid'}`,
    checks: `a mobile app's Metric rows carry its GUID as \`${attribute}\``,
    settles,
    async run(ctx, shared) {
      const apps = (await shared.entities('mobileApplication')).filter((app) => app.reporting === true).slice(0, SAMPLE);
      if (apps.length === 0) return { verdict: 'unknown', evidence: 'no reporting mobile application in the first page' };
      const seen: string[] = [];
      for (const app of apps) {
        const by = await mobileNames(shared, attribute, app.guid, ctx.now);
        const byOther = await mobileNames(shared, other, app.guid, ctx.now);
        const count = (side: typeof by): string => ('names' in side ? `${side.names.length} names` : `error: ${side.error}`);
        const evidence = `mobile app ${app.applicationId}: by ${attribute} ${count(by)}, by ${other} ${count(byOther)} in the last hour`;
        if ('names' in by && by.names.length > 0) return { verdict: 'confirmed', evidence };
        if ('names' in byOther && byOther.names.length > 0) return { verdict: 'refuted', evidence };
        seen.push(evidence);
      }
      return { verdict: 'unknown', evidence: `no rows by either attribute (${seen.slice(0, 2).join('; ')})` };
    },
  };
}

export const mobileRowsCarryEntityGuid = mobileProbe('entityGuid', "mobile metric routes (mappings/mobile-applications/metric-*.ts): New Relic's own mobile code filters timeslices on entityGuid");
export const mobileRowsCarryEntityDotGuid = mobileProbe('entity.guid', 'mappings/mobile-applications/metric-*.ts: mobile timeslices are selected by entity.guid');

/** Metrics agents record unscoped only (no transaction scopes them): with or without the filter, the same rows. */
const UNSCOPED_METRICS = ['HttpDispatcher', 'OtherTransaction/all'];

export const unscopedRowsHaveNoScope: Probe = {
  name: 'unscoped-rows-have-no-scope',
  checks: `the same unscoped timeslice metric (${UNSCOPED_METRICS.join(', ')}) counted over one app's last 10 minutes with and without \`${UNSCOPED_ROWS}\` gives the same count`,
  settles: "mappings/common/metric-values.ts: only unscoped rows are read (`scope IS NULL`); if unscoped rows carried a scope, every metric the gateway reads would read zero",
  async run(ctx, shared) {
    const apps = (await shared.entities('apmApplication')).filter((app) => app.reporting === true && app.applicationId != null).slice(0, SAMPLE);
    if (apps.length === 0) return { verdict: 'unknown', evidence: 'no reporting APM application in the first page' };
    const window = currentWindow(ctx.now);
    const calls = expandFormula(formula('HttpDispatcher', 'call_count'), 60);
    const filtered = ` AND ${UNSCOPED_ROWS}`;
    const seen: string[] = [];
    for (const app of apps) {
      const where = timesliceWhere([{ attribute: 'appId', value: app.applicationId as number }], UNSCOPED_METRICS);
      // timesliceWhere always ends with the filter: the same query without it is the other side.
      if (!where.endsWith(filtered)) throw new Error('the timeslice filter moved: the probe no longer knows the query without it');
      const count = async (conditions: string): Promise<number> => numberOf((await shared.nrql(`SELECT ${calls} AS calls FROM Metric WHERE ${conditions} ${sinceUntil(window.since, window.until)}`))[0]?.calls) ?? 0;
      const every = await count(where.slice(0, -filtered.length));
      if (every <= 0) continue;
      const unscoped = await count(where);
      const evidence = `app ${app.applicationId}: ${round(every)} rows' calls without the filter, ${round(unscoped)} with \`${UNSCOPED_ROWS}\``;
      if (unscoped !== every) return { verdict: 'refuted', evidence: `${evidence}: unscoped rows carry a scope` };
      seen.push(evidence);
      if (seen.length >= 2) break;
    }
    if (seen.length === 0) return { verdict: 'unknown', evidence: `${apps.length} reporting apps, none with ${UNSCOPED_METRICS.join(' or ')} rows in the last 10 minutes` };
    return { verdict: 'confirmed', evidence: `${seen.join('; ')}: the same` };
  },
};

export const PROBES: readonly Probe[] = [
  errorRateIsPercent,
  keyTransactionRowsCarryEntityGuid,
  instanceIdIsRealAgentId,
  metricHostIsInstanceHost,
  browserAppCarriesApmAppId,
  mobileRowsCarryEntityGuid,
  mobileRowsCarryEntityDotGuid,
  unscopedRowsHaveNoScope,
];

/** Runs every probe; a probe that fails answers unknown with the (key-free) reason. */
export async function runProbes(ctx: ProbeContext, redact: (text: string) => string, shared = new SharedReads(ctx)): Promise<ProbeResult[]> {
  const results: ProbeResult[] = [];
  for (const probe of PROBES) {
    let outcome: { verdict: Verdict; evidence: string };
    try {
      outcome = await probe.run(ctx, shared);
    } catch (error) {
      outcome = { verdict: 'unknown', evidence: `the probe could not read what it needs: ${(error as Error).message}` };
    }
    results.push({ name: probe.name, checks: probe.checks, settles: probe.settles, verdict: outcome.verdict, evidence: redact(outcome.evidence) });
  }
  return results;
}
