/**
 * REST v2's fixed values as facts: data only, no logic, and no imports. The top-level link
 * templates v2 writes beside its data, and the value lists v2 documents for a field or filter,
 * each with where it comes from; both the gateway and the sandbox's legacy face read them.
 * What each face makes of a value (matching, defaults, the NerdGraph field it lands on) stays
 * its own.
 */

// ---------------------------------------------------------------------------------------------
// Top-level `links` templates, verbatim as captured from real v2 answers (rest-v2-shapes.md §0,
// rest-v2.md §3.3-§3.7), New Relic's own oddities included.

/** Beside application data (rest-v2.md §3.3; the singular `/v2/application/` is New Relic's own). */
export const APPLICATION_LINKS = {
  'application.servers': '/v2/servers?ids={server_ids}',
  'application.server': '/v2/servers/{server_id}',
  'application.application_hosts': '/v2/application/{application_id}/hosts?ids={host_ids}',
  'application.application_host': '/v2/application/{application_id}/hosts/{host_id}',
  'application.application_instances': '/v2/application/{application_id}/instances?ids={instance_ids}',
  'application.application_instance': '/v2/application/{application_id}/instances/{instance_id}',
  'application.alert_policy': '/v2/alert_policies/{alert_policy_id}',
} as const;

/** Beside application hosts (rest-v2.md §3.4). */
export const APPLICATION_HOST_LINKS = {
  'application_host.application': '/v2/applications/{application_id}',
  'application_host.application_instances': '/v2/application/{application_id}/instances?ids={instance_ids}',
  'application_host.application_instance': '/v2/application/{application_id}/instances/{instance_id}',
  'application_host.server': '/v2/servers/{server_id}',
} as const;

/**
 * Beside application instances (rest-v2.md §3.4; `/hosts/{instance_id}` sic). The reference
 * gives the three keys but only the application_host template; the application and server
 * templates are application_host's own (UNCONFIRMED for instances).
 */
export const APPLICATION_INSTANCE_LINKS = {
  'application_instance.application': '/v2/applications/{application_id}',
  'application_instance.application_host': '/v2/application/{application_id}/hosts/{instance_id}',
  'application_instance.server': '/v2/servers/{server_id}',
} as const;

/** Beside key transactions (rest-v2.md §3.5; rest-v2-shapes.md §0). */
export const KEY_TRANSACTION_LINKS = { 'key_transaction.application': '/v2/applications/{application_id}' } as const;

/** Beside a deployments listing (rest-v2.md §3.7). */
export const DEPLOYMENT_LINKS = { 'deployment.agent': '/v2/applications/{application_id}' } as const;

/** Beside a created or deleted alert channel (rest-v2-shapes.md §0 and §9, from newrelic-client-go's fixtures). */
export const ALERT_CHANNEL_LINKS = { 'channel.policy_ids': '/v2/policies/{policy_id}' } as const;

// ---------------------------------------------------------------------------------------------
// Value lists

/** An alert channel's `type` (rest-v2-shapes.md §9: newrelic-client-go's enum; routes-next.md §5.4). */
export const ALERT_CHANNEL_TYPES = ['email', 'opsgenie', 'pagerduty', 'slack', 'user', 'victorops', 'webhook'] as const;

/**
 * An alert policy's `incident_preference` (rest-v2-shapes.md §9; docs-website
 * rest-api-calls-alerts.mdx, #policies-create: "This must be one of the following").
 */
export const INCIDENT_PREFERENCES = ['PER_POLICY', 'PER_CONDITION', 'PER_CONDITION_AND_TARGET'] as const;

/**
 * alerts_events' filter values (SW: GET /v2/alerts_events.{format}, its description's options;
 * routes-next.md §5.3). INCIDENT_OPEN is not in SW's list: newrelic-client-go's fixture has it.
 */
export const ALERT_EVENT_PRODUCTS = ['APM', 'BROWSER', 'MOBILE', 'SERVERS', 'PLUGINS', 'SYNTHETICS', 'ALERTS'] as const;
export const ALERT_EVENT_ENTITY_TYPES = ['Application', 'Server', 'KeyTransaction', 'Plugin', 'MobileApplication', 'BrowserApplication', 'Monitor'] as const;
export const ALERT_EVENT_TYPES = ['NOTIFICATION', 'DEPLOYMENT', 'VIOLATION_OPEN', 'VIOLATION_CLOSE', 'VIOLATION', 'INSTRUMENTATION', 'INCIDENT_OPEN'] as const;
