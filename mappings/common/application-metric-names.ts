import { defineParams, param, defineMetricNamesMapping, XML_ASSUMPTION, EntityKinds } from '../../src/mapping-api.ts';
import { EntityTitles } from './entity-titles.ts';
import { METRIC_FAMILIES, UNSCOPED_ROWS_ASSUMPTION, acceptedFormulasOf, familyOf } from './metric-values.ts';
import { METRIC_NAMES_KEYS } from './metric-v2-keys.ts';

/** GET /v2/applications/{id}/metrics.{json,xml}: the app's metric names with their value names. */
export const applicationMetricNames = defineMetricNamesMapping({
  kind: 'metric-names',
  id: 'applications.metric-names',
  method: 'GET',
  route: '/v2/applications/{id}/metrics.{format}',
  v2Keys: METRIC_NAMES_KEYS,
  sample: { path: { id: '{application_id}' }, query: 'name=HttpDispatcher' },
  operation: 'ApplicationMetricNames',
  summary: 'List metric names: NRQL uniques(metricTimesliceName) over a look-back window, filtered, sorted and paged locally',
  fidelity: 'approximate',
  target: { entity: EntityKinds.apmApplication, notFoundTitle: EntityTitles.applicationNotFound, attribute: 'appId', value: 'id' },
  pageSize: 1000,
  formulasOf: (name) => familyOf(name).formulas,
  acceptedFormulasOf,
  // Declaration order is parse order: page is checked before name, as before.
  parameters: defineParams({
    page: param.page({ fidelity: 'exact', note: '1000 names per page, v2 Link header (first, prev, next, last) with every parameter kept.' }),
    name: param.text('name', { fidelity: 'exact', note: 'Case-sensitive substring of the metric name, applied by the gateway (no NRQL LIKE, so no wildcard surprises).' }),
    cursor: param.ignored('cursor', {
      fidelity: 'unsupported',
      note: "v2's cursor paging for names is not emulated; the Link header pages with page=N, which v2 also accepted.",
    }),
  }),
  fields: [
    { field: 'metrics[].name', fidelity: 'approximate', source: 'uniques(metricTimesliceName) of the app over the look-back window (METRIC_NAMES_LOOKBACK_DAYS, default 7)' },
    {
      field: 'metrics[].values',
      fidelity: 'approximate',
      source: `value set of the metric's name family (${METRIC_FAMILIES.map((f) => f.rule).join('; ')}); NerdGraph has no per-metric value types`,
    },
  ],
  knownGaps: [
    { description: 'Only names reported within the look-back window are listed; v2 listed every name ever known for the app.' },
    { description: 'Value names come from the name family, not from what the agent recorded: a custom metric whose name looks like another family shows that family\'s values.' },
    { description: 'At most 10,000 names per application (the NRQL uniques() ceiling).' },
    { description: 'A listing is cached for 60 seconds per caller and application, so a name that appears meanwhile shows up within a minute.' },
  ],
  assumptions: [
    XML_ASSUMPTION,
    'appId is compared as a number in NRQL (rest-v2.md §1.1 quotes it inconsistently).',
    'Names are sorted by UTF-16 code units (v2 documented no order).',
    UNSCOPED_ROWS_ASSUMPTION,
    'An unknown id, an id of another account or a malformed id answers 404 "No Application found with the given ID".',
  ],
});
