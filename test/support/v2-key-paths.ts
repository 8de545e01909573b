/**
 * The key paths v2 documented for each translated GET route, as data: what a v2 client may
 * read in one list item (or the one shown object, or the metric_data object), with the type v2
 * sent. Every value may also be `null` (the guide: a key with no NerdGraph source is sent as
 * null), but only at the end of a path: a block sent as null hides the keys inside it.
 *
 * Sources, short names as in ../shared/reference/rest-v2-shapes.md: SHAPES (that file, by
 * section), SW (v2-definitions-2016.json, New Relic's own swagger, by definition), CG
 * (newrelic-client-go pkg/apm/*_test.go, the real v2 answers it decodes). Where SW types a
 * field wrongly and SHAPES says so (host and instance `language`: integer in SW, a string in real
 * data), SHAPES wins. Top-level link templates (`links` beside the data) are left out: SHAPES §0
 * says no client reads them and omitting them is safe.
 *
 * Path syntax: `a.b` nests, `a[]` is every element of the array `a`, and a `?` after a segment
 * marks it optional (v2 omitted it at times, e.g. `application_summary` of an app without data,
 * SHAPES §1): the keys under an optional segment are required whenever it is present.
 */
export type KeyType = 'int' | 'num' | 'string' | 'bool' | 'time' | 'epoch-ms' | 'int[]' | 'string[]' | 'object';

export interface KeyPathTable {
  /** The mapping id (mappings/*.ts `id`). */
  route: string;
  /** Where the items stand: `applications` (a list) or `application` (one object). */
  wrapper: string;
  list: boolean;
  /** Where the paths come from. */
  source: string;
  paths: Readonly<Record<string, KeyType>>;
}

const APP_SUMMARY = {
  'application_summary?': 'object',
  'application_summary?.response_time': 'num',
  'application_summary?.throughput': 'num',
  'application_summary?.error_rate': 'num',
  'application_summary?.apdex_target': 'num',
  'application_summary?.apdex_score': 'num',
  'application_summary?.host_count': 'int',
  'application_summary?.instance_count': 'int',
  'application_summary?.concurrent_instance_count': 'int',
} as const;

const END_USER_SUMMARY = {
  'end_user_summary?': 'object',
  'end_user_summary?.response_time': 'num',
  'end_user_summary?.throughput': 'num',
  'end_user_summary?.apdex_target': 'num',
  'end_user_summary?.apdex_score': 'num',
} as const;

/** SHAPES §1; SW ApplicationResponseType; CG applications_test.go testApplicationJson. */
const APPLICATION: Record<string, KeyType> = {
  id: 'int',
  name: 'string',
  language: 'string',
  health_status: 'string',
  reporting: 'bool',
  // SHAPES §1: "may be absent for an app that never reported".
  'last_reported_at?': 'time',
  ...APP_SUMMARY,
  ...END_USER_SUMMARY,
  settings: 'object',
  'settings.app_apdex_threshold': 'num',
  'settings.end_user_apdex_threshold': 'num',
  'settings.enable_real_user_monitoring': 'bool',
  'settings.use_server_side_config': 'bool',
  // The list's exclude_links=true drops them; the default sends them.
  links: 'object',
  'links.application_instances': 'int[]',
  'links.servers': 'int[]',
  'links.application_hosts': 'int[]',
  'links.alert_policy': 'int',
};
const APPLICATION_SOURCE = 'SHAPES §1; SW ApplicationResponseType; CG pkg/apm/applications_test.go testApplicationJson';

/** SHAPES §2; SW AppSummaryDataResponse, EndUserSummaryDataResponse. */
const TOPOLOGY_SUMMARIES: Record<string, KeyType> = {
  'application_summary?': 'object',
  'application_summary?.response_time': 'num',
  'application_summary?.throughput': 'num',
  'application_summary?.error_rate': 'num',
  'application_summary?.apdex_score': 'num',
  'application_summary?.instance_count': 'int',
  'end_user_summary?': 'object',
  'end_user_summary?.response_time': 'num',
  'end_user_summary?.throughput': 'num',
  'end_user_summary?.apdex_score': 'num',
};

