import { z } from 'zod';
import { type FieldNote, type KnownGap, type OperationContext, type ReadOptions, type ReshapeContext, checkedParse, fieldNotesUnder, parseAnswer, OverBudget, UpstreamError, type V2Body, EntityKinds, decodeEntityGuid, entityGuid } from '../../src/mapping-api.ts';
import { EntityTitles } from '../common/entity-titles.ts';
import { healthStatus, startOfMinute } from '../common/entity-health.ts';
import { InstancesPage, allInstancesOf, isInstancesOverBound, linkIdsFromInstances, type ApplicationInstance, type AppLinkIds } from '../common/app-instances.ts';
import { ApmOutline } from '../common/entity-schemas.ts';
import { currentWindow, endUserApdexQuery } from '../common/topology-queries.ts';
import { APPLICATION_LINKS } from '../../facts/v2-values.ts';

/**
 * An APM application entity (outline or full) reshaped into the v2 application object
 * (rest-v2.md §3.3, rest-v2-shapes.md §1). Shared by the list and show mappings.
 */
const num = z.number().nullable().optional();

const ApmSummary = z.object({
  responseTimeAverage: num,
  throughput: num,
  errorRate: num,
  apdexScore: num,
  hostCount: num,
  instanceCount: num,
});
const BrowserSummary = z.object({ pageLoadTimeAverage: num, pageLoadThroughput: num });

export const ApmEntity = ApmOutline.extend({
  settings: z.object({ apdexTarget: num, serverSideConfig: z.boolean().nullable().optional() }).nullable().optional(),
  apmSummary: ApmSummary.nullable().optional(),
  apmBrowserSummary: BrowserSummary.nullable().optional(),
  applicationInstancesV2: InstancesPage.nullable().optional(),
});

export type ApmEntity = z.infer<typeof ApmEntity>;

/**
 * The browser app serving an APM app, as far as v2 needs it (its apdex target). New Relic
 * gives an APM-attached browser app the APM app's id (UNCONFIRMED (probe: browser-app-carries-apm-app-id)), so its GUID is computed.
 */
export const BrowserApdexEntity = z.object({
  guid: z.string(),
  accountId: z.number().int(),
  applicationId: z.number().int().optional(),
  servingApmApplicationId: z.number().int().nullable().optional(),
  settings: z.object({ apdexTarget: num }).nullable().optional(),
  /** The configured loader (on the full entity only: the show's entity(guid), the list's entities(guids)). */
  browserSettings: z
    .object({ browserMonitoring: z.object({ loader: z.string().nullable().optional() }).nullable().optional() })
    .nullable()
    .optional(),
});
export type BrowserApdexEntity = z.infer<typeof BrowserApdexEntity>;

/** Whether `browser` is the browser side of APM app `appId` (New Relic gives it the app's id; UNCONFIRMED (probe: browser-app-carries-apm-app-id)). */
function servesApp(appId: number, browser: BrowserApdexEntity | null): browser is BrowserApdexEntity {
  return browser !== null && browser.servingApmApplicationId === appId;
}

/**
 * The browser loader configured for APM app `appId`, from its browser side's
 * `browserSettings.browserMonitoring.loader`: NONE when the app has no browser side; null when
 * one serves it but NerdGraph did not say its loader.
 */
export function browserLoaderOf(appId: number, browser: BrowserApdexEntity | null): string | null {
  if (!servesApp(appId, browser)) return 'NONE';
  return browser.browserSettings?.browserMonitoring?.loader ?? null;
}

/**
 * v2's settings.enable_real_user_monitoring: browser monitoring is configured (the loader is not
 * NONE), whether or not browser traffic arrived lately. A browser side whose loader NerdGraph
 * did not say counts as configured (UNCONFIRMED, probe: browser-side-only-while-loader-on: the list and the show both read the loader, so
 * this is only a null loader). A browser side with the loader NONE is off, page views or not.
 */
export function realUserMonitoringOf(appId: number, browser: BrowserApdexEntity | null): boolean {
  const loader = browserLoaderOf(appId, browser);
  return loader === null || loader !== 'NONE';
}

/** v2's end_user_apdex_threshold when the app has no browser app (rest-v2-shapes.md §1). */
export const DEFAULT_END_USER_APDEX = 7;

export function browserGuidOf(accountId: number, appId: number | string): string {
  return entityGuid(accountId, EntityKinds.browserApplication.domain, EntityKinds.browserApplication.type, appId);
}

