/**
 * APM applications (`APM` / `APPLICATION`). How a sandbox app looks through NerdGraph: the source objects graphql-js resolves
 * ApmApplicationEntityOutline / ApmApplicationEntity fields from. Plain data fields are
 * read as properties; fields with arguments are methods (graphql-js's default resolver
 * calls them with the field arguments). `__typename` picks the concrete type behind the
 * EntityOutline / Entity interfaces (graphql-js's default type resolver reads it).
 */
import { currentHosts } from '../hosts.ts';
import { decodeCursor, hashText, pageOf } from '../search-paging.ts';
import type { SandboxAccount, SandboxApp } from '../model.ts';
import { nerdgraphApp } from '../divergence.ts';
import { nerdgraphFactsOf } from '../unconfirmed-facts.ts';
import { indexedUserTagsOf } from '../ingest.ts';
import { commonOutline, type EntityKind, type EntityOutlineSource, type EntitySearchFields, searchFieldsOf } from './kind.ts';

export interface ApmSummarySource {
  apdexScore: number;
  errorRate: number;
  hostCount: number;
  instanceCount: number;
  /** Seconds. */
  responseTimeAverage: number;
  throughput: number;
  webResponseTimeAverage: number;
  webThroughput: number;
  nonWebResponseTimeAverage: number;
  nonWebThroughput: number;
}

export interface ApmBrowserSummarySource {
  ajaxRequestThroughput: number;
  ajaxResponseTimeAverage: number;
  jsErrorRate: number;
  pageLoadThroughput: number;
  pageLoadTimeAverage: number;
}

export interface ApplicationInstanceSource {
  details: {
    id: string;
    host: string;
    hostDisplayName: string;
    instanceName: string;
    language: string;
    name: string;
  };
}

export interface ApmEntityOutlineSource extends EntityOutlineSource {
  __typename: 'ApmApplicationEntityOutline' | 'ApmApplicationEntity';
  applicationId: number;
  language: string;
  settings: { apdexTarget: number; serverSideConfig: boolean };
  runningAgentVersions: { minVersion: string; maxVersion: string };
  apmSummary: ApmSummarySource | null;
  apmBrowserSummary: ApmBrowserSummarySource | null;
}

export interface ApmEntitySource extends ApmEntityOutlineSource {
  __typename: 'ApmApplicationEntity';
  applicationInstances(args: { host?: string | null }): ApplicationInstanceSource[];
  applicationInstancesV2(args: { cursor?: string | null }): {
    applicationInstances: ApplicationInstanceSource[];
    nextCursor: string | null;
  };
}

export function apmSearchFields(app: SandboxApp): EntitySearchFields {
  // User tags (labels, tagging.ts) beside the agent's language, as indexed (the ingest lag, ingest.ts).
  return searchFieldsOf('APM', 'APPLICATION', app, { language: [app.language], ...indexedUserTagsOf(app) } as Record<string, string[]>);
}

/** The shape entitySearch returns (no per-instance data, like the real outline). */
export function toEntityOutline(app: SandboxApp, account: SandboxAccount): ApmEntityOutlineSource {
  return {
    ...commonOutline(apmSearchFields(app), account, { __typename: 'ApmApplicationEntityOutline', entityType: 'APM_APPLICATION_ENTITY' }, app.lastReportingChangeAt),
    __typename: 'ApmApplicationEntityOutline',
    applicationId: app.id,
    language: app.language,
    settings: { apdexTarget: app.apdexTarget, serverSideConfig: app.serverSideConfig },
    runningAgentVersions: agentVersions(app),
    apmSummary: apmSummary(app),
    apmBrowserSummary: app.browser && {
      ajaxRequestThroughput: app.browser.ajaxRequestThroughput,
      ajaxResponseTimeAverage: app.browser.ajaxResponseTimeSeconds,
      jsErrorRate: app.browser.jsErrorRate,
      pageLoadThroughput: app.browser.pageLoadThroughput,
      pageLoadTimeAverage: app.browser.pageLoadTimeSeconds,
    },
  };
}

/**
 * The shape entity/entities return: the outline plus the instance listings.
 *
 * `applicationInstancesV2(cursor)` is paged: the schema calls it a "Paginated list of APM
 * application instances" and gives it a `cursor` argument and a `nextCursor` (behaviour
 * `instancePageSize`, behaviours.ts). A page holds `instancePageSize` instances (0: all on one
 * page); a cursor is bound to its app, so one presented to another app, or tampered with, is
 * `Invalid cursor` (INVALID_INPUT), as entity search cursors are (search-paging.ts).
 */
