import { EntityKinds, defineMetricNamesMapping } from '../../src/mapping-api.ts';
import { EntityTitles } from '../common/entity-titles.ts';
import { applicationMetricNames } from '../common/application-metric-names.ts';
import { MOBILE_METRIC_FAMILIES, mobileAcceptedFormulasOf, mobileFamilyOf } from '../common/metric-values.ts';
import { MOBILE_GUID_ATTRIBUTES, MOBILE_ROWS_ASSUMPTION } from './mobile-rows.ts';
import { METRIC_NAMES_KEYS } from '../common/metric-v2-keys.ts';

/** GET /v2/mobile_applications/{id}/metrics.{json,xml}: the mobile app's metric names with their value names. */
export default defineMetricNamesMapping({
  ...applicationMetricNames,
  id: 'mobile-applications.metric-names',
  route: '/v2/mobile_applications/{id}/metrics.{format}',
  v2Keys: METRIC_NAMES_KEYS,
  sample: { path: { id: '{mobile_application_id}' }, query: 'name=Session' },
  operation: 'MobileApplicationMetricNames',
  summary: 'List mobile metric names: NRQL uniques(metricTimesliceName) WHERE entityGuid OR entity.guid over a look-back window, filtered, sorted and paged locally',
  target: { entity: EntityKinds.mobileApplication, notFoundTitle: EntityTitles.mobileApplicationNotFound, attribute: MOBILE_GUID_ATTRIBUTES, value: 'guid' },
  formulasOf: (name) => mobileFamilyOf(name).formulas,
  acceptedFormulasOf: mobileAcceptedFormulasOf,
  fields: [
    { field: 'metrics[].name', fidelity: 'approximate', source: 'uniques(metricTimesliceName) WHERE entityGuid OR entity.guid = the mobile GUID, over the look-back window' },
    {
      field: 'metrics[].values',
      fidelity: 'approximate',
      source: `value set of the name family (mobile first: ${MOBILE_METRIC_FAMILIES.map((f) => f.rule).join('; ')}; then the APM families)`,
    },
  ],
  knownGaps: [
    ...applicationMetricNames.knownGaps,
    { description: 'A mobile app version id in place of the app id is not supported: it answers 404.' },
  ],
  assumptions: [
    ...applicationMetricNames.assumptions.filter((text) => !text.startsWith('An unknown id') && !text.startsWith('appId')),
    MOBILE_ROWS_ASSUMPTION,
    'An unknown id, an id of another account or a malformed id answers 404 "No Mobile Application found with the given ID".',
  ],
});
