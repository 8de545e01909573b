/**
 * The topology reads of the legacy face: `/v2/applications/{id}/hosts` and `/instances`, list
 * and show, as REST v2 answered them, computed straight from the model: the current hosts
 * (hosts.ts), their instances, and 10-minute summaries from the split timeslice rows
 * (instance-split.ts) by the REST formulas, with no NRQL.
 */
import { V2Titles } from './titles.ts';
import { notFound, type V2Body } from './wire.ts';
import { currentHosts } from '../hosts.ts';
import { hostRowsOf, instanceRowsOf } from '../instance-split.ts';
import type { SandboxApp, SandboxHost, SandboxInstance } from '../model.ts';
import { findMetric, type SandboxMetric, type TimesliceRow } from '../timeslices.ts';
import { applicationOf, ids, pageOf, send, text, type LegacyRequest } from './common.ts';
import { APPLICATION_HOST_TITLES } from '../../facts/v2-titles.ts';
import { APPLICATION_HOST_LINKS, APPLICATION_INSTANCE_LINKS } from '../../facts/v2-values.ts';

const PAGE_SIZE = 200;
const SUMMARY_MINUTES = 10;
const ID = /^[1-9]\d{0,14}$/;

const HOST_NOT_FOUND = APPLICATION_HOST_TITLES.hostNotFound;
const INSTANCE_NOT_FOUND = APPLICATION_HOST_TITLES.instanceNotFound;

const HOST_LINK_TEMPLATES: V2Body = APPLICATION_HOST_LINKS;
const INSTANCE_LINK_TEMPLATES: V2Body = APPLICATION_INSTANCE_LINKS;

const HEALTH_BY_SEVERITY: Record<string, string> = { CRITICAL: 'red', WARNING: 'orange', NOT_ALERTING: 'green', NOT_CONFIGURED: 'unknown' };

type RowsOf = (metricName: string) => TimesliceRow[];

interface Sums {
  rows: number;
  count: number;
  total: number;
  totalExclusive: number;
}

function sums(rows: readonly TimesliceRow[]): Sums {
  const out = { rows: rows.length, count: 0, total: 0, totalExclusive: 0 };
  for (const row of rows) {
    out.count += row.count;
    out.total += row.total;
    out.totalExclusive += row.totalExclusive;
  }
  return out;
}

/** Two decimals after dropping float noise, as v2 showed summary numbers. */
function round2(value: number): number {
  return Math.round(Number(value.toPrecision(12)) * 100) / 100;
}

/** Apdex score (S + T/2) / (S + T + F): S in count, T in total, F in totalExclusive. */
function apdexScore(apdex: Sums): number {
  const samples = apdex.count + apdex.total + apdex.totalExclusive;
  return samples === 0 ? 0 : round2((apdex.count + apdex.total / 2) / samples);
}

/** v2's application_summary (and end_user_summary) over the last 10 minutes; none without rows. */
function summaries(rowsOf: RowsOf, instanceCount: number): V2Body {
  const web = sums(rowsOf('HttpDispatcher'));
  const other = sums(rowsOf('OtherTransaction/all'));
  const errors = sums(rowsOf('Errors/all'));
  const apdex = sums(rowsOf('Apdex'));
  const endUser = sums(rowsOf('EndUser'));
  const endUserApdex = sums(rowsOf('EndUser/Apdex'));
  if (web.rows + other.rows + errors.rows + apdex.rows + endUser.rows + endUserApdex.rows === 0) return {};
  const transactions = web.count + other.count;
  const out: V2Body = {
    application_summary: {
      response_time: web.count === 0 ? 0 : round2((web.total / web.count) * 1000),
      throughput: round2(web.count / SUMMARY_MINUTES),
      // A percentage of all transactions (web and background).
      error_rate: transactions === 0 ? 0 : round2((100 * errors.count) / transactions),
      apdex_score: apdexScore(apdex),
      instance_count: instanceCount,
    },
  };
  if (endUser.count > 0) {
    out.end_user_summary = {
      response_time: round2(endUser.total / endUser.count),
      throughput: round2(endUser.count / SUMMARY_MINUTES),
      apdex_score: apdexScore(endUserApdex),
    };
  }
  return out;
}

/** The app's rows of one metric for a host or instance over the 10 whole minutes before now. */
function rowsFor(req: LegacyRequest, app: SandboxApp, rows: (metric: SandboxMetric, since: number, until: number) => TimesliceRow[]): RowsOf {
  const until = Math.floor(req.now / 60_000) * 60_000;
  const since = until - SUMMARY_MINUTES * 60_000;
  return (name) => {
    const metric = findMetric(app, req.data, name);
    return metric ? rows(metric, since, until) : [];
  };
}

function common(app: SandboxApp): { application_name: string; language: string; health_status: string } {
  return {
    application_name: app.name,
    language: app.language,
    health_status: app.reporting ? (HEALTH_BY_SEVERITY[app.alertSeverity] ?? 'unknown') : 'gray',
  };
}