/** The browser apdex target of `appId` from a browser entity, or null when it serves another app or has none. */
export function browserApdexOf(appId: number, browser: BrowserApdexEntity | null): number | null {
  if (browser === null) return null;
  if (browser.servingApmApplicationId !== null && browser.servingApmApplicationId !== undefined && browser.servingApmApplicationId !== appId) return null;
  return browser.settings?.apdexTarget ?? null;
}

/** Seconds -> milliseconds, rounded to v2's two decimals (so 0.00591 s reads 5.91, not 5.909999). */
export function secondsToMs(seconds: number): number {
  return Math.round(seconds * 100_000) / 100;
}

/** Every member kept, a value NerdGraph did not give as null: v2 sent each key, and a client reads them all. */
function orNulls(object: Record<string, number | null | undefined>): V2Body {
  // A plain loop: this runs for every item of every 200-item page (hot path).
  const out: V2Body = {};
  for (const key in object) out[key] = object[key] ?? null;
  return out;
}

const APM_SUMMARY_FIELDS = Object.keys(ApmSummary.shape);
const BROWSER_SUMMARY_FIELDS = Object.keys(BrowserSummary.shape);

/**
 * Whether any of the schema's `fields` has a value. The fields are the schema's, not the object's
 * own keys: a parsed answer is the answer itself (src/upstream/compiled-check.ts), which may hold
 * keys the schema does not name.
 */
function anyValueOf(summary: Readonly<Record<string, number | null | undefined>>, fields: readonly string[]): boolean {
  for (const field of fields) if (summary[field] !== null && summary[field] !== undefined) return true;
  return false;
}


export interface ReshapeOptions {
  /** The `links` id lists, or null to send no links (list with exclude_links). */
  links: AppLinkIds | null;
  /** The serving browser app's apdex target; null when there is none. */
  browserApdexTarget: number | null;
  /** settings.enable_real_user_monitoring: the configured loader is not NONE (realUserMonitoringOf). */
  realUserMonitoring: boolean;
  /** end_user_summary.apdex_score: the EndUser/Apdex score of the current window (endUserApdexQuery); null without rows. */
  endUserApdexScore: number | null;
}

export function reshapeApplication(entity: ApmEntity, ctx: ReshapeContext, options: ReshapeOptions): V2Body {
  const reporting = entity.reporting === true;
  const app: V2Body = {
    id: entity.applicationId,
    name: entity.name,
    language: entity.language ?? 'unknown',
    health_status: healthStatus(reporting, entity.alertSeverity),
    reporting,
  };
  // Reporting means data in the last minutes; agents report each minute, so the last report
  // is the start of the current minute. v2 shows no timestamp for a non-reporting app.
  if (reporting) app.last_reported_at = startOfMinute(ctx.now);

  const summary = entity.apmSummary;
  // A block is shown only when NerdGraph gave at least one of its own values: an object of
  // nulls (or only the apdex target, which is a setting) is no summary at all.
  if (reporting && summary && anyValueOf(summary, APM_SUMMARY_FIELDS)) {
    app.application_summary = orNulls({
      response_time: summary.responseTimeAverage == null ? undefined : secondsToMs(summary.responseTimeAverage),
      throughput: summary.throughput,
      error_rate: summary.errorRate,
      apdex_target: entity.settings?.apdexTarget,
      apdex_score: summary.apdexScore,
      host_count: summary.hostCount,
      instance_count: summary.instanceCount,
      // "Concurrent instances of background applications" (rest-v2.md §3.3): no NerdGraph source.
      concurrent_instance_count: null,
    });
  }
  const browser = entity.apmBrowserSummary;
  const browserMonitored = browser !== null && browser !== undefined && anyValueOf(browser, BROWSER_SUMMARY_FIELDS);
  if (reporting && browserMonitored) {
    app.end_user_summary = orNulls({
      response_time: browser.pageLoadTimeAverage,
      throughput: browser.pageLoadThroughput,
      apdex_target: options.browserApdexTarget,
      apdex_score: options.endUserApdexScore,
    });
  }
  app.settings = {
    app_apdex_threshold: entity.settings?.apdexTarget ?? null,
    // v2 always sent it (clients read it before every update); 7 without a browser app.
    end_user_apdex_threshold: options.browserApdexTarget ?? DEFAULT_END_USER_APDEX,
    // The configured loader, not recent traffic: an app configured for browser monitoring that
    // saw no page view lately still has it on (and a PUT that echoes the flag keeps it so).
    enable_real_user_monitoring: options.realUserMonitoring,
    use_server_side_config: entity.settings?.serverSideConfig ?? false,
  };
  if (options.links !== null) {
    // alert_policy: NerdGraph links no policy to an application (policies hold conditions); null keeps v2's key.
    app.links = { application_instances: options.links.instances, servers: [], application_hosts: options.links.hosts, alert_policy: null };
  }
  return app;
}

