import type { PlannedAnswer } from './mapping.ts';
import type { V2Body } from '../v2/format.ts';
import { linkHeader } from '../v2/link.ts';

/**
 * A v2 page of a list the gateway holds whole (hosts of an app, deployments, metric names):
 * items `(page-1)*size .. page*size`, the wrapper key and v2's top-level link templates, and
 * the `Link` header (none on a single page; a page past the end points back at the last).
 */
export function pageOfList(
  list: readonly V2Body[],
  options: { page: number; pageSize: number; wrapperKey: string; publicUrl: string; topLinks?: V2Body },
): PlannedAnswer {
  const { page, pageSize } = options;
  const items = list.slice((page - 1) * pageSize, page * pageSize);
  const link = linkHeader(options.publicUrl, page, Math.ceil(list.length / pageSize));
  return {
    body: { [options.wrapperKey]: items, ...(options.topLinks ? { links: options.topLinks } : {}) },
    ...(link ? { headers: { link } } : {}),
  };
}
