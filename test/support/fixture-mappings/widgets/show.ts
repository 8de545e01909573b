import { defineReadPlanMapping, NO_PARAMS } from '../../../../src/mapping-api.ts';
import { WIDGET_ASSUMPTIONS, WIDGET_BY_GUID, WIDGET_GAPS, readWidget, widgetFields } from './widgets.ts';

/** Test fixture, a translated show: GET /v2/fixture_widgets/{id}.{json,xml}. */
export default defineReadPlanMapping({
  kind: 'read-plan',
  id: 'fixture_widgets.show',
  method: 'GET',
  route: '/v2/fixture_widgets/{id}.{format}',
  operation: WIDGET_BY_GUID,
  summary: 'Show a fixture widget: one APM application by its computed GUID',
  fidelity: 'exact',
  parameters: NO_PARAMS,
  fields: widgetFields('widget'),
  knownGaps: WIDGET_GAPS,
  assumptions: WIDGET_ASSUMPTIONS,
  load: async (ctx) => ({ body: { widget: await readWidget(ctx) } }),
});
