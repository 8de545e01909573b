/**
 * The documented New Relic behaviours the sandbox simulates, each switchable, so a test can show
 * the gateway failing without the fix that copes with it. Every behaviour is ON by
 * default: the differential tests and `npm start` meet New Relic as it documents itself.
 * Each field names its source; the sandbox README lists them all.
 */
export interface SandboxBehaviours {
  /**
   * Segment metrics (Datastore/..., External/..., Custom/..., Ruby Controller/...) are recorded
   * both unscoped and scoped to their transaction: same metricTimesliceName, the scoped row has
   * a `scope` attribute. Source: "Query APM metric timeslice data with NRQL" (attribute table);
   * the Ruby agent's TransactionMetrics#record_scoped_and_unscoped. Read by nrql/series.ts
   * (timeslices.ts scopesOf); the legacy face always reads unscoped rows, as v2 did.
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
  /**
   * NRQL compares values by their attribute type: a number never equals a string literal nor a
   * string a number. Types per attribute, with their source or "undocumented": the sandbox
   * README, "NRQL attribute types" (nrql/conditions.ts ATTRIBUTE_TYPES).
   */
  strictAttributeTypes: boolean;
  /**
   * Browser monitoring is a loader setting (LITE, NONE, PRO, SPA) held by the app, independent of
   * whether browser traffic arrived lately. Source: the schema's AgentApplicationBrowserLoader.
   * Off: the loader follows traffic (SPA with page views, NONE without), as before (browser-loader.ts).
   */
  browserLoaderConfig: boolean;
  /**
   * Milliseconds before a write (change tracking event, tag) is seen by NRQL and entity search;
   * 0: at once. On real time (or createSandbox's `ingestClock`), not the injected `now`. The
   * legacy face sees every write at once. Sources: "Query your change tracking data" (events
   * stored in NRDB, read by NRQL); "NerdGraph tutorial: View and add tags" (tags read back through
   * entitySearch). The length is undocumented (UNCONFIRMED). See ingest.ts.
   */
  ingestLagMs: number;
  /**
   * NerdGraph answers 429 beyond this many concurrent requests per user, whatever key the user
   * sends; 0 turns the limit off. Source: "NerdGraph usage limits" (25 concurrent per user).
   */
  concurrentRequestsPerUser: number;
  /**
   * Long windows snap to rollup boundaries (a 47h59m query resolves on 5-minute aggregations),
   * reported in metadata.timeWindow. Source: "Set a query's time range", metric query snapping
   * (docs.newrelic.com/docs/nrql/using-nrql/query-time-range); widths beyond that example are
   * the sandbox's choice (nrql/time-window.ts ROLLUP_SNAPS).
   */
  rollupSnapping: boolean;
  // ---- Facts the gateway's mappings take as UNCONFIRMED; `npm run probe` checks each one on a
  // real account (src/probe/). Each switch lets a test show the probe refuting its fact.
  /**
   * The scale of NerdGraph's `apmSummary.errorRate`: 'percent' (0-100) or 'fraction' (0-1).
   * Source: the schema's description of ApmApplicationSummaryData.errorRate, "the percentage of
   * responses to all transactions with an error" (nerdgraph.md; 0-1 vs 0-100 UNCONFIRMED).
   * Probe: apm-error-rate-is-percent.
   */
  errorRateScale: 'percent' | 'fraction';
  /**
   * A key transaction's timeslices answer `FROM Metric WHERE entity.guid = '<KT GUID>'` (its parent
   * app's rows of its metricName and Apdex name, entity.guid being the KT's). Source: New Relic's
   * REST v2 migration guide, which queries KT data so (rest-v2.md §2.5; the rows UNCONFIRMED).
   * Probe: key-transaction-rows-carry-entity-guid.
   */
  keyTransactionRowsCarryEntityGuid: boolean;
  /**
   * `applicationInstancesV2 ... details.id` is the agent instance id that Metric rows carry as
   * `realAgentId`; off: details.id is another number. Source: the migration guide's
   * `realAgentId = '$AGENT_ID'`, "a specific agent (host)" (rest-v2.md §7, INFER).
   * Probe: instance-id-is-real-agent-id.
   */
  instanceIdIsRealAgentId: boolean;
  /**
   * The browser app of an APM app with browser monitoring has the APM app's id (so its GUID is
   * computable); off: it has an id of its own. Source: New Relic numbers the two alike (the agent
   * injects the APM app's id as the browser `applicationID`); UNCONFIRMED in the reference.
   * Probe: browser-app-carries-apm-app-id.
   */
  browserAppCarriesApmAppId: boolean;
  /**
   * `applicationInstancesV2 ... details.host` is the host name Metric rows carry as `host`; off:
   * details.host is another spelling of it (`<name>.internal`). Source: "Query APM metric
   * timeslice data with NRQL" documents `host` on Metric rows; that it equals details.host is
   * UNCONFIRMED (rest-v2.md §7). Probe: metric-host-is-instance-host.
   */
  metricHostIsInstanceHost: boolean;
  /**
   * The attribute that names a mobile app's entity on its Metric timeslice rows: `entityGuid`
   * (what the public nr1 nerdpack code that reads mobile timeslices filters on, e.g.
   * `... FROM Metric WHERE (entityGuid = '<mobile guid>') AND (metricTimesliceName = 'Session/Start')`
   * in khpeet/nr1-mobile-lite, nerdlets/home/overview.js), `entity.guid` (the APM timeslice attribute table of
   * "Query APM metric timeslice data with NRQL"), or both. Default: `entityGuid`, the evidence.
   * Probes: mobile-rows-carry-entityGuid, mobile-rows-carry-entity-guid.
   */
  mobileGuidAttribute: 'entityGuid' | 'entity.guid' | 'both';
  /**
   * Unscoped timeslice rows have no `scope` attribute at all, so `scope IS NULL` selects them;
   * off (test-only): they carry an empty `scope`, and `scope IS NULL` selects nothing. Source:
   * "Query APM metric timeslice data with NRQL" shows scoped rows with `scope = '...'` and says
   * nothing of the unscoped ones (UNCONFIRMED). Probe: unscoped-rows-have-no-scope.
   */
  unscopedRowsHaveNoScope: boolean;
  /**
   * An APM app's browser side (the browser app serving it) exists only while its loader is not
   * NONE; off (test-only): every third APM app with browser traffic has had its loader switched
   * to NONE after its browser app was made, which stays, with its last page views (the
   * schema's AgentApplicationBrowserLoader NONE is a setting; nothing documented deletes the
   * browser entity with it; UNCONFIRMED). Probe: browser-side-only-while-loader-on.
   */
  browserSideOnlyWhileLoaderOn: boolean;
  /**
   * What `nrqlCondition(id)` answers for the id of another family's condition (an APM
   * condition): null, a NOT_FOUND error, or (test-only) another error. Undocumented: the
   * schema says only that the field is nullable (UNCONFIRMED). Probe:
   * nrql-condition-of-other-family-is-absent.
   */
  nrqlConditionOfOtherFamily: 'null' | 'not-found' | 'error';
  /**
   * NerdGraph shows a condition made with a v2 since_value (nrql.evaluationOffset) as a CADENCE
   * signal whose aggregationDelay is since_value windows; off (test-only): as an EVENT_FLOW
   * signal with a 120 s delay and no evaluation offset (EVENT_FLOW is the schema's default
   * aggregationMethod, AlertsNrqlConditionSignal; 120 s the delay of the Terraform provider's
   * documented example). UNCONFIRMED. Probe: v2-nrql-conditions-field-by-field.
   */
  nrqlOffsetReadsAsCadenceDelay: boolean;
  /**
   * The legacy face serves a POST with a form or query body to a GET-only route as that GET
   * (Ansible's community.general.newrelic_deployment looks applications up by
   * `POST /v2/applications.json` with `filter[name]=`; UNCONFIRMED on live v2). On by default,
   * as the gateway serves it (src/routing/routing-step.ts); off (the sandbox answers such a POST
   * 405) shows the other world to `npm run probe`. Probe: v2-post-on-list-route-is-read.
   */
  legacyPostServesRead: boolean;
  /**
   * The legacy face trims `filter[name]` of the policies list before its exact match, as New
   * Relic's pages show (docs-website manage-entities-alerts-conditions.mdx, #example steps 3 and
   * 4: `filter[name]= Logjam Alert` finds "Logjam Alert"; disable-enable-alerts-conditions-using-api.mdx,
   * #example step 1); off (test-only): the value is matched as sent, so a leading space finds
   * nothing. UNCONFIRMED on live v2. Probe: policy-filter-name-trimmed.
   */
  legacyPolicyFilterNameTrimmed: boolean;
  /**
   * The legacy face shows a policy NerdGraph holds as CUSTOM (AlertsIncidentPreference's value
   * newer than both schema files, ../shared/reference/nerdgraph.md §1 quirk 3) with
   * incident_preference "CUSTOM", as it is stored; off (test-only): as "PER_POLICY", the default
   * of v2's create (rest-api-calls-alerts.mdx, #policies-create). What live v2 shows is
   * UNCONFIRMED. Probe: policy-custom-preference-on-v2.
   */
  legacyShowsCustomPreference: boolean;
  /**
   * What `actor.entity(guid:)` answers for a condition's entity GUID
   * (`accountId|AIOPS|CONDITION|id`, alerts.ts conditionEntityGuid): `none`, null, as the
   * sandbox models no condition entity (no page it is written from documents one's type or
   * tags); `family-tagged` (test-only): a GenericEntity of domain AIOPS, type CONDITION, tagged
   * `conditionFamily` with its v2 namespace. UNCONFIRMED. Probe: condition-entity-names-family.
   */
  conditionEntities: 'none' | 'family-tagged';
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
  errorRateScale: 'percent',
  keyTransactionRowsCarryEntityGuid: true,
  instanceIdIsRealAgentId: true,
  browserAppCarriesApmAppId: true,
  metricHostIsInstanceHost: true,
  mobileGuidAttribute: 'entityGuid',
  unscopedRowsHaveNoScope: true,
  browserSideOnlyWhileLoaderOn: true,
  nrqlConditionOfOtherFamily: 'null',
  nrqlOffsetReadsAsCadenceDelay: true,
  legacyPostServesRead: true,
  legacyPolicyFilterNameTrimmed: true,
  legacyShowsCustomPreference: true,
  conditionEntities: 'none',
});

export function resolveBehaviours(overrides: Partial<SandboxBehaviours> = {}): SandboxBehaviours {
  return { ...DEFAULT_BEHAVIOURS, ...overrides };
}