/** v2's top-level link templates, verbatim (facts/v2-values.ts; singular `/v2/application/` is New Relic's own typo). */
export const APPLICATION_TOP_LINKS: V2Body = APPLICATION_LINKS;

/** Choices taken where the reference is UNCONFIRMED, shared by both application routes (no probe: each choice below names its own). */
export const APPLICATION_ASSUMPTIONS: readonly string[] = [
  'apmSummary.responseTimeAverage is in seconds (schema type Seconds); v2 response_time is in ms, rounded to 2 decimals.',
  'apmSummary.errorRate and v2 error_rate share one scale (both UNCONFIRMED; probes: apm-error-rate-is-percent, v2-error-rate-is-apm-summary-error-rate); the value is passed through unscaled.',
  'A non-reporting application has no last_reported_at, application_summary or end_user_summary (v2 docs: no timestamp once not reporting).',
  'health_status comes from alertSeverity (CRITICAL red, WARNING orange, NOT_ALERTING green, NOT_CONFIGURED unknown), gray when not reporting.',
  "end_user_summary.apdex_score, which the APM entity lacks, is the score of the app's EndUser/Apdex timeslices over the last 10 whole minutes, (S + T/2) / (S + T + F) rounded to 2 decimals, null without samples (one more NRQL query in the request that already reads the page or the app). v2's own window and rounding are UNCONFIRMED (no probe: the route comparison of `npm run probe` compares the field with the legacy API's in its sampled GET of the application list and show).",
];

/** Field provenance shared by both routes; `prefix` is `applications[]` or `application`. */
export function applicationFields(prefix: string): FieldNote[] {
  const f = fieldNotesUnder(prefix);
  return [
    f('id', 'exact', 'applicationId'),
    f('name', 'exact', 'name'),
    f('language', 'exact', 'language'),
    f('health_status', 'approximate', 'alertSeverity: CRITICAL red, WARNING orange, NOT_ALERTING green, NOT_CONFIGURED unknown; gray when not reporting'),
    f('reporting', 'exact', 'reporting'),
    f('last_reported_at', 'approximate', 'start of the current minute while reporting; omitted otherwise'),
    f('application_summary.response_time', 'exact', 'apmSummary.responseTimeAverage (seconds) x 1000, 2 decimals'),
    f('application_summary.throughput', 'exact', 'apmSummary.throughput (rpm)'),
    f('application_summary.error_rate', 'approximate', 'apmSummary.errorRate, unscaled (scale UNCONFIRMED on both sides; probes: apm-error-rate-is-percent, v2-error-rate-is-apm-summary-error-rate)'),
    f('application_summary.apdex_target', 'exact', 'settings.apdexTarget'),
    f('application_summary.apdex_score', 'exact', 'apmSummary.apdexScore'),
    f('application_summary.host_count', 'exact', 'apmSummary.hostCount'),
    f('application_summary.instance_count', 'exact', 'apmSummary.instanceCount'),
    f('application_summary.concurrent_instance_count', 'unsupported', 'no NerdGraph equivalent: null'),
    f('end_user_summary.response_time', 'exact', 'apmBrowserSummary.pageLoadTimeAverage (seconds)'),
    f('end_user_summary.throughput', 'exact', 'apmBrowserSummary.pageLoadThroughput'),
    f('end_user_summary.apdex_target', 'approximate', 'settings.apdexTarget of the browser app with the APM app\'s id (id sharing UNCONFIRMED, (probe: browser-app-carries-apm-app-id))'),
    f('end_user_summary.apdex_score', 'approximate', 'NRQL score of the app\'s EndUser/Apdex timeslices, (S + T/2) / (S + T + F), last 10 whole minutes, 2 decimals; null without rows, or when that NRQL part fails (the request is logged degraded)'),
    f('settings.app_apdex_threshold', 'exact', 'settings.apdexTarget'),
    f('settings.end_user_apdex_threshold', 'approximate', 'settings.apdexTarget of the browser app with the APM app\'s id (id sharing UNCONFIRMED, (probe: browser-app-carries-apm-app-id)); 7, v2\'s default, without one'),
    f('settings.enable_real_user_monitoring', 'approximate', "the configured loader is not NONE: the browser side's browserSettings.browserMonitoring.loader (read by GUID on the list and the show alike); not recent traffic"),
    f('settings.use_server_side_config', 'exact', 'settings.serverSideConfig'),
    f('links.alert_policy', 'unsupported', 'NerdGraph links no alert policy to an application: null'),
  ];
}

