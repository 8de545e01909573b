/**
 * The legacy face of the browser applications list: v2's answers computed from the model
 * (data.browserApps) by the REST rules.
 */
import type { V2Body } from '../../v2/format.ts';
import { ids, pageOf, send, text, valuesOf, type LegacyRequest, type Pairs } from './common.ts';

const PAGE_SIZE = 200;

interface NameIdsFilters {
  name?: string;
  ids?: Set<number>;
  page: number;
}

function nameIdsFilters(pairs: Pairs): NameIdsFilters {
  const filters: NameIdsFilters = { page: 1 };
  const name = text(pairs, 'filter[name]');
  if (name !== undefined) filters.name = name.toLowerCase();
  if (valuesOf(pairs, 'filter[ids]').length > 0) filters.ids = new Set(ids(pairs, 'filter[ids]') ?? []);
  filters.page = pageOf(pairs);
  return filters;
}

/** The account's items matching the filters, by name, one page of them, and v2's Link header. */
function listPage<T extends { accountId: number; id: number; name: string }>(
  req: LegacyRequest,
  all: readonly T[],
  wrapperKey: string,
  render: (item: T) => V2Body,
  topLinks?: V2Body,
): Response {
  const { name, ids: idSet, page } = nameIdsFilters(req.params);
  const matching = all
    .filter((item) => item.accountId === req.accountId)
    .filter((item) => name === undefined || item.name.toLowerCase().includes(name))
    .filter((item) => idSet === undefined || idSet.has(item.id))
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : a.id - b.id));
  const items = matching.slice((page - 1) * PAGE_SIZE, page * PAGE_SIZE).map(render);
  const link = req.link(page, Math.ceil(matching.length / PAGE_SIZE));
  return send(req.format, 200, { [wrapperKey]: items, ...(topLinks ? { links: topLinks } : {}) }, link ? { link } : {});
}

// ---------------------------------------------------------------------------------------------
// GET /v2/browser_applications.{format}

export function legacyBrowserApplications(req: LegacyRequest): Response {
  return listPage(req, req.data.browserApps, 'browser_applications', (app) => ({
    id: app.id,
    name: app.name,
    browser_monitoring_key: app.browserMonitoringKey,
    loader_script: app.loaderScript,
  }));
}
