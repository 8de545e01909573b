/**
 * Runs parsed NRQL (parser.ts) over the sandbox's metric timeslices (timeslices.ts), the
 * way NRDB answers `FROM Metric` queries on APM timeslice data, and over the apps' deployment
 * markers (`FROM Deployment, ChangeTrackingEvent`, raw columns or aggregates: see "deployment
 * events"). Entry point: runNrql (or executeNrql on a parsed query); the sandbox README's
 * "NRQL" section lists the subset and its sources. Behaviours (behaviours.ts) read here:
 * strictAttributeTypes, mobileGuidAttribute, rollupSnapping.
 *
 * A row of `FROM Metric` is one timeslice of one metric of one app. Every attribute a query
 * can test (appId, appName, entity.guid, accountId, metricTimesliceName) is the same for all
 * rows of one (app, metric) pair, a "series", and newrelic.timeslice.value is never null; so
 * WHERE and filter() conditions are decided once per series, not once per row, and the rows
 * of a series are only generated when an aggregate needs their values.
 *
 * Instances: when the WHERE, a filter() condition, the FACET or a uniques() mentions an
 * instance attribute (INSTANCE_ATTRIBUTES: `host`, `realAgentId`, `instanceName`), a series is
 * one (app, instance, metric) instead, and its rows are the app's rows split by
 * instance-split.ts (an app without instances keeps one series, its instance attributes null). Otherwise
 * nothing changes: app-level answers and their cost are those of the unsplit rows.
 * `realAgentId` is the REST instance id, stored as a string (its type is undocumented; see
 * ATTRIBUTE_TYPES): with strictAttributeTypes only `realAgentId = '5'` matches it.
 *
 * Key transactions: `entity.guid = '<KT guid>'` (or IN) selects the KT's series: its parent
 * app's rows of the KT's `metricName` and `Apdex/<metricName without its first segment>`
 * (timeslices.ts keyTransactionApdexName), whose `entity.guid` is then the KT's GUID, so
 * `FACET entity.guid` groups them per KT. That real NRDB answers KT timeslices this way is an
 * UNCONFIRMED assumption (rest-v2.md §2.5 shows the query, not its rows; with
 * behaviours.keyTransactionRowsCarryEntityGuid off, a KT GUID selects nothing). A KT series is never
 * split by instance (its instance attributes are null).
 *
 * Mobile apps: their rows carry the GUID as `entityGuid`, `entity.guid` or both
 * (mobileGuidAttribute), and accountId. Whether mobile timeslices carry appId is UNCONFIRMED
 * (routes-next.md §3), and mobile ids share no id space with APM ids, so `appId` never names a
 * mobile app here.
 *
 * Scoped rows (behaviour `scopedTimeslices`, timeslices.ts scopesOf): a segment metric
 * (`Datastore/statement/...`, `External/<host>/<library>/...`, `Custom/...`, Ruby
 * `Controller/...`) has, besides its unscoped series, one series per transaction it is scoped
 * to, whose `scope` attribute names the transaction and whose rows are the unscoped rows times
 * the scope's share. Unscoped series have no `scope` (`scope IS NULL` selects them). Source:
 * "Query APM metric timeslice data with NRQL" (its attribute table and its `scope = '...'`
 * example); the Ruby agent's record_scoped_and_unscoped. With the behaviour off there are no
 * scoped series.
 *
 * Evaluation: the WHERE's top-level AND chain picks the apps (candidateApps: those it names, or
 * every visible app when it names none) and, when it names metrics, the metrics to read; the
 * full WHERE then keeps or drops each series. Rows are summed into cells, one per
 * (facet value, filter context, time bucket), in a single pass, and every select item is
 * computed from those sums.
 *
 * The engine's parts, in the order a query meets them: query.ts and parser.ts (the text),
 * time-window.ts (SINCE/UNTIL, snapping, buckets), plan.ts (what to keep), series.ts (which
 * series), conditions.ts (attributes and tests), events.ts (deployment events), cells.ts and
 * accumulate.ts (summing rows), evaluate.ts and results.ts (the answer); scope.ts holds what
 * they share.
 */
import { accumulate, accumulateEvents } from './accumulate.ts';
import { Group } from './cells.ts';
import { DEPLOYMENT_EVENT_TYPES, deploymentEvents, executeEventQuery } from './events.ts';
import { parseNrql } from './parser.ts';
import { planOf } from './plan.ts';
import { isRawSelect, type NrqlQuery } from './query.ts';
import { resultRows } from './results.ts';
import { MAX_ROWS, rules, withRules, type NrqlOutcome, type NrqlScope } from './scope.ts';
import { selectSeries } from './series.ts';
import { metadataOf, rangeOf, snapToRollup, timeWindowOf } from './time-window.ts';

// The engine's public names, for the NerdGraph face and the tests.
export { ATTRIBUTE_TYPES } from './conditions.ts';
export { DEFAULT_EVENT_LIMIT, DEPLOYMENT_EVENT_TYPES, recordChangeTrackingDetails, type ChangeTrackingDetails } from './events.ts';
export { INSTANCE_ATTRIBUTES } from './plan.ts';
export { MAX_BUCKETS, MAX_ROWS, NRQL_MESSAGES, NrqlError, type NrqlMetadata, type NrqlOutcome, type NrqlScope } from './scope.ts';
export { AUTO_BUCKETS, ROLLUP_SNAPS, autoBucketMs, maxBucketMs, rangeOf, snapToRollup, type TimeRange } from './time-window.ts';

/** Parses and runs; throws NrqlSyntaxError or NrqlError. */
export function runNrql(text: string, scope: NrqlScope): NrqlOutcome {
  return executeNrql(parseNrql(text), scope);
}

export function executeNrql(query: NrqlQuery, scope: NrqlScope): NrqlOutcome {
  return withRules(scope.data, () => execute(query, scope));
}

function execute(query: NrqlQuery, scope: NrqlScope): NrqlOutcome {
  const range = rangeOf(query, scope.now);
  if (isRawSelect(query)) return executeEventQuery(query, scope, range);
  const metric = query.from.includes('Metric');
  const snapped = metric && rules().rollupSnapping ? snapToRollup(range) : range;
  const window = timeWindowOf(query, snapped);
  const plan = planOf(query);
  const budget = { rows: scope.maxRows ?? MAX_ROWS };
  const groups = new Map<string | number | null, Group>();
  // Without FACET there is exactly one group, even with no rows at all.
  if (query.facets.length === 0) groups.set(null, new Group(null, plan, window.buckets));
  if (metric) accumulate(selectSeries(query, plan, scope), groups, query, plan, window, scope.now, budget);
  if (query.from.some((type) => (DEPLOYMENT_EVENT_TYPES as readonly string[]).includes(type))) {
    accumulateEvents(deploymentEvents(query, scope, window.begin, window.until), groups, query, plan, window);
  }
  return {
    results: resultRows(query, plan, window, [...groups.values()]),
    metadata: metadataOf(query, window.begin, window.until),
  };
}