export function applicationGaps(prefix: string): KnownGap[] {
  return [
    { path: `${prefix}.application_summary.concurrent_instance_count`, description: 'concurrent_instance_count has no NerdGraph equivalent: always null.' },
    { path: `${prefix}.links.alert_policy`, description: 'The alert policy of an application (a legacy alert policy link) has no NerdGraph source: links.alert_policy is always null.' },
  ];
}

/** The application entity and its browser side, as ApplicationByGuid reads them in one request (404 when absent). */
export interface ReadEntity {
  guid: string;
  entity: ApmEntity;
  browser: BrowserApdexEntity | null;
  /** end_user_summary.apdex_score (endUserApdexQuery); null without EndUser/Apdex rows. */
  endUserApdexScore: number | null;
}

/**
 * The end-user apdex NRQL part of a read (ApplicationByGuid, ApplicationsPageDetails,
 * ApplicationsBrowserApdex): optional, so an NRQL timeout or rate limit there leaves
 * end_user_summary.apdex_score null rather than fail the application (CallerScope.read).
 */
export const END_USER_APDEX_PART: ReadOptions = { optional: { 'actor.account.endUser': 'end_user_summary.apdex_score is null' } };
/**
 * The read again without the score ($withEndUserApdex false) after the NRQL budgets refused it:
 * the part is left out, so the same optional path notes the request degraded and keeps the
 * answer from being cached as whole.
 */
export const END_USER_APDEX_UNASKED: ReadOptions = { optional: { 'actor.account.endUser': 'end_user_summary.apdex_score is null (the NRQL budget is spent: not asked)' } };

/** The known gap of a failed end-user apdex part, for the routes that read one. */
export function endUserApdexGap(prefix: string): KnownGap {
  return {
    path: `${prefix}.end_user_summary.apdex_score`,
    description:
      'end_user_summary.apdex_score is null when its NRQL query fails (an NRQL timeout or rate limit beside the rest of the answer): every other field is answered, the request log records the answer as degraded, and nothing is cached as whole.',
  };
}

export const EndUserApdexRow = z.object({ facet: z.union([z.string(), z.number()]).nullable().optional(), eu_apdex_score: z.number().nullable().optional() });
export const EndUserApdexRows = z.object({ results: z.array(z.unknown()).nullable() }).nullable().optional();

/** Two decimals after dropping float noise, as v2 showed summary numbers. */
const round2 = (value: number): number => Math.round(Number(value.toPrecision(12)) * 100) / 100;

/** The end-user apdex score per app id from endUserApdexQuery's rows (rows of other apps are dropped). */
export function endUserApdexScores(answer: z.infer<typeof EndUserApdexRows>, appIds: readonly number[]): Map<number, number> {
  const wanted = new Set(appIds);
  const scores = new Map<number, number>();
  for (const raw of answer?.results ?? []) {
    const row = checkedParse(EndUserApdexRow, raw);
    if (!row.success || row.data.eu_apdex_score === null || row.data.eu_apdex_score === undefined) continue;
    const appId = Number(row.data.facet);
    if (wanted.has(appId)) scores.set(appId, round2(row.data.eu_apdex_score));
  }
  return scores;
}

/**
 * The application entity and its browser side only: one ApplicationByGuid, no later pages of
 * instances. What a write needs before it writes (the configured loader, the reporting flag),
 * so an app past the instance bound can still be updated and deleted.
 */
// Built once: zod compiles a schema on its first parse, so one built per request costs a compile each time.
const ApplicationByGuidAnswer = z.object({
  actor: z.object({ entity: z.unknown(), browser: z.unknown().optional(), account: z.object({ endUser: EndUserApdexRows }).nullable().optional() }),
});

/** An app's end-user apdex score, kept per caller and account: its 10-minute window moves on by the minute. */
interface KeptEndUserApdex {
  score: number | null;
}
const END_USER_APDEX_KEPT_MS = 60_000;

