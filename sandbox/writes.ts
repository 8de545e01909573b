/**
 * Writes to the sandbox's shared data. Both faces call these after their own validation (the
 * legacy face by the REST v2 rules, the NerdGraph face by NerdGraph's), so a write through
 * either face is seen by every later read on both. Each write bumps `writes.version`, which
 * derived indexes (actor.ts) compare to know when to rebuild.
 */
import { entityGuid, fnv1a32, hashedRowId } from './ids.ts';

/** A deployment's v2 id on the legacy face: its own row id (ids.ts), not the gateway's derivation. */
const deploymentV2Id = (changeTrackingId: string): number => hashedRowId('deployment', changeTrackingId);
import type { SandboxApp, SandboxBrowserApp, SandboxCreatedApp, SandboxData, SandboxDeployment, SandboxMobileApp } from './model.ts';
import { ingestedAtFor, isIngested } from './ingest.ts';
import { LEGACY_DEFAULT_LOADER, browserConfigured, type BrowserLoader } from './browser-loader.ts';

const DAY_MS = 24 * 60 * 60 * 1000;
/** Change tracking keeps events for 13 months; seeded deployments fall inside that. */
const SEEDED_SPAN_MS = 390 * DAY_MS;
const REVISIONS = ['v1.4.2', 'release-2026.10', '9f2c1ab', 'v2.0.0-rc.1', 'build #1187'] as const;
const USERS = ['deploy-bot', 'Data Nerd', 'ci@example.com', null] as const;

function bumped(data: SandboxData): void {
  data.writes.version++;
}

/** A UUID-shaped id, unique within the sandbox and the same on every run. */
function nextChangeTrackingId(data: SandboxData, salt: string): string {
  const sequence = ++data.writes.sequence;
  const hex = [1, 2, 3, 4].map((part) => fnv1a32(`${salt}|${sequence}|${part}`).toString(16).padStart(8, '0')).join('');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
}

/** 0 to 4 legacy `Deployment` events per app, placed back from when the world was generated. */
function seededDeployments(data: SandboxData, app: SandboxApp): SandboxDeployment[] {
  const seed = fnv1a32(`deployments|${app.id}`);
  const count = seed % 5;
  const list: SandboxDeployment[] = [];
  for (let i = 0; i < count; i++) {
    const draw = fnv1a32(`${seed}|${i}`);
    const changeTrackingId = `seed-${app.id}-${i}-${draw.toString(16)}`;
    list.push({
      id: deploymentV2Id(changeTrackingId),
      changeTrackingId,
      eventType: 'Deployment',
      accountId: app.accountId,
      appId: app.id,
      entityGuid: app.guid,
      revision: REVISIONS[draw % REVISIONS.length] as string,
      changelog: draw % 3 === 0 ? null : `Changes in deploy ${i + 1}`,
      // The id, not the name: a rename before the first read must not change seeded history.
      description: draw % 4 === 0 ? null : `Deploy ${i + 1} of application ${app.id}`,
      user: USERS[draw % USERS.length] ?? null,
      // Whole seconds, as v2 timestamps are.
      timestamp: Math.floor((data.generatedAt - 3_600_000 - (draw / 4_294_967_296) * SEEDED_SPAN_MS) / 1000) * 1000,
    });
  }
  return list.sort((a, b) => b.timestamp - a.timestamp);
}

/**
 * The app's deployments as NRQL sees them, newest first: those the ingest lag has let through
 * (ingest.ts). The legacy face, v2's own database, reads deploymentsOf instead.
 */
export function ingestedDeploymentsOf(data: SandboxData, app: SandboxApp): SandboxDeployment[] {
  return deploymentsOf(data, app).filter((deployment) => isIngested(data, deployment));
}

/** The app's deployments, newest first, every one written (the live list: callers must not mutate it). */
export function deploymentsOf(data: SandboxData, app: SandboxApp): readonly SandboxDeployment[] {
  let list = data.writes.deployments.get(app.id);
  if (!list) {
    list = seededDeployments(data, app);
    data.writes.deployments.set(app.id, list);
  }
  return list;
}

export interface DeploymentFields {
  revision: string;
  changelog: string | null;
  description: string | null;
  user: string | null;
  /** Epoch ms. */
  timestamp: number;
}