/** SHAPES §2 Host; SW ApplicationHostResponseType (language: SHAPES, a string). */
const HOST: Record<string, KeyType> = {
  id: 'int',
  application_name: 'string',
  host: 'string',
  language: 'string',
  health_status: 'string',
  ...TOPOLOGY_SUMMARIES,
  links: 'object',
  'links.application': 'int',
  'links.application_instances': 'int[]',
  'links.server': 'int',
};
const HOST_SOURCE = 'SHAPES §2 (Host); SW ApplicationHostResponseType, ApplicationHostLinksResponse';

/** SHAPES §2 Inst; SW ApplicationInstanceResponseType; CG application_instances_test.go. */
const INSTANCE: Record<string, KeyType> = {
  id: 'int',
  application_name: 'string',
  host: 'string',
  port: 'int',
  language: 'string',
  health_status: 'string',
  ...TOPOLOGY_SUMMARIES,
  links: 'object',
  'links.application': 'int',
  'links.application_host': 'int',
  'links.server': 'int',
};
const INSTANCE_SOURCE = 'SHAPES §2 (Inst); SW ApplicationInstanceResponseType, ApplicationInstanceLinksResponse; CG pkg/apm/application_instances_test.go';

/**
 * SHAPES §6; CG key_transactions_test.go (list and show: application_summary with five keys,
 * no host or instance counts, which SW's shared AppSummaryResponse type lists but no real
 * answer holds); SW KeyTransactionResponseType for end_user_summary.
 */
const KEY_TRANSACTION: Record<string, KeyType> = {
  id: 'int',
  name: 'string',
  transaction_name: 'string',
  health_status: 'string',
  reporting: 'bool',
  last_reported_at: 'time',
  application_summary: 'object',
  'application_summary.response_time': 'num',
  'application_summary.throughput': 'num',
  'application_summary.error_rate': 'num',
  'application_summary.apdex_target': 'num',
  'application_summary.apdex_score': 'num',
  end_user_summary: 'object',
  'end_user_summary.response_time': 'num',
  'end_user_summary.throughput': 'num',
  'end_user_summary.apdex_target': 'num',
  'end_user_summary.apdex_score': 'num',
  links: 'object',
  'links.application': 'int',
};
const KEY_TRANSACTION_SOURCE = 'SHAPES §6; CG pkg/apm/key_transactions_test.go (testListKeyTransactionsResponseJSON, keyTransactionJSON); SW KeyTransactionResponseType';

/** SHAPES §8 Mob; SW MobileApplicationResponseType. */
const MOBILE: Record<string, KeyType> = {
  id: 'int',
  name: 'string',
  health_status: 'string',
  reporting: 'bool',
  'last_reported_at?': 'time',
  'mobile_summary?': 'object',
  'mobile_summary?.active_users': 'int',
  'mobile_summary?.launch_count': 'int',
  'mobile_summary?.throughput': 'num',
  'mobile_summary?.response_time': 'num',
  'mobile_summary?.calls_per_session': 'num',
  'mobile_summary?.interaction_time': 'num',
  'mobile_summary?.failed_call_rate': 'num',
  'mobile_summary?.remote_error_rate': 'num',
  // Left out with mobile_summary when the app has no recent data (SHAPES §8 says so of
  // mobile_summary; mappings/mobile-applications/mobile-application.ts takes crash_summary alike).
  'crash_summary?': 'object',
  'crash_summary?.supports_crash_data': 'bool',
  'crash_summary?.unresolved_crash_count': 'int',
  'crash_summary?.crash_count': 'int',
  'crash_summary?.crash_rate': 'num',
};
const MOBILE_SOURCE = 'SHAPES §8 (Mob); SW MobileApplicationResponseType';

