/**
 * The legacy face of key transactions (list, show) and the browser applications list: v2's
 * answers computed from the model (data.keyTransactions, data.browserApps, the parent apps and
 * their timeslice rows) by the REST rules, with no NRQL.
 */
import { notFound, type V2Body, isoSeconds } from './wire.ts';
import type { SandboxData, SandboxKeyTransaction } from '../model.ts';
import { MINUTE_MS, findMetric, keyTransactionApdexName, rowsOf } from '../timeslices.ts';
import { ids, pageOf, send, text, valuesOf, type LegacyRequest, type Pairs } from './common.ts';
import { KEY_TRANSACTION_TITLES } from '../../facts/v2-titles.ts';
import { KEY_TRANSACTION_LINKS } from '../../facts/v2-values.ts';

const PAGE_SIZE = 200;
export const KEY_TRANSACTION_NOT_FOUND = KEY_TRANSACTION_TITLES.notFound;
export const KEY_TRANSACTION_LINK_TEMPLATES: V2Body = KEY_TRANSACTION_LINKS;

interface NameIdsFilters {
  name?: string;
  ids?: Set<number>;
  page: number;
}

function nameIdsFilters(pairs: Pairs): NameIdsFilters {
  const filters: NameIdsFilters = { page: 1 };
  const name = text(pairs, 'filter[name]');
  if (name !== undefined) filters.name = name.toLowerCase();
  if (valuesOf(pairs, 'filter[ids]').length > 0) filters.ids = new Set(ids(pairs, 'filter[ids]') ?? []);
  filters.page = pageOf(pairs);
  return filters;
}

/** The account's items matching the filters, by name, one page of them, and v2's Link header. */
function listPage<T extends { accountId: number; id: number; name: string }>(
  req: LegacyRequest,
  all: readonly T[],
  wrapperKey: string,
  render: (item: T) => V2Body,
  topLinks?: V2Body,
): Response {
  const { name, ids: idSet, page } = nameIdsFilters(req.params);
  const matching = all
    .filter((item) => item.accountId === req.accountId)
    .filter((item) => name === undefined || item.name.toLowerCase().includes(name))
    .filter((item) => idSet === undefined || idSet.has(item.id))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.id - b.id));
  const items = matching.slice((page - 1) * PAGE_SIZE, page * PAGE_SIZE).map(render);
  const link = req.link(page, Math.ceil(matching.length / PAGE_SIZE));
  return send(req.format, 200, { [wrapperKey]: items, ...(topLinks ? { links: topLinks } : {}) }, link ? { link } : {});
}

// ---------------------------------------------------------------------------------------------
// GET /v2/browser_applications.{format}

export function legacyBrowserApplications(req: LegacyRequest): Response {
  return listPage(req, req.data.browserApps, 'browser_applications', (app) => ({
    id: app.id,
    name: app.name,
    browser_monitoring_key: app.browserMonitoringKey,
    loader_script: app.loaderScript,
  }));
}

// ---------------------------------------------------------------------------------------------
// Key transactions

const HEALTH_BY_SEVERITY: Record<string, string> = { CRITICAL: 'red', WARNING: 'orange', NOT_ALERTING: 'green', NOT_CONFIGURED: 'unknown' };

const round2 = (value: number): number => Math.round(value * 100) / 100;

/**
 * The KT's summary over the last 10 whole minutes, from its app's rows of `metricName` (calls)
 * and its Apdex metric: response time = total / count in ms, throughput = calls per minute,
 * apdex score = (S + T/2) / (S + T + F); each rounded to 2 decimals.
 */
function keyTransactionSummary(data: SandboxData, kt: SandboxKeyTransaction, now: number): V2Body {
  const until = Math.floor(now / MINUTE_MS) * MINUTE_MS;
  const since = until - 10 * MINUTE_MS;
  const app = data.apps.find((a) => a.id === kt.appId);
  const sums = (name: string): { count: number; total: number; exclusive: number } => {
    const metric = app && findMetric(app, data, name);
    const rows = app && metric ? rowsOf(app, metric, since, until, now) : [];
    return rows.reduce((s, row) => ({ count: s.count + row.count, total: s.total + row.total, exclusive: s.exclusive + row.totalExclusive }), { count: 0, total: 0, exclusive: 0 });
  };
  const calls = sums(kt.metricName);
  const apdex = sums(keyTransactionApdexName(kt.metricName));
  const samples = apdex.count + apdex.total + apdex.exclusive;
  return {
    response_time: calls.count > 0 ? round2((calls.total / calls.count) * 1000) : null,
    throughput: round2(calls.count / 10),
    // The model has no per-transaction error rows: no errors were recorded.
    error_rate: 0,
    apdex_target: kt.apdexTarget,
    apdex_score: samples > 0 ? round2((apdex.count + apdex.total / 2) / samples) : null,
  };
}

function legacyKeyTransaction(data: SandboxData, kt: SandboxKeyTransaction, now: number): V2Body {
  const body: V2Body = {
    id: kt.id,
    name: kt.name,
    transaction_name: kt.transactionName,
    health_status: kt.reporting ? (HEALTH_BY_SEVERITY[kt.alertSeverity] ?? 'unknown') : 'gray',
    reporting: kt.reporting,
  };
  // Every key of rest-v2-shapes.md §6 (client-go's key_transactions_test.go captures; swagger
  // KeyTransactionResponseType for end_user_summary). Reporting means it reported this minute; no
  // timestamp otherwise (rest-v2.md §3.3), so null.
  body.last_reported_at = kt.reporting ? isoSeconds(Math.floor(now / MINUTE_MS) * MINUTE_MS) : null;
  body.application_summary = kt.reporting
    ? keyTransactionSummary(data, kt, now)
    : { response_time: null, throughput: null, error_rate: null, apdex_target: kt.apdexTarget, apdex_score: null };
  // The model holds no per-transaction browser numbers, only the browser apdex target.
  body.end_user_summary = { response_time: null, throughput: null, apdex_target: kt.browserApdexTarget, apdex_score: null };
  body.links = { application: kt.appId };
  return body;
}

export function legacyKeyTransactions(req: LegacyRequest): Response {
  return listPage(req, req.data.keyTransactions, 'key_transactions', (kt) => legacyKeyTransaction(req.data, kt, req.now), KEY_TRANSACTION_LINK_TEMPLATES);
}

export function legacyKeyTransactionShow(req: LegacyRequest): Response {
  const id = req.path.id ?? '';
  const kt = /^[1-9]\d{0,14}$/.test(id) ? req.data.keyTransactions.find((k) => k.id === Number(id) && k.accountId === req.accountId) : undefined;
  if (!kt) throw notFound(KEY_TRANSACTION_NOT_FOUND);
  return send(req.format, 200, { key_transaction: legacyKeyTransaction(req.data, kt, req.now), links: KEY_TRANSACTION_LINK_TEMPLATES });
}