/** Records one deployment; `eventType` tells which API wrote it (REST writes `Deployment`). */
export function recordDeployment(
  data: SandboxData,
  app: SandboxApp,
  fields: DeploymentFields,
  eventType: SandboxDeployment['eventType'],
): SandboxDeployment {
  const list = deploymentsOf(data, app) as SandboxDeployment[];
  const changeTrackingId = nextChangeTrackingId(data, `deployment|${app.id}`);
  const deployment: SandboxDeployment = {
    id: deploymentV2Id(changeTrackingId),
    changeTrackingId,
    eventType,
    accountId: app.accountId,
    appId: app.id,
    entityGuid: app.guid,
    ...fields,
  };
  // NRQL sees it once ingested (ingest.ts); whichever face wrote it, the legacy face sees it at once.
  const ingestedAt = ingestedAtFor(data);
  if (ingestedAt !== undefined) deployment.ingestedAt = ingestedAt;
  list.push(deployment);
  list.sort((a, b) => b.timestamp - a.timestamp);
  bumped(data);
  return deployment;
}

export function removeDeployment(data: SandboxData, app: SandboxApp, id: number): SandboxDeployment | undefined {
  const list = deploymentsOf(data, app) as SandboxDeployment[];
  const index = list.findIndex((deployment) => deployment.id === id);
  if (index === -1) return undefined;
  const [removed] = list.splice(index, 1);
  bumped(data);
  return removed;
}

export interface ApplicationChanges {
  /** The display alias (the entity name both faces show). */
  name?: string;
  apdexTarget?: number;
  /** Applied only while browser monitoring is on. */
  endUserApdexTarget?: number;
  /** The browser loader (browser-loader.ts): NONE turns browser monitoring off. */
  browserLoader?: BrowserLoader;
  /**
   * v2's enable_real_user_monitoring (the legacy face): true keeps a configured loader and gives
   * an app without one LEGACY_DEFAULT_LOADER; false is NONE. Ignored beside `browserLoader`.
   */
  browserMonitoring?: boolean;
  /** NerdGraph can set it; REST v2 could not (read-only there). */
  serverSideConfig?: boolean;
}

export function updateApplication(data: SandboxData, app: SandboxApp, changes: ApplicationChanges): void {
  if (changes.name !== undefined) app.name = changes.name;
  if (changes.apdexTarget !== undefined) app.apdexTarget = changes.apdexTarget;
  if (changes.serverSideConfig !== undefined) app.serverSideConfig = changes.serverSideConfig;
  const wasConfigured = browserConfigured(app);
  const fromFlag = changes.browserMonitoring === undefined ? undefined : changes.browserMonitoring ? (wasConfigured ? undefined : LEGACY_DEFAULT_LOADER) : 'NONE';
  const loader = changes.browserLoader ?? fromFlag;
  if (loader !== undefined) app.browserLoader = loader;
  // Off: no loader, so no page views either.
  if (loader === 'NONE') app.browser = null;
  // Turned on (not merely another loader, nor the same one again): no page views measured yet.
  if (loader !== undefined && loader !== 'NONE' && !wasConfigured && app.browser === null) {
    // Freshly enabled: no page views measured yet.
    app.browser = {
      pageLoadTimeSeconds: 0,
      pageLoadThroughput: 0,
      apdexTarget: 7,
      apdexScore: 0,
      ajaxRequestThroughput: 0,
      ajaxResponseTimeSeconds: 0,
      jsErrorRate: 0,
    };
  }
  if (changes.endUserApdexTarget !== undefined && app.browser !== null) app.browser.apdexTarget = changes.endUserApdexTarget;
  syncBrowserSide(data, app);
  bumped(data);
}

/**
 * Keeps what depends on an APM app's browser monitoring in step with it: the attached browser
 * app (added, renamed, re-targeted or removed) and its key transactions' browserApdexTarget.
 */
function syncBrowserSide(data: SandboxData, app: SandboxApp): void {
  const index = data.browserApps.findIndex((browserApp) => browserApp.servingApmApplicationId === app.id);
  // The browser side lives while browser monitoring is configured, traffic or not (browser-loader.ts).
  if (!browserConfigured(app)) {
    if (index !== -1) data.browserApps.splice(index, 1);
  } else if (index === -1) {
    data.browserApps.push(apmAttachedBrowserApp(app));
  } else {
    const browserApp = data.browserApps[index] as SandboxBrowserApp;
    browserApp.name = app.name;
    browserApp.apdexTarget = app.browser?.apdexTarget ?? 7;
  }
  for (const keyTransaction of data.keyTransactions) {
    if (keyTransaction.appId === app.id) keyTransaction.browserApdexTarget = app.browser?.apdexTarget ?? null;
  }
}

