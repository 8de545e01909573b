/**
 * The sandbox's synthetic New Relic account data. Both sandbox faces (NerdGraph-compatible
 * /graphql and the legacy /v2 reference) read this one model, so they describe the same world.
 * Units are those of the REST v2 API unless the field name says otherwise.
 */
import type { SandboxAlerts } from './alerts.ts';
import type { SandboxBehaviours } from './behaviours.ts';
import type { WriteCounter } from './write-counts.ts';

/** A known divergence of the NerdGraph face from the legacy one (divergence.ts describes each). */
export type DivergenceName = 'app-names' | 'response-time' | 'deployment-user';

export type AlertSeverity = 'CRITICAL' | 'WARNING' | 'NOT_ALERTING' | 'NOT_CONFIGURED';

export interface SandboxAccount {
  id: number;
  name: string;
}

export interface SandboxInstance {
  /** REST v2 instance id; NerdGraph exposes it as the string `details.id`. */
  id: number;
  port: number;
  instanceName: string;
}

export interface SandboxHost {
  /** REST v2 host id: a row id, one sequence per world (data.ts), as New Relic's database gave them. */
  id: number;
  name: string;
  instances: SandboxInstance[];
}

export interface SandboxApmSummary {
  /** Milliseconds, two decimals (REST `response_time`). NerdGraph shows seconds. */
  responseTimeMs: number;
  /** Requests per minute. */
  throughput: number;
  /** Same scale on both faces (see APPLICATION_ASSUMPTIONS in mappings/applications/application.ts). */
  errorRate: number;
  apdexScore: number;
}

export interface SandboxBrowserSummary {
  /** Seconds, two decimals (REST `end_user_summary.response_time`). */
  pageLoadTimeSeconds: number;
  /** Page views per minute. */
  pageLoadThroughput: number;
  apdexTarget: number;
  apdexScore: number;
  ajaxRequestThroughput: number;
  ajaxResponseTimeSeconds: number;
  jsErrorRate: number;
}

export interface SandboxApp {
  accountId: number;
  /** REST v2 application id (NerdGraph `applicationId`, entity-search `domainId`). */
  id: number;
  guid: string;
  /** Unique within the sandbox, so name ordering is total. */
  name: string;
  /** Lower-case agent language: java, python, ruby, nodejs, php, dotnet, go. */
  language: string;
  reporting: boolean;
  alertSeverity: AlertSeverity;
  /** Epoch ms of the last change of `reporting` (NerdGraph `lastReportingChangeAt`). */
  lastReportingChangeAt: number;
  apdexTarget: number;
  serverSideConfig: boolean;
  /** null when the app is not reporting. */
  summary: SandboxApmSummary | null;
  /**
   * Recent browser traffic: null when no page views arrived lately (browser monitoring off, or
   * configured without visits); otherwise present even while not reporting.
   */
  browser: SandboxBrowserSummary | null;
  /** The configured browser loader (browser-loader.ts); absent: it follows `browser` (SPA or NONE). */
  browserLoader?: 'LITE' | 'NONE' | 'PRO' | 'SPA';
  hosts: SandboxHost[];
  /** null when no alert policy is attached. */
  alertPolicyId: number | null;
  /** Labels: entity tags the user set (tagging.ts), by key; absent means none. */
  userTags?: Record<string, string[]>;
}

/**
 * A key transaction: one transaction of an APM app, watched on its own (GUID
 * `acct|APM|KEY_TRANSACTION|id`). Its numbers come from the parent app's timeslices for
 * `metricName` (and `Apdex/<metricName without its first segment>`), over the last 10 minutes.
 */
export interface SandboxKeyTransaction {
  accountId: number;
  /** REST v2 key transaction id (the GUID's domain id). */
  id: number;
  guid: string;
  name: string;
  /** The parent APM application's id. */
  appId: number;
  /** The underlying metric (NerdGraph `metricName`), e.g. `WebTransaction/Uri/checkout`. */
  metricName: string;
  /** The v2 `transaction_name` display text. */
  transactionName: string;
  apdexTarget: number;
  /** null when the parent app has no browser monitoring. */
  browserApdexTarget: number | null;
  reporting: boolean;
  alertSeverity: AlertSeverity;
  lastReportingChangeAt: number;
}

