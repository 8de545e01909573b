import { EntityKinds, defineMetricDataMapping, defineParams, param } from '../../src/mapping-api.ts';
import { EntityTitles } from '../common/entity-titles.ts';
import { applicationMetricData } from '../common/application-metric-data.ts';
import { MOBILE_METRIC_FAMILIES, mobileAcceptedFormulasOf, mobileFamilyOf } from '../common/metric-values.ts';
import { MOBILE_GUID_ATTRIBUTES, MOBILE_ROWS_ASSUMPTION } from './mobile-rows.ts';
import { METRIC_DATA_KEYS } from '../common/metric-v2-keys.ts';


/**
 * GET and POST /v2/mobile_applications/{id}/metrics/data.{json,xml}: the application route's
 * rules over the mobile app's timeslices, selected by `(entityGuid = '<mobile GUID>' OR entity.guid = '<mobile GUID>')` (the GUID
 * is computed from account and id). MOBILE-REST sends a single `name`: accepted as a name.
 */
export default defineMetricDataMapping({
  ...applicationMetricData,
  id: 'mobile-applications.metric-data',
  route: '/v2/mobile_applications/{id}/metrics/data.{format}',
  v2Keys: METRIC_DATA_KEYS,
  sample: { path: { id: '{mobile_application_id}' }, query: 'names[]=Session/Start&values[]=call_count&from={from}&to={to}&summarize=true' },
  operation: 'MobileApplicationMetricData',
  summary: 'Mobile metric timeslice data: one NRQL query (WHERE entityGuid OR entity.guid, FACET metricTimesliceName) plus the name check and the entity, in one request',
  target: { entity: EntityKinds.mobileApplication, notFoundTitle: EntityTitles.mobileApplicationNotFound, attribute: MOBILE_GUID_ATTRIBUTES, value: 'guid' },
  formulasOf: (name) => mobileFamilyOf(name).formulas,
  acceptedFormulasOf: mobileAcceptedFormulasOf,
  parameters: defineParams({
    names: param.metricNames(
      {
        fidelity: 'exact',
        note: 'As for applications (names[] in every spelling, 1 to 100); a single `name` (MOBILE-REST sends name=Mobile/Crash/All) is read as one more name, after names[].',
      },
      ['name'],
    ),
    values: param.values('values', { fidelity: 'exact', note: 'As for applications.' }),
    summarize: param.flag('summarize', { fidelity: 'exact', note: 'As for applications.' }),
    raw: param.flag('raw', { fidelity: 'approximate', note: 'Accepted and validated; values are never rounded either way.' }),
    from: param.single('from', { fidelity: 'exact', note: 'As for applications.' }),
    to: param.single('to', { fidelity: 'exact', note: 'As for applications.' }),
    period: param.single('period', { fidelity: 'approximate', note: 'As for applications.' }),
  }),
  fields: [
    ...applicationMetricData.fields.filter((field) => !field.field.endsWith('.values')),
    {
      field: 'metric_data.metrics[].timeslices[].values',
      fidelity: 'exact',
      source: `the formula table of mappings/common/metric-values.ts (mobile families first: ${MOBILE_METRIC_FAMILIES.map((f) => f.rule).join('; ')}; then the APM families)`,
    },
  ],
  knownGaps: [
    ...applicationMetricData.knownGaps,
    { description: 'A mobile app version id in place of the app id (MOBILE-REST per-version crash query) is not supported: it answers 404.' },
    { description: 'launch_count (count(v) on Session/Start, rest-v2.md §1.4) is not offered: Session/Start lists call_count and calls_per_minute.' },
  ],
  assumptions: [
    ...applicationMetricData.assumptions.filter((text) => !text.startsWith('An unknown id') && !text.startsWith('appId')),
    MOBILE_ROWS_ASSUMPTION,
    'Session/Start and Mobile/Crash/All are count metrics (values call_count, calls_per_minute); other mobile names, External/all included, are call metrics.',
    '`name` on the data route is an alias of names[] (routes-next.md §3, INFER); both together are all read, names[] first.',
    'An unknown id, an id of another account or a malformed id answers 404 "No Mobile Application found with the given ID".',
  ],
});
