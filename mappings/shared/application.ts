import { z } from 'zod';
import { V2Titles } from '../../src/v2/errors.ts';
import type { FieldNote, KnownGap, OperationContext, ReshapeContext } from '../../src/routes/mapping.ts';
import { parseAnswer } from '../../src/upstream/answer.ts';
import { UpstreamError } from '../../src/upstream/errors.ts';
import type { V2Body } from '../../src/v2/format.ts';
import { isoSeconds } from '../../src/v2/time.ts';
import { ApplicationInstance, appHosts, appInstances } from './app-instances.ts';

/**
 * An APM application entity (outline or full) reshaped into the v2 application object
 * (rest-v2.md §3.3, rest-v2-shapes.md §1). Shared by the list and show mappings.
 */
const num = z.number().nullable().optional();

export const ApmEntity = z.object({
  guid: z.string(),
  accountId: z.number().int(),
  name: z.string(),
  reporting: z.boolean().nullable().optional(),
  alertSeverity: z.string().nullable().optional(),
  applicationId: z.number().int(),
  language: z.string().nullable().optional(),
  settings: z.object({ apdexTarget: num, serverSideConfig: z.boolean().nullable().optional() }).nullable().optional(),
  apmSummary: z
    .object({
      responseTimeAverage: num,
      throughput: num,
      errorRate: num,
      apdexScore: num,
      hostCount: num,
      instanceCount: num,
    })
    .nullable()
    .optional(),
  apmBrowserSummary: z.object({ pageLoadTimeAverage: num, pageLoadThroughput: num }).nullable().optional(),
  applicationInstancesV2: z
    .object({ applicationInstances: z.array(ApplicationInstance).nullable().optional() })
    .nullable()
    .optional(),
});

export type ApmEntity = z.infer<typeof ApmEntity>;

/** alertSeverity -> v2 health_status; a non-reporting app is gray (rest-v2-shapes.md §1). */
const HEALTH: Record<string, string> = {
  CRITICAL: 'red',
  WARNING: 'orange',
  NOT_ALERTING: 'green',
  NOT_CONFIGURED: 'unknown',
};

export function healthStatus(reporting: boolean, alertSeverity: string | null | undefined): string {
  if (!reporting) return 'gray';
  return HEALTH[alertSeverity ?? ''] ?? 'unknown';
}

/** Seconds -> milliseconds, rounded to v2's two decimals (so 0.00591 s reads 5.91, not 5.909999). */
export function secondsToMs(seconds: number): number {
  return Math.round(seconds * 100_000) / 100;
}

/** Drops null/undefined members so absent NerdGraph values are absent, not null, in v2. */
function present(object: Record<string, number | null | undefined>): V2Body {
  // A plain loop: this runs for every item of every 200-item page (hot path).
  const out: V2Body = {};
  for (const key in object) {
    const value = object[key];
    if (value !== null && value !== undefined) out[key] = value;
  }
  return out;
}

function anyValue(object: Record<string, number | null | undefined>): boolean {
  for (const key in object) if (object[key] !== null && object[key] !== undefined) return true;
  return false;
}

let minuteCache = { minute: Number.NaN, text: '' };

/** The current minute as a v2 timestamp, formatted once per minute rather than per item. */
function startOfMinute(now: number): string {
  const minute = Math.floor(now / 60_000) * 60_000;
  if (minute !== minuteCache.minute) minuteCache = { minute, text: isoSeconds(minute) };
  return minuteCache.text;
}

export interface ReshapeOptions {
  /** Include `links` id lists (they need the entity's instances: show route only). */
  withLinks: boolean;
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
  if (reporting && summary && anyValue(summary)) {
    app.application_summary = present({
      response_time: summary.responseTimeAverage == null ? undefined : secondsToMs(summary.responseTimeAverage),
      throughput: summary.throughput,
      error_rate: summary.errorRate,
      apdex_target: entity.settings?.apdexTarget,
      apdex_score: summary.apdexScore,
      host_count: summary.hostCount,
      instance_count: summary.instanceCount,
    });
  }
  const browser = entity.apmBrowserSummary;
  const browserMonitored = browser !== null && browser !== undefined && anyValue(browser);
  if (reporting && browserMonitored) {
    app.end_user_summary = present({ response_time: browser.pageLoadTimeAverage, throughput: browser.pageLoadThroughput });
  }
  app.settings = {
    ...present({ app_apdex_threshold: entity.settings?.apdexTarget }),
    enable_real_user_monitoring: browserMonitored,
    use_server_side_config: entity.settings?.serverSideConfig ?? false,
  };
  if (options.withLinks) {
    const instances = appInstances(entity.applicationInstancesV2?.applicationInstances ?? []);
    app.links = {
      application_instances: instances.map((instance) => instance.id),
      servers: [],
      application_hosts: appHosts(entity.applicationId, instances).map((host) => host.id),
    };
  }
  return app;
}

/** v2's top-level link templates, verbatim (singular `/v2/application/` is New Relic's own typo). */
export const APPLICATION_TOP_LINKS: V2Body = {
  'application.servers': '/v2/servers?ids={server_ids}',
  'application.server': '/v2/servers/{server_id}',
  'application.application_hosts': '/v2/application/{application_id}/hosts?ids={host_ids}',
  'application.application_host': '/v2/application/{application_id}/hosts/{host_id}',
  'application.application_instances': '/v2/application/{application_id}/instances?ids={instance_ids}',
  'application.application_instance': '/v2/application/{application_id}/instances/{instance_id}',
  'application.alert_policy': '/v2/alert_policies/{alert_policy_id}',
};