/** What a mobile app's `mobile_summary` / `crash_summary` (v2) and `mobileSummary` (NerdGraph) show. */
export interface SandboxMobileSummary {
  activeUsers: number;
  launchCount: number;
  /** HTTP requests per minute. */
  throughput: number;
  responseTimeSeconds: number;
  sessionCount: number;
  httpRequestCount: number;
  interactionTimeSeconds: number;
  /** Percent. */
  failedCallRate: number;
  /** Percent. */
  remoteErrorRate: number;
  crashCount: number;
  /** Percent of sessions. */
  crashRate: number;
  unresolvedCrashCount: number;
  usersAffectedCount: number;
}

/** A mobile application (GUID `acct|MOBILE|APPLICATION|id`). */
export interface SandboxMobileApp {
  accountId: number;
  id: number;
  guid: string;
  name: string;
  reporting: boolean;
  alertSeverity: AlertSeverity;
  lastReportingChangeAt: number;
  applicationToken: string;
  /** null when the app is not reporting. */
  summary: SandboxMobileSummary | null;
}

/**
 * A browser application (GUID `acct|BROWSER|APPLICATION|id`): standalone, or the browser side of
 * an APM app with browser monitoring (then `servingApmApplicationId` is that app's id and `id`
 * equals it, as New Relic numbers them).
 */
export interface SandboxBrowserApp {
  accountId: number;
  id: number;
  guid: string;
  name: string;
  reporting: boolean;
  alertSeverity: AlertSeverity;
  lastReportingChangeAt: number;
  servingApmApplicationId: number | null;
  apdexTarget: number;
  browserMonitoringKey: string;
  /** The Lite loader snippet v2 returned. */
  loaderScript: string;
}

export interface SandboxData {
  accounts: SandboxAccount[];
  apps: SandboxApp[];
  keyTransactions: SandboxKeyTransaction[];
  mobileApps: SandboxMobileApp[];
  /** Standalone and APM-attached browser apps, and those created through either face. */
  browserApps: SandboxBrowserApp[];
  /** API key -> ids of the accounts it can see (first one is its home account). */
  keys: Map<string, number[]>;
  /** API key -> the id of its user, as declared (data.ts defaultKeyUsers); others: users.ts keyUserOf. */
  keyUsers: ReadonlyMap<string, number>;
  /** Epoch ms the world was generated at: metric lifetimes (timeslices.ts) are placed from it. */
  generatedAt: number;
  /** What writes (writes.ts) changed or added; both faces read and write it. */
  writes: SandboxWrites;
  /** Alert policies and conditions (alerts.ts): served by the legacy face only. */
  alerts: SandboxAlerts;
  /** How the NerdGraph face differs from the legacy face (divergence.ts); empty by default. */
  divergences: ReadonlySet<DivergenceName>;
  /** The documented New Relic behaviours in force (behaviours.ts); all on by default. */
  behaviours: SandboxBehaviours;
  /** The clock the ingest lag runs on (ingest.ts); absent: real time (Date.now), never the frozen `now`. */
  ingestClock?: () => number;
  /** The primary account's alert slots (ai-issues.ts), when a size knob (data.ts WorldSize) sets them. */
  primaryAlertSlots?: number;
}

/** A deployment marker: a legacy `Deployment` event or a `ChangeTrackingEvent`. */
export interface SandboxDeployment {
  /** The v2 id: deploymentV2Id(changeTrackingId). */
  id: number;
  changeTrackingId: string;
  eventType: 'Deployment' | 'ChangeTrackingEvent';
  accountId: number;
  appId: number;
  entityGuid: string;
  revision: string;
  changelog: string | null;
  description: string | null;
  user: string | null;
  /** Epoch ms. */
  timestamp: number;
  /** On the ingest clock (ingest.ts): when NRQL starts to see it; absent: at once (seeded, or no lag). */
  ingestedAt?: number;
}

/** A mobile or browser application created through either face. */
export interface SandboxCreatedApp {
  kind: 'MOBILE' | 'BROWSER';
  accountId: number;
  id: number;
  guid: string;
  name: string;
  /** Mobile: the agent's application token. */
  applicationToken?: string;
  /** Browser: the Lite loader script and the key it carries. */
  loaderScript?: string;
  browserMonitoringKey?: string;
}

export interface SandboxWrites {
  /** Bumped by every write, so derived indexes know to rebuild. */
  version: number;
  /** Per app id, newest first; seeded on first access (writes.ts). */
  deployments: Map<number, SandboxDeployment[]>;
  createdApps: SandboxCreatedApp[];
  /** Counter behind generated change-tracking ids and created app ids. */
  sequence: number;
  /** The writes each face executed (write-counts.ts). */
  executed: WriteCounter;
}