/** The browser side of an APM app with browser monitoring: New Relic numbers it like the app. */
export function apmAttachedBrowserApp(app: SandboxApp): SandboxBrowserApp {
  return {
    accountId: app.accountId,
    id: app.id,
    guid: entityGuid(app.accountId, 'BROWSER', 'APPLICATION', app.id),
    name: app.name,
    reporting: app.reporting,
    alertSeverity: app.alertSeverity,
    lastReportingChangeAt: app.lastReportingChangeAt,
    servingApmApplicationId: app.id,
    apdexTarget: app.browser?.apdexTarget ?? 7,
    ...browserAppFields(app.accountId, app.id),
  };
}

/** Removes the app, its browser side and its key transactions from both faces (the callers refuse reporting apps first). */
export function removeApplication(data: SandboxData, app: SandboxApp): void {
  const index = data.apps.indexOf(app);
  if (index !== -1) data.apps.splice(index, 1);
  // What belongs to the app goes with it: its browser side and its key transactions.
  removeWhere(data.browserApps, (browserApp) => browserApp.servingApmApplicationId === app.id);
  removeWhere(data.keyTransactions, (keyTransaction) => keyTransaction.appId === app.id);
  data.writes.deployments.delete(app.id);
  bumped(data);
}

/** In place, so every holder of the model's arrays sees the change. */
function removeWhere<T>(items: T[], shouldRemove: (item: T) => boolean): void {
  for (let i = items.length - 1; i >= 0; i--) {
    if (shouldRemove(items[i] as T)) items.splice(i, 1);
  }
}

/** Created apps get ids above every generated one, from the shared sequence. */
function nextAppId(data: SandboxData): number {
  return 900_000_000 + ++data.writes.sequence;
}

/** The agent token of a mobile app, as New Relic shapes them (generated and created apps alike). */
export function mobileApplicationToken(id: number): string {
  return `AA${fnv1a32(`token|${id}`).toString(16).padStart(8, '0')}${fnv1a32(`token2|${id}`).toString(16).padStart(8, '0')}-NRMA`;
}

/** A browser app's monitoring key and the Lite loader that carries it (generated and created apps alike). */
export function browserAppFields(accountId: number, id: number): Pick<SandboxBrowserApp, 'browserMonitoringKey' | 'loaderScript'> {
  const key = `NRJS-${fnv1a32(`browser-key|${id}`).toString(16).padStart(8, '0')}${fnv1a32(`browser-key2|${id}`).toString(16).slice(0, 4)}`;
  return {
    browserMonitoringKey: key,
    // The Lite loader, abridged: real scripts are kilobytes of minified JavaScript.
    loaderScript: `<script type="text/javascript">window.NREUM||(NREUM={});NREUM.init={privacy:{cookies_enabled:true}};NREUM.loader_config={accountID:"${accountId}",trustKey:"${accountId}",agentID:"${id}",licenseKey:"${key}",applicationID:"${id}"};NREUM.info={beacon:"bam.nr-data.net",errorBeacon:"bam.nr-data.net",licenseKey:"${key}",applicationID:"${id}",sa:1};/* lite loader */</script>`,
  };
}

/** Created apps report nothing yet. */
function createdAppBase(
  data: SandboxData,
  accountId: number,
  id: number,
  guid: string,
  name: string,
): Pick<SandboxMobileApp, 'accountId' | 'id' | 'guid' | 'name' | 'reporting' | 'alertSeverity' | 'lastReportingChangeAt'> {
  return { accountId, id, guid, name, reporting: false, alertSeverity: 'NOT_CONFIGURED' as const, lastReportingChangeAt: data.generatedAt };
}

export function createMobileApplication(data: SandboxData, accountId: number, name: string): SandboxCreatedApp {
  const id = nextAppId(data);
  const guid = entityGuid(accountId, 'MOBILE', 'APPLICATION', id);
  const applicationToken = mobileApplicationToken(id);
  const created: SandboxCreatedApp = { kind: 'MOBILE', accountId, id, guid, name, applicationToken };
  data.writes.createdApps.push(created);
  data.mobileApps.push({ ...createdAppBase(data, accountId, id, guid, name), applicationToken, summary: null });
  bumped(data);
  return created;
}

export function createBrowserApplication(data: SandboxData, accountId: number, name: string): SandboxCreatedApp {
  const id = nextAppId(data);
  const guid = entityGuid(accountId, 'BROWSER', 'APPLICATION', id);
  const fields = browserAppFields(accountId, id);
  const created: SandboxCreatedApp = { kind: 'BROWSER', accountId, id, guid, name, ...fields };
  data.writes.createdApps.push(created);
  data.browserApps.push({ ...createdAppBase(data, accountId, id, guid, name), servingApmApplicationId: null, apdexTarget: 7, ...fields });
  bumped(data);
  return created;
}