/** SHAPES §4; SW MetricDataResponseType (metrics_found typed string there; SHAPES: an array). */
const METRIC_DATA: Record<string, KeyType> = {
  from: 'time',
  to: 'time',
  metrics_not_found: 'string[]',
  metrics_found: 'string[]',
  'metrics[].name': 'string',
  'metrics[].timeslices[].from': 'time',
  'metrics[].timeslices[].to': 'time',
  'metrics[].timeslices[].values': 'object',
};
const METRIC_DATA_SOURCE = 'SHAPES §4; SW MetricDataResponseType, MetricResponse, TimesliceResponse';

/** SHAPES §3. */
const METRIC_NAMES: Record<string, KeyType> = { name: 'string', values: 'string[]' };
const METRIC_NAMES_SOURCE = 'SHAPES §3; SW MetricParserResponseType';

/** SHAPES §9 P; SW PolicyResponseType. */
const POLICY: Record<string, KeyType> = { id: 'int', incident_preference: 'string', name: 'string', created_at: 'epoch-ms', updated_at: 'epoch-ms' };
const POLICY_SOURCE = 'SHAPES §9 (P); SW PolicyResponseType';

/** SHAPES §11; routes-next.md §7 (users: SW's UserResponseType is an internal model "not seen in real output"). */
const USER: Record<string, KeyType> = { id: 'int', first_name: 'string', last_name: 'string', email: 'string', role: 'string' };
const USER_SOURCE = 'SHAPES §11; routes-next.md §7 (Shape)';

