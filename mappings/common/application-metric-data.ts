import { defineParams, param, defineMetricDataMapping, XML_ASSUMPTION, EntityKinds } from '../../src/mapping-api.ts';
import { EntityTitles } from './entity-titles.ts';
import { METRIC_FAMILIES, UNSCOPED_ROWS_ASSUMPTION, acceptedFormulasOf, familyOf } from './metric-values.ts';
import { METRIC_DATA_KEYS } from './metric-v2-keys.ts';

/**
 * GET and POST /v2/applications/{id}/metrics/data.{json,xml}: timeslice values, one NRQL query
 * faceted by metric name per request. The rules are in docs/metric-data-rules.md.
 */
export const applicationMetricData = defineMetricDataMapping({
  kind: 'metric-data',
  id: 'applications.metric-data',
  method: 'GET',
  readOnlyPost: true,
  route: '/v2/applications/{id}/metrics/data.{format}',
  v2Keys: METRIC_DATA_KEYS,
  sample: { path: { id: '{application_id}' }, query: 'names[]=HttpDispatcher&values[]=call_count&from={from}&to={to}&summarize=true' },
  operation: 'ApplicationMetricData',
  summary: 'Metric timeslice data: one NRQL query (FACET metricTimesliceName, TIMESERIES per the v2 granularity rules) plus a look-back name check, in one request',
  fidelity: 'approximate',
  // The app's rows carry its id as appId.
  target: { entity: EntityKinds.apmApplication, notFoundTitle: EntityTitles.applicationNotFound, attribute: 'appId', value: 'id' },
  formulasOf: (name) => familyOf(name).formulas,
  acceptedFormulasOf,
  // Declaration order is parse order. from, to and period are read as sent: the window rules
  // (src/v2/metric-window.ts) check them together, against the clock, after these.
  parameters: defineParams({
    names: param.metricNames({
      fidelity: 'exact',
      note: 'names[], names, names[0], raw or encoded brackets, query string or form body (GET and POST); 1 to 100 names; empty and repeated names dropped.',
    }),
    values: param.values('values', { fidelity: 'exact', note: 'Same spellings; keeps the requested values the metric has, in request order; none of them gives {}.' }),
    summarize: param.flag('summarize', { fidelity: 'exact', note: 'One timeslice per metric from the start minute to one second before the end minute.' }),
    raw: param.flag('raw', { fidelity: 'approximate', note: 'Accepted and validated; values are never rounded either way.' }),
    from: param.single('from', {
      fidelity: 'exact',
      note: 'RFC 3339 with Z or any offset, a + that arrived as a space, fractions, YYYY-MM-DD HH:MM:SS (UTC), bare dates; default 30 minutes before `to`; output UTC.',
    }),
    to: param.single('to', { fidelity: 'exact', note: 'Same spellings as from; default now.' }),
    period: param.single('period', { fidelity: 'approximate', note: "Seconds, a multiple of 60, at least the range's default granularity (else 422); 0 means the default." }),
  }),
  fields: [
    { field: 'metric_data.from / to', fidelity: 'exact', source: 'the requested range after defaults, whole seconds, UTC' },
    { field: 'metric_data.metrics_found / metrics_not_found', fidelity: 'approximate', source: 'found: a facet in the data query, or a name reported in the look-back window (second NRQL query in the same request, optional: its own 5 s timeout, left out when it cannot finish in time or timed out lately; its failure never fails the data)' },
    { field: 'metric_data.metrics[].timeslices[].from / to', fidelity: 'approximate', source: 'bucket bounds computed by the v2 granularity table, sent as SINCE/UNTIL/TIMESERIES so NRQL buckets coincide' },
    {
      field: 'metric_data.metrics[].timeslices[].values',
      fidelity: 'exact',
      source: `the formula table of mappings/common/metric-values.ts over newrelic.timeslice.value, unscoped rows only (scope IS NULL) (families: ${METRIC_FAMILIES.map((f) => f.rule).join('; ')}); NRQL null (no data) reads 0`,
    },
  ],
  knownGaps: [
    { description: 'A name last reported before the look-back window (METRIC_NAMES_LOOKBACK_DAYS, default 7) and without data in the range is listed as not found; v2 answered zeros for every name it ever knew.' },
    { description: "When the look-back name query fails or is left out, the data still answers, but only names with data in the range are found (the others are listed as not found), and the request's log line records it (degraded). It has its own NRQL timeout, NerdGraph's least (5 s), so it holds the answer up to 5 s at most (a wide window or many names, or an error, fail it); it is left out when the time left is 5.5 s or less (so with REQUEST_DEADLINE_MS at 5500 or less, always), and for a minute after it timed out for the same caller, account and target (remembered per replica). Such answers are never kept in the micro-cache, nor shared across replicas." },
    { description: "A long window (past 24 h) whose ends are not on NerdGraph's rollup boundaries is summed over the snapped window (both ends moved back by up to the rollup: 5 minutes past 24 h), so counts and totals cover up to that much other time than v2's; per-minute and percent values are divided by the snapped window, so rates stay v2's where data is even. Where the rows are coarser than the snap (hourly beyond 8 days) the sums are v2's and those rates differ by at most the ends' shift over the width (under 0.1% for 4 days)." },
    { description: "Timeslices are aligned to the period from the Unix epoch; v2's few-minute ingest-lag shift of the first slice is not reproduced." },
    { description: 'More than 366 timeslices per metric (NRQL TIMESERIES limit) answers 422 asking for a larger period; v2 returned them.' },
    { description: 'EndUser error_percentage (a ratio of two other metrics) is not offered.' },
    { description: 'v2 rounded default output to about 3 significant figures (unconfirmed); the gateway never rounds.' },
    { description: 'When names have disjoint value sets, v2 reportedly returned only the first name\'s values; the gateway gives each metric its own.' },
    { description: 'Values come from the name family\'s formulas: a custom metric named like another family (e.g. Errors/...) is computed as that family.' },
  ],
  assumptions: [
    XML_ASSUMPTION,
    'Granularity, ten-point mode for starts older than 8 days, period and alignment rules as written in docs/metric-data-rules.md §3 (REST v2 texts for its 422 errors are unconfirmed; titles are in MetricTitles).',
    'FACET + TIMESERIES answers are flat rows with facet and beginTimeSeconds (NerdGraph results are opaque JSON; this shape is community-reported).',
    'Apdex values are computed from the apdex timeslice fields (S in count, T in total, F in totalExclusive, threshold in min/max), not NRQL apdex(), whose JSON shape is unconfirmed.',
    'Averages are ratios of sums over the bucket (e.g. average_exclusive_time = sum(totalExclusive)/count), where the migration guide averages per-row ratios.',
    'EndUser average_network_time is in milliseconds and network_time_percentage is a percentage (the guide omits *1000 and *100).',
    'appId is compared as a number in NRQL.',
    UNSCOPED_ROWS_ASSUMPTION,
    "Per-minute and percent-of-window values divide by the window NerdGraph reports it summed over (the data query's metadata.timeWindow; a TIMESERIES row's own bucket), not the requested one: long windows snap to rollup boundaries (rest-v2.md §4). That metadata.timeWindow is the snapped window is documented (NRQL time range docs); the sandbox's snapping is its witness. Without metadata the requested window is used.",
    'Names with control characters or over 1024 characters are answered as not found without being sent.',
    'An unknown id, an id of another account or a malformed id answers 404 "No Application found with the given ID".',
  ],
});
