import { defineParams, defineReadPlanMapping, pageOfList, param, type V2Body } from '../../../../src/mapping-api.ts';
import { WIDGET_ASSUMPTIONS, WIDGET_GAPS, WIDGETS_PAGE_SIZE, WIDGETS_SEARCH, searchWidgets, widgetFields } from './widgets.ts';

/** How long a list read is kept for the caller's later pages (ctx.cache, per caller, account and filter). */
const KEPT_WIDGETS_MS = 30_000;

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
  summary: "List fixture widgets: the account's APM applications from entity search, by id; what a read found is kept 30 s for the caller's later pages",
  fidelity: 'exact',
  parameters,
  fields: widgetFields('widgets[]'),
  knownGaps: WIDGET_GAPS,
  assumptions: WIDGET_ASSUMPTIONS,
  async load(ctx) {
    const { name, page } = parameters.parse(ctx.params);
    const key = `fixture-widgets/${JSON.stringify(name ?? null)}`;
    let widgets = page > 1 ? ctx.cache.get<V2Body[]>(key) : undefined;
    if (widgets === undefined) {
      widgets = await searchWidgets(ctx, name);
      ctx.cache.set(key, { value: widgets, ttlMs: KEPT_WIDGETS_MS, size: widgets.length });
    }
    return pageOfList(widgets, { page, pageSize: WIDGETS_PAGE_SIZE, wrapperKey: 'widgets', publicUrl: ctx.publicUrl });
  },
});