export function toEntity(app: SandboxApp, account: SandboxAccount, instancePageSize = 0): ApmEntitySource {
  const instances = applicationInstancesOf(app);
  const cursorHash = hashText(`applicationInstancesV2|${app.guid}`);
  return {
    ...toEntityOutline(app, account),
    __typename: 'ApmApplicationEntity',
    applicationInstances: ({ host }) =>
      host === undefined || host === null ? instances : instances.filter((instance) => instance.details.host === host),
    applicationInstancesV2: ({ cursor }) => {
      const pageSize = instancePageSize > 0 ? instancePageSize : Math.max(instances.length, 1);
      const page = pageOf(instances, decodeCursor(cursor, cursorHash, instances.length), pageSize, cursorHash);
      return { applicationInstances: page.items, nextCursor: page.nextCursor };
    },
  };
}

/** Only current hosts: an app that is not reporting has no instances (see hosts.ts). */
function applicationInstancesOf(app: SandboxApp): ApplicationInstanceSource[] {
  return currentHosts(app).flatMap((host) =>
    host.instances.map((instance) => ({
      details: {
        id: String(instance.id),
        host: host.name,
        hostDisplayName: host.name,
        instanceName: instance.instanceName,
        language: app.language,
        name: app.name,
      },
    })),
  );
}

/**
 * NerdGraph reports response times in seconds. The web/non-web split is derived from the
 * app id (60-95 % web) so that throughput adds up and the weighted response times average
 * back to responseTimeAverage.
 */
function apmSummary(app: SandboxApp): ApmSummarySource | null {
  const summary = app.summary;
  if (!summary) return null;
  const responseTimeAverage = summary.responseTimeMs / 1000;
  const webShare = 0.6 + (app.id % 36) / 100;
  const webThroughput = Math.round(summary.throughput * webShare * 10) / 10;
  const nonWebThroughput = Math.round((summary.throughput - webThroughput) * 10) / 10;
  const webResponseTimeAverage = responseTimeAverage * 0.8;
  const nonWebResponseTimeAverage =
    nonWebThroughput > 0
      ? (responseTimeAverage * summary.throughput - webResponseTimeAverage * webThroughput) / nonWebThroughput
      : responseTimeAverage;
  return {
    apdexScore: summary.apdexScore,
    errorRate: summary.errorRate,
    hostCount: app.hosts.length,
    instanceCount: app.hosts.reduce((total, host) => total + host.instances.length, 0),
    responseTimeAverage,
    throughput: summary.throughput,
    webResponseTimeAverage: roundTo(webResponseTimeAverage, 6),
    webThroughput,
    nonWebResponseTimeAverage: roundTo(nonWebResponseTimeAverage, 6),
    nonWebThroughput,
  };
}

const AGENT_MAJOR_VERSIONS: Record<string, number> = { java: 8, python: 10, ruby: 9, nodejs: 12, php: 11, dotnet: 10, go: 3 };

/** Multi-host apps run two agent patch levels, so min and max differ for them. */
function agentVersions(app: SandboxApp): { minVersion: string; maxVersion: string } {
  const major = AGENT_MAJOR_VERSIONS[app.language] ?? 1;
  const minor = app.id % 20;
  const patch = app.id % 7;
  const maxPatch = app.hosts.length > 1 ? patch + 1 : patch;
  return { minVersion: `${major}.${minor}.${patch}`, maxVersion: `${major}.${minor}.${maxPatch}` };
}

function roundTo(value: number, decimals: number): number {
  const factor = 10 ** decimals;
  return Math.round(value * factor) / factor;
}

export const apmApplicationKind: EntityKind<SandboxApp> = {
  domain: 'APM',
  type: 'APPLICATION',
  // With a divergence on, NerdGraph sees some apps differently (divergence.ts); the views are
  // rebuilt with the index after every write, and writes always go to the model's own apps.
  list: (data) => {
    const apps = data.divergences.size === 0 ? data.apps : data.apps.map((app) => nerdgraphApp(app, data));
    // Probe switches (unconfirmed-facts.ts): the same apps unless a test turned a fact off.
    return apps.map((app) => nerdgraphFactsOf(app, data.behaviours));
  },
  searchFields: apmSearchFields,
  outline: (app, { account }) => toEntityOutline(app, account),
  entity: (app, { account, instancePageSize }) => toEntity(app, account, instancePageSize),
};
