/**
 * The legacy face's route table: every REST v2 route the sandbox answers, as one entry each
 * (template, methods, handler), dispatched by face.ts with its own template matcher. A template
 * with several entries (GET, PUT and DELETE on one application) answers 405 with all of them.
 */
import type { V2Body } from './wire.ts';
import { currentHosts } from '../hosts.ts';
import type { SandboxData } from '../model.ts';
import {
  APPLICATION_LINK_TEMPLATES,
  applicationOf,
  ids,
  invalid,
  legacyApplication,
  pageOf,
  send,
  text,
  valuesOf,
  type LegacyRequest,
  type LegacyRoute,
  type Pairs,
} from './common.ts';
import { ALERT_ROUTES } from './alerts.ts';
// Retired products and users.
import { RETIRED_LEGACY_ROUTES } from './retired.ts';
import { USER_LEGACY_ROUTES } from './users.ts';
import { LABEL_ROUTES } from './labels.ts';
// alerts_channels and alerts_policy_channels (notifications.ts).
import { NOTIFICATION_ROUTES } from './notifications.ts';
import { AI_ISSUES_ROUTES } from './ai-issues.ts';
import { legacyHostShow, legacyHosts, legacyInstanceShow, legacyInstances } from './topology.ts';
import { appMetricSource, legacyMetricData, legacyMetricNames, type MetricRequest, type MetricSource } from './metrics.ts';
import { hostMetricSource, instanceMetricSource, mobileMetricSource } from './metric-targets.ts';
import { listMobileApplicationsRoute, showMobileApplicationRoute } from './mobile.ts';
import { legacyBrowserApplications, legacyKeyTransactionShow, legacyKeyTransactions } from './kt-browser.ts';
import { legacyCreateDeployment, legacyDeleteDeployment, legacyDeploymentV0, legacyDeployments } from './deployments.ts';
import { legacyCreateApplication, legacyDeleteApplication, legacyUpdateApplication } from './writes.ts';
import { REQUEST_RULE_TITLES } from '../../facts/rule-titles.ts';

const PAGE_SIZE = 200;

// ---------------------------------------------------------------------------------------------
// GET /v2/applications.{format}

interface ListFilters {
  name?: string;
  host?: string;
  ids?: Set<number>;
  language?: string;
  excludeLinks: boolean;
  page: number;
}

function listFilters(pairs: Pairs): ListFilters {
  const filters: ListFilters = { excludeLinks: false, page: 1 };
  const name = text(pairs, 'filter[name]');
  if (name !== undefined) filters.name = name.toLowerCase();
  const host = text(pairs, 'filter[host]');
  if (host !== undefined) filters.host = host.toLowerCase();
  const idList = [...(ids(pairs, 'filter[ids]') ?? []), ...(ids(pairs, 'filter[id]') ?? [])];
  if (valuesOf(pairs, 'filter[ids]').length > 0 || valuesOf(pairs, 'filter[id]').length > 0) filters.ids = new Set(idList);
  const language = valuesOf(pairs, 'filter[language]').at(-1)?.trim().toLowerCase();
  if (language) {
    if (!/^[a-z0-9_.-]{1,32}$/.test(language)) throw invalid(REQUEST_RULE_TITLES.languageFilter);
    filters.language = language;
  }
  const exclude = valuesOf(pairs, 'exclude_links').at(-1)?.trim().toLowerCase();
  if (exclude !== undefined) {
    if (['true', '1', 'yes', 'on', 't'].includes(exclude)) filters.excludeLinks = true;
    else if (!['false', '0', 'no', 'off', 'f', ''].includes(exclude)) throw invalid(REQUEST_RULE_TITLES.boolean('exclude_links'));
  }
  filters.page = pageOf(pairs);
  return filters;
}

function listApplications(data: SandboxData, accountId: number, filters: ListFilters, now: number): { body: V2Body; lastPage: number } {
  const { name, host, ids: idSet, language, page } = filters;
  const matching = data.apps
    .filter((app) => app.accountId === accountId)
    .filter((app) => name === undefined || app.name.toLowerCase().includes(name))
    .filter((app) => idSet === undefined || idSet.has(app.id))
    .filter((app) => language === undefined || app.language === language)
    .filter((app) => host === undefined || currentHosts(app).some((h) => h.name.toLowerCase().includes(host)))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const items = matching.slice((page - 1) * PAGE_SIZE, page * PAGE_SIZE).map((app) => legacyApplication(app, data, now, !filters.excludeLinks));
  return { body: { applications: items, links: APPLICATION_LINK_TEMPLATES }, lastPage: Math.ceil(matching.length / PAGE_SIZE) };
}

function listApplicationsRoute(req: LegacyRequest): Response {
  const filters = listFilters(req.params);
  const { body, lastPage } = listApplications(req.data, req.accountId, filters, req.now);
  const link = req.link(filters.page, lastPage);
  return send(req.format, 200, body, link ? { link } : {});
}

// ---------------------------------------------------------------------------------------------
// Metric names and data (metrics.ts)

function metricRequest(req: LegacyRequest, source: MetricSource = appMetricSource(applicationOf(req))): MetricRequest {
  return {
    source,
    data: req.data,
    format: req.format,
    now: req.now,
    param: (key) => valuesOf(req.params, key),
    ifNoneMatch: req.ifNoneMatch,
    ...(req.jitter && { jitter: req.jitter }),
  };
}

// ---------------------------------------------------------------------------------------------