function legacyHost(req: LegacyRequest, app: SandboxApp, host: SandboxHost): V2Body {
  const rowsOf = rowsFor(req, app, (metric, since, until) => hostRowsOf(app, host.name, metric, since, until, req.now));
  const { application_name, language, health_status } = common(app);
  return {
    id: host.id,
    application_name,
    host: host.name,
    language,
    health_status,
    ...summaries(rowsOf, host.instances.length),
    // v2 linked the host's server (rest-v2-shapes.md §2 Host, swagger ApplicationHostLinksResponse
    // `server`); the world has no Servers-API servers (a retired product), so the key holds null.
    links: { application: app.id, application_instances: host.instances.map((instance) => instance.id).sort((a, b) => a - b), server: null },
  };
}

function legacyInstance(req: LegacyRequest, app: SandboxApp, host: SandboxHost, instance: SandboxInstance): V2Body {
  const rowsOf = rowsFor(req, app, (metric, since, until) => instanceRowsOf(app, instance.id, metric, since, until, req.now));
  const { application_name, language, health_status } = common(app);
  return {
    id: instance.id,
    application_name,
    host: host.name,
    port: instance.port,
    language,
    health_status,
    ...summaries(rowsOf, 1),
    // As for hosts: swagger ApplicationInstanceLinksResponse `server`, no server in this world.
    links: { application: app.id, application_host: host.id, server: null },
  };
}

interface TopologyFilters {
  hostname?: string;
  ids?: Set<number>;
  page: number;
}

function topologyFilters(req: LegacyRequest): TopologyFilters {
  const filters: TopologyFilters = { page: 1 };
  const hostname = text(req.params, 'filter[hostname]');
  if (hostname !== undefined) filters.hostname = hostname.toLowerCase();
  const idList = ids(req.params, 'filter[ids]');
  if (idList !== undefined) filters.ids = new Set(idList);
  filters.page = pageOf(req.params);
  return filters;
}

function matches(filters: TopologyFilters, id: number, hostName: string): boolean {
  return (filters.ids === undefined || filters.ids.has(id)) && (filters.hostname === undefined || hostName.toLowerCase().includes(filters.hostname));
}

function sendPage(req: LegacyRequest, key: string, items: V2Body[], page: number, links: V2Body): Response {
  const link = req.link(page, Math.ceil(items.length / PAGE_SIZE));
  return send(req.format, 200, { [key]: items.slice((page - 1) * PAGE_SIZE, page * PAGE_SIZE), links }, link ? { link } : {});
}

const byId = <T extends { id: number }>(a: T, b: T): number => a.id - b.id;

export function legacyHosts(req: LegacyRequest): Response {
  const filters = topologyFilters(req);
  const app = applicationOf(req);
  const items = [...currentHosts(app)]
    .sort(byId)
    .filter((host) => matches(filters, host.id, host.name))
    .map((host) => legacyHost(req, app, host));
  return sendPage(req, 'application_hosts', items, filters.page, HOST_LINK_TEMPLATES);
}

export function legacyInstances(req: LegacyRequest): Response {
  const filters = topologyFilters(req);
  const app = applicationOf(req);
  const items = currentHosts(app)
    .flatMap((host) => host.instances.map((instance) => ({ id: instance.id, host, instance })))
    .sort(byId)
    .filter(({ id, host }) => matches(filters, id, host.name))
    .map(({ host, instance }) => legacyInstance(req, app, host, instance));
  return sendPage(req, 'application_instances', items, filters.page, INSTANCE_LINK_TEMPLATES);
}

/** The app of `{id}` (its 404 first, whatever the item id), then the numeric `{key}` (the item's 404). */
function appAndItemId(req: LegacyRequest, key: string, title: string): { app: SandboxApp; itemId: number } {
  if (!ID.test(req.path.id ?? '')) throw notFound(V2Titles.applicationNotFound);
  const app = applicationOf(req);
  const raw = req.path[key] ?? '';
  if (!ID.test(raw)) throw notFound(title);
  return { app, itemId: Number(raw) };
}

export function legacyHostShow(req: LegacyRequest): Response {
  const { app, itemId } = appAndItemId(req, 'host_id', HOST_NOT_FOUND);
  const host = currentHosts(app).find((candidate) => candidate.id === itemId);
  if (!host) throw notFound(HOST_NOT_FOUND);
  return send(req.format, 200, { application_host: legacyHost(req, app, host), links: HOST_LINK_TEMPLATES });
}

export function legacyInstanceShow(req: LegacyRequest): Response {
  const { app, itemId } = appAndItemId(req, 'instance_id', INSTANCE_NOT_FOUND);
  for (const host of currentHosts(app)) {
    const instance = host.instances.find((candidate) => candidate.id === itemId);
    if (instance) return send(req.format, 200, { application_instance: legacyInstance(req, app, host, instance), links: INSTANCE_LINK_TEMPLATES });
  }
  throw notFound(INSTANCE_NOT_FOUND);
}
