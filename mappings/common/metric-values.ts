/**
 * The REST v2 value -> NRQL formula table (rest-v2.md §1.2-1.4), kept as data. Each metric
 * name belongs to the first family whose rule matches it; the family gives the metric's value
 * set (what `metrics.json` lists and what `values[]` may pick from) and, for each value, the
 * NRQL aggregate expression that computes it over `newrelic.timeslice.value`.
 *
 * Placeholders: `{v}` is `newrelic.timeslice.value`; `{W}` is the length in seconds of the
 * timeslice being computed (the bucket width, or the whole window when summarized): the doc's
 * `$TIME_WINDOW_IN_SECONDS`, which per bucket has to be the bucket width. A value whose formula
 * holds {W} is relative to the window (src/upstream/nrql.ts isWindowRelative).
 *
 * Where this table departs from the migration guide's formulas it says so, and
 * docs/metric-data-rules.md §5 gives the reason.
 */
export interface MetricFamily {
  id: string;
  /** Human-readable rule, for the compatibility report. */
  rule: string;
  matches(name: string): boolean;
  /** value name -> NRQL expression template, in v2's order for the family (what metrics.json lists). */
  formulas: Readonly<Record<string, string>>;
  /** Values v2 computed when asked for by name although metrics.json did not list them. */
  extraFormulas?: Readonly<Record<string, string>>;
}

const AVERAGE_MS = 'average({v}) * 1000';
// Per-minute values divide by {W} themselves rather than use NRQL's rate(): every value relative
// to the window then has one denominator, which the metric-data runner corrects when NerdGraph
// answers over a window other than the one asked (long windows snap to rollup boundaries:
// src/routes/metric-answer.ts, windowCorrection). Same number as rate(count, 1 minute) otherwise.
const PER_MINUTE = 'count({v}) * 60 / {W}';
const CALL_TIME_PER_MINUTE = 'sum({v}) * 60 / {W}';
const COUNT = 'count({v})';
// Ratios of sums, not the guide's average of per-row ratios: v2 divided the bucket's sums.
const EXCLUSIVE_MS = "sum({v}['totalExclusive']) / count({v}) * 1000";
const SHARE_OF_WINDOW = '100 * sum({v}) / {W}';

/** A name equal to one of `names`, or under one of `prefixes`. */
function nameRule(names: readonly string[], prefixes: readonly string[] = []): (name: string) => boolean {
  return (name) => names.includes(name) || prefixes.some((prefix) => name.startsWith(prefix));
}

// Apdex timeslices store S in count, T in total, F in totalExclusive and the threshold in
// min/max. NRQL's apdex() is not used: the JSON shape it returns is unconfirmed.
const APDEX_SAMPLES = "count({v}) + sum({v}) + sum({v}['totalExclusive'])";
const APDEX_SCORE = `(count({v}) + sum({v}) / 2) / (${APDEX_SAMPLES})`;
// EndUser timeslices: total = page load, totalExclusive = front end, sumOfSquares = app time.
const END_USER_NETWORK = "sum({v}) - sum({v}['totalExclusive']) - sum({v}['sumOfSquares'])";