export const KEY_PATH_TABLES: readonly KeyPathTable[] = [
  { route: 'applications.list', wrapper: 'applications', list: true, source: APPLICATION_SOURCE, paths: APPLICATION },
  { route: 'applications.show', wrapper: 'application', list: false, source: APPLICATION_SOURCE, paths: APPLICATION },
  { route: 'applications.hosts.list', wrapper: 'application_hosts', list: true, source: HOST_SOURCE, paths: HOST },
  { route: 'applications.hosts.show', wrapper: 'application_host', list: false, source: HOST_SOURCE, paths: HOST },
  { route: 'applications.instances.list', wrapper: 'application_instances', list: true, source: INSTANCE_SOURCE, paths: INSTANCE },
  { route: 'applications.instances.show', wrapper: 'application_instance', list: false, source: INSTANCE_SOURCE, paths: INSTANCE },
  { route: 'key-transactions.list', wrapper: 'key_transactions', list: true, source: KEY_TRANSACTION_SOURCE, paths: KEY_TRANSACTION },
  { route: 'key-transactions.show', wrapper: 'key_transaction', list: false, source: KEY_TRANSACTION_SOURCE, paths: KEY_TRANSACTION },
  {
    route: 'applications.deployments.list',
    wrapper: 'deployments',
    list: true,
    source: 'SHAPES §5; SW DeploymentResponseType; CG pkg/apm/deployments_test.go',
    paths: { id: 'int', revision: 'string', changelog: 'string', description: 'string', user: 'string', timestamp: 'time', links: 'object', 'links.application': 'int' },
  },
  { route: 'mobile-applications.list', wrapper: 'applications', list: true, source: MOBILE_SOURCE, paths: MOBILE },
  { route: 'mobile-applications.show', wrapper: 'application', list: false, source: MOBILE_SOURCE, paths: MOBILE },
  {
    route: 'browser-applications.list',
    wrapper: 'browser_applications',
    list: true,
    source: 'SHAPES §8 (BA); SW BrowserApplicationResponseType',
    paths: { id: 'int', name: 'string', browser_monitoring_key: 'string', loader_script: 'string' },
  },
  { route: 'applications.metric-names', wrapper: 'metrics', list: true, source: METRIC_NAMES_SOURCE, paths: METRIC_NAMES },
  { route: 'application-hosts.metric-names', wrapper: 'metrics', list: true, source: METRIC_NAMES_SOURCE, paths: METRIC_NAMES },
  { route: 'application-instances.metric-names', wrapper: 'metrics', list: true, source: METRIC_NAMES_SOURCE, paths: METRIC_NAMES },
  { route: 'mobile-applications.metric-names', wrapper: 'metrics', list: true, source: METRIC_NAMES_SOURCE, paths: METRIC_NAMES },
  { route: 'applications.metric-data', wrapper: 'metric_data', list: false, source: METRIC_DATA_SOURCE, paths: METRIC_DATA },
  { route: 'application-hosts.metric-data', wrapper: 'metric_data', list: false, source: METRIC_DATA_SOURCE, paths: METRIC_DATA },
  { route: 'application-instances.metric-data', wrapper: 'metric_data', list: false, source: METRIC_DATA_SOURCE, paths: METRIC_DATA },
  { route: 'mobile-applications.metric-data', wrapper: 'metric_data', list: false, source: METRIC_DATA_SOURCE, paths: METRIC_DATA },
  { route: 'alerts-policies.list', wrapper: 'policies', list: true, source: POLICY_SOURCE, paths: POLICY },
  { route: 'alerts-policies.show', wrapper: 'policy', list: false, source: POLICY_SOURCE, paths: POLICY },
  {
    route: 'alerts_nrql_conditions.list',
    wrapper: 'nrql_conditions',
    list: true,
    source:
      'SHAPES §9 (alerts_nrql_conditions, with its 2026-12-01 correction from docs-website alerts-conditions-api-field-names.mdx and rest-api-calls-alerts.mdx: signal and expiration; since_value deprecated)',
    paths: {
      type: 'string',
      id: 'int',
      name: 'string',
      enabled: 'bool',
      runbook_url: 'string',
      value_function: 'string',
      violation_time_limit_seconds: 'int',
      expected_groups: 'int',
      ignore_overlap: 'bool',
      'terms[].duration': 'string',
      'terms[].operator': 'string',
      'terms[].priority': 'string',
      'terms[].threshold': 'string',
      'terms[].time_function': 'string',
      nrql: 'object',
      'nrql.query': 'string',
      'nrql.since_value?': 'string',
      signal: 'object',
      'signal.aggregation_window': 'string',
      'signal.aggregation_method': 'string',
      'signal.aggregation_delay': 'string',
      'signal.fill_option': 'string',
      expiration: 'object',
      'expiration.expiration_duration': 'string',
      'expiration.open_violation_on_expiration': 'bool',
      'expiration.close_violations_on_expiration': 'bool',
    },
  },
  {
    route: 'alerts-channels.list',
    wrapper: 'channels',
    list: true,
    source: 'SHAPES §9 (Ch); SW ChannelResponseType; CG pkg/alerts/channels_test.go',
    paths: { id: 'int', name: 'string', type: 'string', configuration: 'object', links: 'object', 'links.policy_ids': 'int[]' },
  },
  {
    route: 'alerts-incidents.list',
    wrapper: 'incidents',
    list: true,
    source: 'SHAPES §9 (I); SW IncidentResponseType (incident_preference: SHAPES, a string); CG pkg/alerts/incidents_test.go',
    paths: { id: 'int', opened_at: 'epoch-ms', 'closed_at?': 'epoch-ms', incident_preference: 'string', links: 'object', 'links.violations': 'int[]', 'links.policy_id': 'int' },
  },
  {
    route: 'alerts-violations.list',
    wrapper: 'violations',
    list: true,
    source: 'SHAPES §9 (V); SW ViolationResponseType',
    paths: {
      id: 'int',
      label: 'string',
      duration: 'int',
      policy_name: 'string',
      condition_name: 'string',
      priority: 'string',
      opened_at: 'epoch-ms',
      'closed_at?': 'epoch-ms',
      entity: 'object',
      'entity.product': 'string',
      'entity.type': 'string',
      'entity.group_id': 'int',
      'entity.id': 'int',
      'entity.name': 'string',
      links: 'object',
      'links.policy_id': 'int',
      'links.condition_id': 'int',
    },
  },
  {
    route: 'alerts-events.list',
    wrapper: 'recent_events',
    list: true,
    // SHAPES: "Any of these may be missing"; SW lists them all. The ones every event has are required.
    source: 'SHAPES §9 (E); SW RecentEventResponseType; CG pkg/alerts/events_test.go',
    paths: {
      id: 'int',
      event_type: 'string',
      product: 'string',
      entity_type: 'string',
      entity_group_id: 'int',
      entity_id: 'int',
      priority: 'string',
      description: 'string',
      timestamp: 'epoch-ms',
      'incident_id?': 'int',
    },
  },
  {
    route: 'labels.list',
    wrapper: 'labels',
    list: true,
    source: 'SHAPES §10 (Lb); SW LabelResponseType',
    paths: {
      key: 'string',
      category: 'string',
      name: 'string',
      'application_health_status.green': 'int[]',
      'application_health_status.orange': 'int[]',
      'application_health_status.red': 'int[]',
      'application_health_status.gray': 'int[]',
      'server_health_status.green': 'int[]',
      'server_health_status.orange': 'int[]',
      'server_health_status.red': 'int[]',
      'server_health_status.gray': 'int[]',
      'origins.apm': 'int[]',
      'origins.synthetics': 'int[]',
      'origins.agents': 'int[]',
      'links.applications': 'int[]',
      'links.servers': 'int[]',
    },
  },
  { route: 'users.list', wrapper: 'users', list: true, source: USER_SOURCE, paths: USER },
  { route: 'users.show', wrapper: 'user', list: false, source: USER_SOURCE, paths: USER },
];

const TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[+-]\d\d:\d\d$/;

function typeProblem(value: unknown, type: KeyType): string | undefined {
  if (value === null) return undefined;
  const ok = (() => {
    switch (type) {
      case 'int':
      case 'epoch-ms':
        return Number.isSafeInteger(value);
      case 'num':
        return typeof value === 'number' && Number.isFinite(value);
      case 'string':
        return typeof value === 'string';
      case 'bool':
        return typeof value === 'boolean';
      case 'time':
        return typeof value === 'string' && TIME.test(value);
      case 'int[]':
        return Array.isArray(value) && value.every((v) => Number.isSafeInteger(v));
      case 'string[]':
        return Array.isArray(value) && value.every((v) => typeof v === 'string');
      case 'object':
        return typeof value === 'object' && !Array.isArray(value);
    }
  })();
  return ok ? undefined : `is ${JSON.stringify(value)?.slice(0, 60)}, not ${type}`;
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** What one object lacks of a table: `path: problem`, and the optional segments it holds. */
export function keyPathProblems(item: unknown, paths: Readonly<Record<string, KeyType>>, skip: ReadonlySet<string> = new Set()): { problems: string[]; optionalSeen: Set<string> } {
  const problems: string[] = [];
  const optionalSeen = new Set<string>();
  for (const [path, type] of Object.entries(paths)) {
    if (skip.has(path)) continue;
    const segments = path.split('.');
    const walk = (value: unknown, index: number, where: string): void => {
      if (index === segments.length) {
        const problem = typeProblem(value, type);
        if (problem !== undefined) problems.push(`${where} ${problem}`);
        return;
      }
      const segment = segments[index] as string;
      const optional = segment.endsWith('?');
      const name = optional ? segment.slice(0, -1) : segment;
      const array = name.endsWith('[]');
      const key = array ? name.slice(0, -2) : name;
      const here = where === '' ? key : `${where}.${key}`;
      if (!isObject(value)) {
        problems.push(`${where} is ${JSON.stringify(value)?.slice(0, 60)}, not an object holding ${key}`);
        return;
      }
      if (!(key in value)) {
        if (!optional) problems.push(`${here} is absent`);
        return;
      }
      if (optional) optionalSeen.add(segments.slice(0, index + 1).join('.'));
      const child = value[key];
      if (!array) return walk(child, index + 1, here);
      if (!Array.isArray(child)) {
        problems.push(`${here} is not an array`);
        return;
      }
      child.forEach((element, n) => walk(element, index + 1, `${here}[${n}]`));
    };
    walk(item, 0, '');
  }
  return { problems: [...new Set(problems)], optionalSeen };
}
