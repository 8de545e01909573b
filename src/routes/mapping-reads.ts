/** The read kinds of mapping over entities: lists and shows (metric routes: metric-mapping.ts). */
import type { Condition } from '../upstream/entity-query.ts';
import type { EntityKind } from './entity-ref.ts';
import type { V2Body } from '../v2/format.ts';
import type { PageReadContext, ReadMappingBase, ReshapeContext } from './mapping-base.ts';

/** What every paged list's parameters include. */
export interface ListParams {
  page: number;
}

/** A paged v2 list served by an entity search, page numbers emulated over cursors. */
export interface EntityListMapping<P extends ListParams = ListParams> extends ReadMappingBase<P> {
  kind: 'entity-search-list';
  /** The plural v2 wrapper key, e.g. `applications`. */
  wrapperKey: string;
  pageSize: number;
  /**
   * Search conditions for the parameters, scoped to the resolved account; null when the
   * parameters can match nothing (e.g. an empty id list), answered without NerdGraph.
   */
  searchConditions(params: P, accountId: number, ctx: PageReadContext): Condition[] | null | Promise<Condition[] | null>;
  /**
   * One more read for a fetched page, when the search outlines lack what v2 shows (details
   * only entities(guids) returns, per-app links from NRQL, ...): called once per page with its
   * in-account entities; its answer reaches reshapeItem. At most one upstream request.
   */
  enrichPage?(entities: readonly unknown[], ctx: PageReadContext, params: P): Promise<unknown>;
  /**
   * The parameters that change the items beyond the search they select (e.g. exclude_links):
   * pages read with different variants get their own enrichment and rendering.
   */
  renderVariant?(params: P): string;
  /** One upstream entity -> one v2 item (throws on an unexpected shape); `enrichment` is enrichPage's answer. */
  reshapeItem(entity: unknown, ctx: ReshapeContext, enrichment: unknown): V2Body;
  /**
   * Drops items the entity search matched more loosely than v2 would have (e.g. its
   * tokenising LIKE); pages may then hold fewer than pageSize items.
   */
  keepItem?(params: P, item: V2Body): boolean;
}

/** A v2 show route addressed by a numeric id, resolved to a GUID through the cache. */
export interface EntityShowMapping extends ReadMappingBase {
  kind: 'entity-by-id';
  /** The singular v2 wrapper key, e.g. `application`. */
  wrapperKey: string;
  entityKind: { domain: string; type: string };
  notFoundTitle: string;
  /**
   * Entities of other kinds with the same id read in the same request (e.g. the browser app
   * serving an APM app): alias -> kind. Each GUID is computed and sent as `$<alias>Guid`; the
   * alias's answer reaches reshape after the account check, null when absent.
   */
  related?: Readonly<Record<string, EntityKind>>;
  reshape(entity: unknown, ctx: ReshapeContext, related: Readonly<Record<string, unknown>>): V2Body;
}