export const METRIC_FAMILIES: readonly MetricFamily[] = [
  {
    id: 'apdex',
    rule: '`Apdex`, `Apdex/...`, `EndUser/Apdex`',
    matches: nameRule(['Apdex', 'EndUser/Apdex'], ['Apdex/']),
    formulas: {
      s: 'count({v})',
      t: 'sum({v})',
      f: "sum({v}['totalExclusive'])",
      count: APDEX_SAMPLES,
      score: APDEX_SCORE,
      value: APDEX_SCORE,
      threshold: 'max({v})',
      threshold_min: 'min({v})',
    },
  },
  {
    id: 'end-user',
    rule: '`EndUser`',
    matches: nameRule(['EndUser']),
    formulas: {
      average_response_time: 'sum({v}) / count({v}) * 1000',
      average_fe_response_time: "sum({v}['totalExclusive']) / count({v}) * 1000",
      average_be_response_time: "1000 * (sum({v}) - sum({v}['totalExclusive'])) / count({v})",
      // The guide omits * 1000 here; the specification gives this value in milliseconds.
      average_network_time: `1000 * (${END_USER_NETWORK}) / count({v})`,
      total_network_time: END_USER_NETWORK,
      // The guide omits * 100 here, unlike fe_time_percentage.
      network_time_percentage: `100 * (${END_USER_NETWORK}) / {W}`,
      total_fe_time: "sum({v}['totalExclusive'])",
      fe_time_percentage: "100 * sum({v}['totalExclusive']) / {W}",
      total_app_time: "sum({v}['sumOfSquares'])",
      average_app_time: "sum({v}['sumOfSquares']) / count({v})",
      call_count: COUNT,
      calls_per_minute: PER_MINUTE,
      requests_per_minute: PER_MINUTE,
    },
  },
  {
    id: 'end-user-rb',
    rule: '`EndUser/RB`',
    matches: nameRule(['EndUser/RB']),
    formulas: {
      average_dom_content_load_time: AVERAGE_MS,
      average_queue_time: EXCLUSIVE_MS,
      total_queue_time: "sum({v}['totalExclusive']) * 1000",
      total_dom_content_time: 'sum({v}) * 1000',
      call_count: COUNT,
    },
  },
  {
    id: 'errors',
    rule: '`Errors/...`',
    matches: nameRule([], ['Errors/']),
    formulas: { error_count: COUNT, errors_per_minute: PER_MINUTE },
  },
  {
    id: 'memory',
    rule: '`Memory/...`',
    matches: nameRule([], ['Memory/']),
    formulas: {
      used_bytes_by_host: 'average({v}) * 1024 * 1024',
      used_mb_by_host: 'average({v})',
      total_used_mb: 'sum({v})',
    },
  },
  {
    id: 'cpu-time',
    rule: '`CPU/User Time`',
    matches: nameRule(['CPU/User Time']),
    formulas: { percent: SHARE_OF_WINDOW, average_time: AVERAGE_MS, total_time: 'sum({v}) * 1000' },
  },
  {
    id: 'cpu',
    rule: '`CPU/...` (other)',
    matches: nameRule([], ['CPU/']),
    formulas: { percent: 'average({v}) * 100' },
  },
  {
    id: 'gc',
    rule: '`GC/...`',
    matches: nameRule([], ['GC/']),
    formulas: {
      as_percentage: 'average({v}) * 100',
      average_time: AVERAGE_MS,
      calls_per_minute: PER_MINUTE,
      max_value: 'max({v})',
      total_call_time_per_minute: CALL_TIME_PER_MINUTE,
      utilization: SHARE_OF_WINDOW,
    },
  },
  {
    id: 'call',
    rule: 'any other name',
    matches: () => true,
    formulas: {
      average_response_time: AVERAGE_MS,
      calls_per_minute: PER_MINUTE,
      call_count: COUNT,
      min_response_time: 'min({v}) * 1000',
      max_response_time: 'max({v}) * 1000',
      average_exclusive_time: EXCLUSIVE_MS,
      average_value: 'average({v})',
      total_call_time_per_minute: CALL_TIME_PER_MINUTE,
      requests_per_minute: PER_MINUTE,
      standard_deviation: 'stddev({v}) * 1000',
    },
    // Scripts ask HttpDispatcher for average_call_time (New Relic's own response-time recipe).
    extraFormulas: { average_call_time: AVERAGE_MS },
  },
];

/**
 * Every timeslice read reads unscoped rows only (src/upstream/nrql.ts UNSCOPED_ROWS), said in
 * each mapping that reads timeslices.
 */
export const UNSCOPED_ROWS_ASSUMPTION =
  'Only unscoped timeslice rows are read (`scope IS NULL`), as REST v2 reported them: agents also record segment metrics (Datastore/statement/..., External/<host>/<library>/..., Custom/..., Ruby Controller/...) scoped to their transaction under the same metricTimesliceName ("Query APM metric timeslice data with NRQL"), which a query by name alone counts twice. That an unscoped row has no `scope` attribute at all (rather than an empty one) is UNCONFIRMED (probe: unscoped-rows-have-no-scope).';

export function familyOf(name: string): MetricFamily {
  // The last family matches every name, so find() always succeeds.
  return METRIC_FAMILIES.find((family) => family.matches(name)) as MetricFamily;
}

/** Every value a metric can compute when asked by name: its listed values, then the extras. */
export function acceptedFormulasOf(name: string): Readonly<Record<string, string>> {
  const family = familyOf(name);
  return { ...family.formulas, ...family.extraFormulas };
}

/**
 * Mobile apps' timeslices (rest-v2.md §1.4-1.5): sessions and crashes carry only a count, so
 * their values are the count and its rate. Checked before METRIC_FAMILIES on mobile routes
 * only: an APM custom metric named `Session/Start` keeps its call values. Other mobile names
 * (`External/all`, HTTP request times) are call metrics, as on APM apps.
 */
export const MOBILE_METRIC_FAMILIES: readonly MetricFamily[] = [
  {
    id: 'mobile-count',
    rule: '`Session/Start`, `Mobile/Crash/All` (mobile apps)',
    matches: nameRule(['Session/Start', 'Mobile/Crash/All']),
    formulas: { call_count: COUNT, calls_per_minute: PER_MINUTE },
  },
];

export function mobileFamilyOf(name: string): MetricFamily {
  return MOBILE_METRIC_FAMILIES.find((family) => family.matches(name)) ?? familyOf(name);
}

export function mobileAcceptedFormulasOf(name: string): Readonly<Record<string, string>> {
  const family = mobileFamilyOf(name);
  return { ...family.formulas, ...family.extraFormulas };
}