export const LEGACY_ROUTES: readonly LegacyRoute[] = [
  { template: '/v2/applications.{format}', methods: ['GET'], handler: listApplicationsRoute },
  {
    template: '/v2/applications/{id}.{format}',
    methods: ['GET'],
    handler: (req) => send(req.format, 200, req.shown(applicationOf(req))),
  },
  { template: '/v2/applications/{id}.{format}', methods: ['PUT'], body: 'own', handler: (req) => legacyUpdateApplication(req, applicationOf(req)) },
  { template: '/v2/applications/{id}.{format}', methods: ['DELETE'], body: 'own', handler: (req) => legacyDeleteApplication(req, applicationOf(req)) },
  {
    template: '/v2/applications/{id}/metrics.{format}',
    methods: ['GET'],
    handler: (req) => legacyMetricNames({ ...metricRequest(req), page: pageOf(req.params), link: req.link }),
  },
  { template: '/v2/applications/{id}/metrics/data.{format}', methods: ['GET', 'POST'], handler: (req) => legacyMetricData(metricRequest(req)) },
  {
    template: '/v2/applications/{id}/deployments.{format}',
    methods: ['GET'],
    handler: (req) => legacyDeployments({ ...req, app: applicationOf(req), page: pageOf(req.params) }),
  },
  { template: '/v2/applications/{id}/deployments.{format}', methods: ['POST'], body: 'own', handler: (req) => legacyCreateDeployment(req, applicationOf(req)) },
  {
    template: '/v2/applications/{id}/deployments/{deployment_id}.{format}',
    methods: ['DELETE'],
    body: 'own',
    handler: (req) => legacyDeleteDeployment(req, applicationOf(req), req.path.deployment_id ?? ''),
  },
  { template: '/v2/mobile_applications.{format}', methods: ['POST'], body: 'own', handler: (req) => legacyCreateApplication(req, 'mobile') },
  { template: '/v2/browser_applications.{format}', methods: ['POST'], body: 'own', handler: (req) => legacyCreateApplication(req, 'browser') },
  // v0, outside /v2: XML (and the same fields in JSON, as the gateway answers them).
  { template: '/deployments.{format}', methods: ['POST'], body: 'own', handler: legacyDeploymentV0 },
  // Application hosts and instances (topology.ts).
  { template: '/v2/applications/{id}/hosts.{format}', methods: ['GET'], handler: legacyHosts },
  { template: '/v2/applications/{id}/hosts/{host_id}.{format}', methods: ['GET'], handler: legacyHostShow },
  { template: '/v2/applications/{id}/instances.{format}', methods: ['GET'], handler: legacyInstances },
  { template: '/v2/applications/{id}/instances/{instance_id}.{format}', methods: ['GET'], handler: legacyInstanceShow },
  // Mobile applications (list and show; POST above).
  { template: '/v2/mobile_applications.{format}', methods: ['GET'], handler: listMobileApplicationsRoute },
  { template: '/v2/mobile_applications/{id}.{format}', methods: ['GET'], handler: showMobileApplicationRoute },
  // Metric names and data of hosts, instances and mobile apps (metric-targets.ts).
  {
    template: '/v2/applications/{id}/hosts/{host_id}/metrics.{format}',
    methods: ['GET'],
    handler: (req) => legacyMetricNames({ ...metricRequest(req, hostMetricSource(req)), page: pageOf(req.params), link: req.link }),
  },
  { template: '/v2/applications/{id}/hosts/{host_id}/metrics/data.{format}', methods: ['GET', 'POST'], handler: (req) => legacyMetricData(metricRequest(req, hostMetricSource(req))) },
  {
    template: '/v2/applications/{id}/instances/{instance_id}/metrics.{format}',
    methods: ['GET'],
    handler: (req) => legacyMetricNames({ ...metricRequest(req, instanceMetricSource(req)), page: pageOf(req.params), link: req.link }),
  },
  {
    template: '/v2/applications/{id}/instances/{instance_id}/metrics/data.{format}',
    methods: ['GET', 'POST'],
    handler: (req) => legacyMetricData(metricRequest(req, instanceMetricSource(req))),
  },
  {
    template: '/v2/mobile_applications/{id}/metrics.{format}',
    methods: ['GET'],
    handler: (req) => legacyMetricNames({ ...metricRequest(req, mobileMetricSource(req)), page: pageOf(req.params), link: req.link }),
  },
  {
    template: '/v2/mobile_applications/{id}/metrics/data.{format}',
    methods: ['GET', 'POST'],
    handler: (req) => legacyMetricData(metricRequest(req, mobileMetricSource(req)), { nameAlias: true }),
  },
  // Key transactions and the browser applications list (kt-browser.ts).
  { template: '/v2/key_transactions.{format}', methods: ['GET'], handler: legacyKeyTransactions },
  { template: '/v2/key_transactions/{id}.{format}', methods: ['GET'], handler: legacyKeyTransactionShow },
  { template: '/v2/browser_applications.{format}', methods: ['GET'], handler: legacyBrowserApplications },
  // The alert namespaces New Relic keeps alive (alerts.ts): the gateway passes them through.
  ...ALERT_ROUTES,
  // Retired products and users: retired.ts, users.ts.
  ...RETIRED_LEGACY_ROUTES,
  ...USER_LEGACY_ROUTES,
  // Labels as entity tags (labels.ts).
  ...LABEL_ROUTES,
  // alerts_channels and alerts_policy_channels, over the notification store (notifications/store.ts).
  ...NOTIFICATION_ROUTES,
  // Retired alert namespaces the gateway translates: violations, incidents, events (ai-issues.ts).
  ...AI_ISSUES_ROUTES,
];
