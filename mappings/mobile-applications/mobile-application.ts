import { z } from 'zod';
import { type FieldNote, type KnownGap, type ReshapeContext, fieldNotesUnder, type V2Body } from '../../src/mapping-api.ts';
import { healthStatus, startOfMinute } from '../common/entity-health.ts';
import { ApplicationOutline } from '../common/entity-schemas.ts';
import { MOBILE_APPLICATION_TITLES } from '../../facts/v2-titles.ts';

/**
 * A mobile application entity (outline or full) reshaped into v2's mobile application object
 * (routes-next.md §3, rest-v2-shapes.md §8, rest-v2.md §3.5). Shared by the list and show mappings.
 */
export const MOBILE_NOT_FOUND = MOBILE_APPLICATION_TITLES.notFound;

/** v2's wrapper keys for mobile applications (UNCONFIRMED: see MOBILE_ASSUMPTIONS; probe: v2-mobile-wrapper-keys). */
export const MOBILE_LIST_KEY = 'applications';
export const MOBILE_ITEM_KEY = 'application';

const num = z.number().nullable().optional();

export const MobileEntity = ApplicationOutline.extend({
  mobileSummary: z
    .object({
      appLaunchCount: num,
      crashCount: num,
      crashRate: num,
      httpErrorRate: num,
      httpRequestCount: num,
      httpRequestRate: num,
      httpResponseTimeAverage: num,
      mobileSessionCount: num,
      networkFailureRate: num,
    })
    .nullable()
    .optional(),
});

export type MobileEntity = z.infer<typeof MobileEntity>;

const orNull = (value: number | null | undefined): number | null => value ?? null;

/** Requests per session, 2 decimals (v2's example: 7.27); null without sessions. */
export function callsPerSession(requests: number | null | undefined, sessions: number | null | undefined): number | null {
  if (requests == null || sessions == null || sessions <= 0) return null;
  return Math.round((requests / sessions) * 100) / 100;
}

export function reshapeMobileApplication(entity: MobileEntity, ctx: ReshapeContext): V2Body {
  const reporting = entity.reporting === true;
  const app: V2Body = {
    id: entity.applicationId,
    name: entity.name,
    health_status: healthStatus(reporting, entity.alertSeverity),
    reporting,
  };
  // As for APM apps: agents report each minute, so a reporting app last reported this minute.
  if (reporting) app.last_reported_at = startOfMinute(ctx.now);
  const summary = entity.mobileSummary;
  // v2 showed no summaries for an app without recent data (rest-v2-shapes.md §8).
  if (reporting && summary) {
    app.mobile_summary = {
      active_users: null,
      launch_count: orNull(summary.appLaunchCount),
      throughput: orNull(summary.httpRequestRate),
      response_time: orNull(summary.httpResponseTimeAverage),
      calls_per_session: callsPerSession(summary.httpRequestCount, summary.mobileSessionCount),
      interaction_time: null,
      failed_call_rate: orNull(summary.networkFailureRate),
      remote_error_rate: orNull(summary.httpErrorRate),
    };
    app.crash_summary = {
      supports_crash_data: summary.crashCount != null,
      unresolved_crash_count: null,
      crash_count: orNull(summary.crashCount),
      crash_rate: orNull(summary.crashRate),
    };
  }
  return app;
}

/** Choices taken where the reference is UNCONFIRMED, shared by both mobile routes (each names its probe). */
export const MOBILE_ASSUMPTIONS: readonly string[] = [
  'Wrapper keys are `applications` (list) and `application` (show), as the 2016 swagger and ambitioninc show (UNCONFIRMED: opsmatters reads `mobile_applications` / `mobile_application`; probe: v2-mobile-wrapper-keys); the sandbox legacy face uses the same keys. No top-level `links`.',
  'last_reported_at is sent while reporting (start of the current minute, as for APM apps; opsmatters has the field, the swagger does not) and omitted otherwise.',
  'A non-reporting app (or one NerdGraph gives no mobileSummary) has neither mobile_summary nor crash_summary, as v2 omitted summaries without recent data.',
  'mobile_summary.response_time is httpResponseTimeAverage in seconds, unscaled (v2 example 0.428 looks like seconds).',
  'calls_per_session is httpRequestCount / mobileSessionCount rounded to 2 decimals; null without sessions.',
  'crash_summary.supports_crash_data is true when crashCount is non-null; crash_rate is crashRate (percent of sessions), unscaled.',
  'health_status comes from alertSeverity (CRITICAL red, WARNING orange, NOT_ALERTING green, NOT_CONFIGURED unknown), gray when not reporting.',
];

export function mobileFields(prefix: string): FieldNote[] {
  const f = fieldNotesUnder(prefix);
  return [
    f('id', 'exact', 'applicationId'),
    f('name', 'exact', 'name'),
    f('health_status', 'approximate', 'alertSeverity; gray when not reporting'),
    f('reporting', 'exact', 'reporting'),
    f('last_reported_at', 'approximate', 'start of the current minute while reporting; omitted otherwise'),
    f('mobile_summary.active_users', 'unsupported', 'no NerdGraph source: null'),
    f('mobile_summary.launch_count', 'approximate', 'mobileSummary.appLaunchCount'),
    f('mobile_summary.throughput', 'approximate', 'mobileSummary.httpRequestRate (requests per minute)'),
    f('mobile_summary.response_time', 'approximate', 'mobileSummary.httpResponseTimeAverage (seconds)'),
    f('mobile_summary.calls_per_session', 'approximate', 'mobileSummary.httpRequestCount / mobileSessionCount, 2 decimals'),
    f('mobile_summary.interaction_time', 'unsupported', 'no NerdGraph source: null'),
    f('mobile_summary.failed_call_rate', 'approximate', 'mobileSummary.networkFailureRate (percent)'),
    f('mobile_summary.remote_error_rate', 'approximate', 'mobileSummary.httpErrorRate (percent)'),
    f('crash_summary.supports_crash_data', 'approximate', 'true when mobileSummary.crashCount is non-null'),
    f('crash_summary.unresolved_crash_count', 'unsupported', 'no NerdGraph source: null'),
    f('crash_summary.crash_count', 'approximate', 'mobileSummary.crashCount'),
    f('crash_summary.crash_rate', 'approximate', 'mobileSummary.crashRate (percent of sessions)'),
  ];
}

export function mobileGaps(prefix: string): KnownGap[] {
  return [
    { path: `${prefix}.mobile_summary.active_users`, description: 'NerdGraph has no active-user count (usersAffectedCount counts users hit by crashes); active_users is null.' },
    { path: `${prefix}.mobile_summary.interaction_time`, description: 'NerdGraph has no interaction time; interaction_time is null.' },
    { path: `${prefix}.crash_summary.unresolved_crash_count`, description: 'NerdGraph has no unresolved crash count; unresolved_crash_count is null.' },
    { description: "mobileSummary's window is undocumented; v2 summarised the last 30 minutes." },
  ];
}