/** Choices taken where the reference is UNCONFIRMED, shared by both application routes. */
export const APPLICATION_ASSUMPTIONS: readonly string[] = [
  'apmSummary.responseTimeAverage is in seconds (schema type Seconds); v2 response_time is in ms, rounded to 2 decimals.',
  'apmSummary.errorRate and v2 error_rate share one scale (both UNCONFIRMED); the value is passed through unscaled.',
  'A non-reporting application has no last_reported_at, application_summary or end_user_summary (v2 docs: no timestamp once not reporting).',
  'health_status comes from alertSeverity (CRITICAL red, WARNING orange, NOT_ALERTING green, NOT_CONFIGURED unknown), gray when not reporting.',
];

/** Field provenance shared by both routes; `prefix` is `applications[]` or `application`. */
export function applicationFields(prefix: string): FieldNote[] {
  const f = (field: string, fidelity: FieldNote['fidelity'], source: string): FieldNote => ({ field: `${prefix}.${field}`, fidelity, source });
  return [
    f('id', 'exact', 'applicationId'),
    f('name', 'exact', 'name'),
    f('language', 'exact', 'language'),
    f('health_status', 'approximate', 'alertSeverity: CRITICAL red, WARNING orange, NOT_ALERTING green, NOT_CONFIGURED unknown; gray when not reporting'),
    f('reporting', 'exact', 'reporting'),
    f('last_reported_at', 'approximate', 'start of the current minute while reporting; omitted otherwise'),
    f('application_summary.response_time', 'exact', 'apmSummary.responseTimeAverage (seconds) x 1000, 2 decimals'),
    f('application_summary.throughput', 'exact', 'apmSummary.throughput (rpm)'),
    f('application_summary.error_rate', 'approximate', 'apmSummary.errorRate, unscaled (scale UNCONFIRMED on both sides)'),
    f('application_summary.apdex_target', 'exact', 'settings.apdexTarget'),
    f('application_summary.apdex_score', 'exact', 'apmSummary.apdexScore'),
    f('application_summary.host_count', 'exact', 'apmSummary.hostCount'),
    f('application_summary.instance_count', 'exact', 'apmSummary.instanceCount'),
    f('application_summary.concurrent_instance_count', 'unsupported', 'no NerdGraph equivalent; omitted'),
    f('end_user_summary.response_time', 'exact', 'apmBrowserSummary.pageLoadTimeAverage (seconds)'),
    f('end_user_summary.throughput', 'exact', 'apmBrowserSummary.pageLoadThroughput'),
    f('end_user_summary.apdex_target', 'unsupported', 'no browser apdex on the APM entity; omitted'),
    f('end_user_summary.apdex_score', 'unsupported', 'no browser apdex on the APM entity; omitted'),
    f('settings.app_apdex_threshold', 'exact', 'settings.apdexTarget'),
    f('settings.end_user_apdex_threshold', 'unsupported', 'not on the APM entity; omitted'),
    f('settings.enable_real_user_monitoring', 'approximate', 'true when apmBrowserSummary holds a value'),
    f('settings.use_server_side_config', 'exact', 'settings.serverSideConfig'),
  ];
}

export function applicationGaps(prefix: string): KnownGap[] {
  return [
    { path: `${prefix}.application_summary.concurrent_instance_count`, description: 'concurrent_instance_count has no NerdGraph equivalent and is omitted.' },
    { path: `${prefix}.end_user_summary.apdex_target`, description: 'The APM entity exposes no browser apdex target; end_user_summary.apdex_target is omitted.' },
    { path: `${prefix}.end_user_summary.apdex_score`, description: 'The APM entity exposes no browser apdex score; end_user_summary.apdex_score is omitted.' },
    { path: `${prefix}.settings.end_user_apdex_threshold`, description: 'end_user_apdex_threshold is not readable from the APM entity and is omitted.' },
    { path: `${prefix}.links.alert_policy`, description: 'The alert policy id of an application is not exposed by the entity; links.alert_policy is omitted.' },
  ];
}

/** The application as `GET /v2/applications/{id}` shows it, for the write routes (404 when absent). */
export async function readApplication(ctx: OperationContext, guid: string): Promise<{ entity: ApmEntity; body: V2Body }> {
  const data = await ctx.read('ApplicationByGuid', { guid });
  const found = parseAnswer(z.object({ actor: z.object({ entity: z.unknown() }) }), data, 'ApplicationByGuid').actor.entity;
  const entity = ctx.requireEntity(found, { guid }, V2Titles.applicationNotFound);
  const parsed = ApmEntity.safeParse(entity);
  if (!parsed.success) throw new UpstreamError('upstream_failure', 'unexpected entity shape in ApplicationByGuid');
  const app = parsed.data;
  return { entity: app, body: { application: reshapeApplication(app, { accountId: ctx.accountId, now: ctx.now }, { withLinks: true }), links: APPLICATION_TOP_LINKS } };
}
