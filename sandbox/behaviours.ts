/**
 * The documented New Relic behaviours the sandbox simulates, each switchable, so a test can show
 * the gateway failing without the fix that copes with it (issue 20). Every behaviour is ON by
 * default: the differential tests and `npm start` meet New Relic as it documents itself.
 * Each field names its source; the sandbox README lists them all.
 */
export interface SandboxBehaviours {
  /**
   * Segment metrics (Datastore/..., External/..., Custom/..., Ruby Controller/...) are recorded
   * both unscoped and scoped to their transaction: same metricTimesliceName, the scoped row has
   * a `scope` attribute. Source: "Query APM metric timeslice data with NRQL" (attribute table).
   */
  scopedTimeslices: boolean;
  /**
   * An NRQL query costs time that grows with its window and its uniques/FACET width; past its
   * `timeout` (default 5 s) it fails with NerdGraph's TIMEOUT error. Source: "NRQL query rate
   * limits"; NerdGraph async queries tutorial.
   */
  nrqlTimeouts: boolean;
  /** Real milliseconds per simulated second of query cost, so tests stay fast (1000 = real time). */
  nrqlClockScale: number;
  /**
   * `applicationInstancesV2` returns one page of this many instances and a `nextCursor`; 0 turns
   * paging off (every instance on one page). Source: the schema ("Paginated list of APM
   * application instances").
   */
  instancePageSize: number;
  /** NRQL compares values by their documented attribute type: a number never equals a string literal. */
  strictAttributeTypes: boolean;
  /**
   * Browser monitoring is a loader setting (LITE, NONE, PRO, SPA) held by the app, independent of
   * whether browser traffic arrived lately. Source: the schema's AgentApplicationBrowserLoader.
   * Off: the loader follows traffic (SPA with page views, NONE without), as before (browser-loader.ts).
   */
  browserLoaderConfig: boolean;
  /** Milliseconds before a write (change tracking event, tag) is seen by NRQL and entity search. */
  ingestLagMs: number;
  /**
   * NerdGraph answers 429 beyond this many concurrent requests per user, whatever key the user
   * sends; 0 turns the limit off. Source: "NerdGraph usage limits" (25 concurrent per user).
   */
  concurrentRequestsPerUser: number;
  /**
   * Long windows snap to rollup boundaries (a 47h59m query resolves on 5-minute aggregations).
   * Source: NRQL docs, "Set time range on dashboards and charts" / query time ranges.
   */
  rollupSnapping: boolean;
}

export const DEFAULT_BEHAVIOURS: Readonly<SandboxBehaviours> = Object.freeze({
  scopedTimeslices: true,
  nrqlTimeouts: true,
  nrqlClockScale: 10,
  instancePageSize: 50,
  strictAttributeTypes: true,
  browserLoaderConfig: true,
  ingestLagMs: 3_000,
  concurrentRequestsPerUser: 25,
  rollupSnapping: true,
});

export function resolveBehaviours(overrides: Partial<SandboxBehaviours> = {}): SandboxBehaviours {
  return { ...DEFAULT_BEHAVIOURS, ...overrides };
}