export async function readApplicationEntity(ctx: OperationContext, guid: string): Promise<ReadEntity> {
  const appId = decodeEntityGuid(guid)?.domainId;
  if (appId === undefined) throw new UpstreamError('upstream_failure', 'readApplication needs a computed application GUID');
  const browserGuid = browserGuidOf(ctx.accountId, appId);
  const appIdNumber = Number(appId);
  const endUserApdex = endUserApdexQuery({ appIds: [appIdNumber], ...currentWindow(ctx.now) });
  const keptKey = `end-user-apdex:${appId}`;
  const kept = ctx.cache.get<KeptEndUserApdex>(keptKey);
  const variables = { guid, browserGuid, accountId: ctx.accountId, endUserApdex };
  let data: unknown;
  let withEndUserApdex = kept === undefined;
  try {
    data = await ctx.read('ApplicationByGuid', { ...variables, withEndUserApdex }, withEndUserApdex ? END_USER_APDEX_PART : undefined);
  } catch (error) {
    // The score is worth no refused read, update or delete: without it the NRQL budgets are not asked.
    if (!withEndUserApdex || !(error instanceof OverBudget) || error.budget === 'concurrency') throw error;
    withEndUserApdex = false;
    data = await ctx.read('ApplicationByGuid', { ...variables, withEndUserApdex }, END_USER_APDEX_UNASKED);
  }
  const actor = parseAnswer(ApplicationByGuidAnswer, data, 'ApplicationByGuid').actor;
  const entity = ctx.requireEntity(actor.entity, { guid }, EntityTitles.applicationNotFound);
  const browser = actor.browser === null || actor.browser === undefined ? null : ctx.requireEntity(actor.browser, { guid: browserGuid }, EntityTitles.applicationNotFound);
  const parsed = checkedParse(ApmEntity, entity);
  if (!parsed.success) throw new UpstreamError('upstream_failure', 'unexpected entity shape in ApplicationByGuid');
  const parsedBrowser = browser === null ? null : checkedParse(BrowserApdexEntity, browser);
  if (parsedBrowser !== null && !parsedBrowser.success) throw new UpstreamError('upstream_failure', 'unexpected browser entity shape in ApplicationByGuid');
  let endUserApdexScore = kept?.score ?? null;
  // A failed NRQL part (null: END_USER_APDEX_PART) is no score to keep: the next read asks again.
  const endUser = actor.account?.endUser;
  if (withEndUserApdex && endUser !== null && endUser !== undefined) {
    endUserApdexScore = endUserApdexScores(endUser, [appIdNumber]).get(appIdNumber) ?? null;
    ctx.cache.set(keptKey, { value: { score: endUserApdexScore }, ttlMs: END_USER_APDEX_KEPT_MS });
  }
  return { guid, entity: parsed.data, browser: parsedBrowser === null ? null : parsedBrowser.data, endUserApdexScore };
}

/**
 * What an app past the instance bound (more than MAX_INSTANCE_PAGES pages or MAX_INSTANCES
 * instances) shows in its links: `refuse`, the show's 503 naming the bound (never short links
 * read as whole); `first-page`, the links of the first page only (the writes' answers, which
 * must not turn a write that happened into an error: their known gaps say so).
 */
export type OverBound = 'refuse' | 'first-page';

/** The v2 body of a read application, links from every page of applicationInstancesV2 (app-instances.ts). */
export async function shownApplication(ctx: OperationContext, read: ReadEntity, overBound: OverBound): Promise<V2Body> {
  const { entity: app, browser, guid } = read;
  let instances: readonly ApplicationInstance[];
  try {
    instances = await allInstancesOf(ctx, { id: app.applicationId, guid }, app.applicationInstancesV2);
  } catch (error) {
    if (overBound === 'refuse' || !isInstancesOverBound(error)) throw error;
    instances = app.applicationInstancesV2?.applicationInstances ?? [];
  }
  const body = reshapeShownApplication(app, browser, { accountId: ctx.accountId, now: ctx.now }, instances, read.endUserApdexScore);
  return { application: body, links: APPLICATION_TOP_LINKS };
}

/** The application as `GET /v2/applications/{id}` shows it (404 when absent). */
export async function readApplication(ctx: OperationContext, guid: string, overBound: OverBound): Promise<ReadEntity & { body: V2Body }> {
  const read = await readApplicationEntity(ctx, guid);
  return { ...read, body: await shownApplication(ctx, read, overBound) };
}

/** The application as the show route and the writes show it: links from every page of applicationInstancesV2. */
export function reshapeShownApplication(
  app: ApmEntity,
  browser: BrowserApdexEntity | null,
  ctx: ReshapeContext,
  instances: readonly ApplicationInstance[],
  endUserApdexScore: number | null,
): V2Body {
  return reshapeApplication(app, ctx, {
    links: linkIdsFromInstances(app.applicationId, instances),
    browserApdexTarget: browserApdexOf(app.applicationId, browser),
    realUserMonitoring: realUserMonitoringOf(app.applicationId, browser),
    endUserApdexScore,
  });
}
