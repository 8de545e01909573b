/**
 * The legacy face's metric endpoints: `metrics.json` (metric names) and `metrics/data.json`
 * (timeslice data), answered as REST v2 would, by docs/metric-data-rules.md applied straight to
 * the raw timeslice rows. This is the reference the gateway's NRQL translation is compared
 * against, so it shares no code with it: parameters, timestamps, buckets and formulas are all
 * worked out here, in plain arithmetic over the rows.
 *
 * The rows read here are the unscoped ones (timeslices.ts rowsOf): REST v2's metric data had no
 * scope, so a segment metric's scoped rows (behaviour scopedTimeslices) never count here.
 *
 * routes.ts routes here with the target already resolved for the caller's account: an app, a
 * host or an instance of one (their rows split by instance-split.ts), or a mobile app.
 * Parameters and buckets: metric-params.ts; sums and formulas: metric-formulas.ts; what a
 * request carries: metric-request.ts.
 */
import { createHash } from 'node:crypto';
import { CONTENT_TYPES, serialise, type V2Body, type V2Format, isoSeconds, type JsonValue } from './wire.ts';
import type { SandboxData } from '../model.ts';
import { metricsOf, rowsOf, type MetricOwner, type SandboxMetric } from '../timeslices.ts';
import { CACHE_CONTROL, etagMatches } from './common.ts';
import { bucketSums, formulaFor } from './metric-formulas.ts';
import { MINUTE, bucketsFor, dataParams, type Buckets } from './metric-params.ts';
import type { DataOptions, MetricRequest, MetricSource } from './metric-request.ts';

export type { DataOptions, MetricRequest, MetricSource } from './metric-request.ts';

/** An APM app's own rows. */
export function appMetricSource(owner: MetricOwner): MetricSource {
  return { owner, rowsOf: (metric, since, until, now) => rowsOf(owner, metric, since, until, now) };
}

export interface NamesRequest extends MetricRequest {
  /** The requested page, already validated as for the applications list. */
  page: number;
  /** v2's Link header for this request at `page` of `lastPage`. */
  link(page: number, lastPage: number): string | undefined;
}

const NAMES_PAGE_SIZE = 1000;
const MAX_NAME_LENGTH = 1024;

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

/** Every metric the owner has reported by `now`: REST v2 knew every name ever reported. */
function knownMetrics(owner: MetricOwner, data: SandboxData, now: number): SandboxMetric[] {
  return metricsOf(owner, data).filter((metric) => metric.since <= now);
}

/** Plain `<` on strings compares UTF-16 code units, as v2's sort did. */
const byName = (a: SandboxMetric, b: SandboxMetric): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);

function reply(format: V2Format, body: V2Body, headers: Record<string, string> = {}): Response {
  return new Response(serialise(body, format), { status: 200, headers: { 'content-type': CONTENT_TYPES[format], ...headers } });
}

// ---------------------------------------------------------------------------------------------
// metrics.json

export function legacyMetricNames(req: NamesRequest): Response {
  const filter = req.param('name').at(-1) ?? '';
  const matching = knownMetrics(req.source.owner, req.data, req.now)
    .filter((metric) => metric.name.includes(filter))
    .sort(byName);
  const metrics = matching
    .slice((req.page - 1) * NAMES_PAGE_SIZE, req.page * NAMES_PAGE_SIZE)
    .map((metric) => ({ name: metric.name, values: [...metric.values] }));
  const link = req.link(req.page, Math.ceil(matching.length / NAMES_PAGE_SIZE));
  return reply(req.format, { metrics }, link ? { link } : {});
}


// ---------------------------------------------------------------------------------------------
// metrics/data.json: the answer (rules §4, §6)

/** Names with control characters or over 1024 characters are never looked up. */
const lookable = (name: string): boolean => name.length <= MAX_NAME_LENGTH && !CONTROL.test(name);

function metricEntry(req: MetricRequest, metric: SandboxMetric, wanted: string[] | undefined, buckets: Buckets): V2Body {
  const values = wanted ? wanted.filter((value) => metric.values.includes(value) || (metric.kind === 'call' && value === 'average_call_time')) : metric.values;
  const formulas = values.map((value) => [value, formulaFor(metric.kind, value)] as const);
  const timeslices = bucketSums(req.source, metric, buckets, req.now).map((sums, k): JsonValue => {
    const from = buckets.start + k * buckets.width;
    const to = from + buckets.width - (buckets.summarized ? 1 : 0);
    return {
      from: isoSeconds(from * 1000),
      to: isoSeconds(to * 1000),
      values: Object.fromEntries(formulas.map(([value, formula]) => [value, formula(sums)])),
    };
  });
  return { name: metric.name, timeslices };
}

export function legacyMetricData(req: MetricRequest, options: DataOptions = {}): Response {
  const params = dataParams(req, options);
  const buckets = bucketsFor(params, req.now);
  const known = new Map(knownMetrics(req.source.owner, req.data, req.now).map((metric) => [metric.name, metric]));
  const found = params.names.filter((name) => lookable(name) && known.has(name));
  const metrics = found.map((name) => metricEntry(req, known.get(name) as SandboxMetric, params.values, buckets));
  if (req.jitter && newestIsOpen(buckets, req.now)) jitterNewest(metrics, 1 + (req.jitter() - 0.5) * 2 * JITTER);
  const body: V2Body = {
    metric_data: {
      from: isoSeconds(params.from * 1000),
      to: isoSeconds(params.to * 1000),
      metrics_not_found: params.names.filter((name) => !found.includes(name)),
      metrics_found: found,
      metrics,
    },
  };
  return withEtag(req, serialise(body, req.format));
}

// ---------------------------------------------------------------------------------------------
// Legacy jitter: the newest timeslice was still filling in v2 (agents report up to a minute
// late), so two calls a moment apart saw it with different values, while closed timeslices
// never changed. With `legacyJitter` on, the face shows that: each call scales every value of
// the newest timeslice by its own factor within ±JITTER; counts stay whole numbers.

/** At most ±1 %. */
const JITTER = 0.01;
/** A timeslice ending less than this before now was still open (seconds). */
const OPEN_SECONDS = 2 * MINUTE;

function newestIsOpen(buckets: Buckets, now: number): boolean {
  const end = buckets.start + buckets.count * buckets.width;
  return end * 1000 > now - OPEN_SECONDS * 1000;
}

function jitterNewest(metrics: V2Body[], factor: number): void {
  for (const metric of metrics) {
    const timeslices = metric.timeslices as Array<{ values: Record<string, JsonValue> }>;
    const newest = timeslices.at(-1);
    if (!newest) continue;
    for (const [key, value] of Object.entries(newest.values)) {
      if (typeof value !== 'number' || value === 0) continue;
      newest.values[key] = Number.isInteger(value) ? Math.max(0, Math.round(value * factor)) : Number((value * factor).toPrecision(12));
    }
  }
}


/** A 200 with a strong ETag of the body, or a bodiless 304 when the client already has it. */
function withEtag(req: MetricRequest, text: string): Response {
  const etag = `"${createHash('sha256').update(text).digest('hex')}"`;
  const headers = { etag, 'cache-control': CACHE_CONTROL };
  if (etagMatches(req.ifNoneMatch, etag)) return new Response(null, { status: 304, headers });
  return new Response(text, { status: 200, headers: { 'content-type': CONTENT_TYPES[req.format], ...headers } });
}
