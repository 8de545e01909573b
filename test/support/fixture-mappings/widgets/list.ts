import { defineParams, defineReadPlanMapping, pageOfList, param } from '../../../../src/mapping-api.ts';
import { WIDGET_ASSUMPTIONS, WIDGET_GAPS, WIDGETS_PAGE_SIZE, WIDGETS_SEARCH, searchWidgets, widgetFields } from './widgets.ts';

const parameters = defineParams({
  name: param.text('filter[name]', { fidelity: 'approximate', note: "entity search `name LIKE '<text>'` (a substring, any case)" }),
  page: param.page({ fidelity: 'exact', note: `${WIDGETS_PAGE_SIZE} per page, by id; v2 Link header` }),
});

/** Test fixture, a translated list: GET (or a read-only form POST) /v2/fixture_widgets.{json,xml}. */
export default defineReadPlanMapping({
  kind: 'read-plan',
  id: 'fixture_widgets.list',
  method: 'GET',
  // A POST with the same parameters in a form body reads too, as v2's metric data did.
  readOnlyPost: true,
  route: '/v2/fixture_widgets.{format}',
  operation: WIDGETS_SEARCH,
  summary: "List fixture widgets: the account's APM applications from entity search, by id",
  fidelity: 'exact',
  parameters,
  fields: widgetFields('widgets[]'),
  knownGaps: WIDGET_GAPS,
  assumptions: WIDGET_ASSUMPTIONS,
  async load(ctx) {
    const { name, page } = parameters.parse(ctx.params);
    const widgets = await searchWidgets(ctx, name);
    return pageOfList(widgets, { page, pageSize: WIDGETS_PAGE_SIZE, wrapperKey: 'widgets', publicUrl: ctx.publicUrl });
  },
});
