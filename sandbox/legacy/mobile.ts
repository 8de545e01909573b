/**
 * GET /v2/mobile_applications and /v2/mobile_applications/{id}: v2's answers computed straight
 * from data.mobileApps (generated apps and those created through either face). The wrapper
 * keys `applications` / `application` are a choice (the reference disputes them: the 2016
 * swagger and ambitioninc use these, opsmatters `mobile_applications`); the gateway's mapping
 * makes the same choice, so the differential compares like with like.
 */
import { notFound, type V2Body, isoSeconds } from './wire.ts';
import type { SandboxMobileApp } from '../model.ts';
import { HEALTH_BY_SEVERITY, ids, pageOf, send, text, valuesOf, type LegacyRequest } from './common.ts';
import { MOBILE_APPLICATION_TITLES } from '../../facts/v2-titles.ts';

const PAGE_SIZE = 200;
const MOBILE_NOT_FOUND = MOBILE_APPLICATION_TITLES.notFound;

const round2 = (value: number): number => Math.round(value * 100) / 100;

/** The v2 mobile application object; a non-reporting app shows no summaries (and no timestamp). */
export function legacyMobileApplication(app: SandboxMobileApp, now: number): V2Body {
  const body: V2Body = {
    id: app.id,
    name: app.name,
    health_status: app.reporting ? (HEALTH_BY_SEVERITY[app.alertSeverity] ?? 'unknown') : 'gray',
    reporting: app.reporting,
  };
  // Sandbox agents report every minute, so a reporting app last reported this minute.
  if (app.reporting) body.last_reported_at = isoSeconds(Math.floor(now / 60_000) * 60_000);
  const summary = app.summary;
  if (app.reporting && summary) {
    body.mobile_summary = {
      active_users: summary.activeUsers,
      launch_count: summary.launchCount,
      throughput: summary.throughput,
      response_time: summary.responseTimeSeconds,
      calls_per_session: summary.sessionCount > 0 ? round2(summary.httpRequestCount / summary.sessionCount) : null,
      interaction_time: summary.interactionTimeSeconds,
      failed_call_rate: summary.failedCallRate,
      remote_error_rate: summary.remoteErrorRate,
    };
    body.crash_summary = {
      supports_crash_data: true,
      unresolved_crash_count: summary.unresolvedCrashCount,
      crash_count: summary.crashCount,
      crash_rate: summary.crashRate,
    };
  }
  return body;
}

export function listMobileApplicationsRoute(req: LegacyRequest): Response {
  const name = text(req.params, 'filter[name]')?.toLowerCase();
  const idList = ids(req.params, 'filter[ids]');
  const idSet = valuesOf(req.params, 'filter[ids]').length > 0 ? new Set(idList ?? []) : undefined;
  const page = pageOf(req.params);
  const matching = req.data.mobileApps
    .filter((app) => app.accountId === req.accountId)
    .filter((app) => name === undefined || app.name.toLowerCase().includes(name))
    .filter((app) => idSet === undefined || idSet.has(app.id))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const items = matching.slice((page - 1) * PAGE_SIZE, page * PAGE_SIZE).map((app) => legacyMobileApplication(app, req.now));
  const link = req.link(page, Math.ceil(matching.length / PAGE_SIZE));
  return send(req.format, 200, { applications: items }, link ? { link } : {});
}

export function showMobileApplicationRoute(req: LegacyRequest): Response {
  const id = req.path.id ?? '';
  const app = /^[1-9]\d{0,14}$/.test(id) ? req.data.mobileApps.find((a) => a.id === Number(id) && a.accountId === req.accountId) : undefined;
  if (!app) throw notFound(MOBILE_NOT_FOUND);
  return send(req.format, 200, { application: legacyMobileApplication(app, req.now) });
}
