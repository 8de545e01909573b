/**
 * The legacy face's other metric targets: a host or an instance of an APM app (their rows split
 * from the app's by instance-split.ts) and a mobile app. Existence follows the listings: a host
 * or instance is known while it is current (hosts.ts#currentHosts), so a non-reporting app has
 * none. Unknown, foreign and malformed ids all answer the same 404.
 */
import { V2Titles } from './titles.ts';
import { notFound } from './wire.ts';
import { currentHosts } from '../hosts.ts';
import { hostRowsOf, instanceRowsOf } from '../instance-split.ts';
import { applicationOf, type LegacyRequest } from './common.ts';
import { appMetricSource, type MetricSource } from './metrics.ts';

const ID = /^[1-9]\d{0,14}$/;

function idOf(req: LegacyRequest, key: string): number | undefined {
  const raw = req.path[key] ?? '';
  return ID.test(raw) ? Number(raw) : undefined;
}

export function hostMetricSource(req: LegacyRequest): MetricSource {
  const app = applicationOf(req);
  const hostId = idOf(req, 'host_id');
  const host = currentHosts(app).find((candidate) => candidate.id === hostId);
  if (!host) throw notFound(V2Titles.applicationHostNotFound);
  return { owner: app, rowsOf: (metric, since, until, now) => hostRowsOf(app, host.name, metric, since, until, now) };
}

export function instanceMetricSource(req: LegacyRequest): MetricSource {
  const app = applicationOf(req);
  const instanceId = idOf(req, 'instance_id');
  const known = currentHosts(app).some((host) => host.instances.some((instance) => instance.id === instanceId));
  if (!known || instanceId === undefined) throw notFound(V2Titles.applicationInstanceNotFound);
  return { owner: app, rowsOf: (metric, since, until, now) => instanceRowsOf(app, instanceId, metric, since, until, now) };
}

export function mobileMetricSource(req: LegacyRequest): MetricSource {
  const id = idOf(req, 'id');
  const app = req.data.mobileApps.find((candidate) => candidate.id === id && candidate.accountId === req.accountId);
  if (!app) throw notFound(V2Titles.mobileApplicationNotFound);
  return appMetricSource(app);
}
