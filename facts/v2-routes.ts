/**
 * REST v2 routes as facts: data only, no logic, and no imports. Equal by definition on both
 * sides of the project, so both the gateway (src/v2/retired.ts, mappings/retired/retired.ts)
 * and the sandbox's legacy face (sandbox/legacy/retired.ts) read it; each matches paths and
 * words its answers on its own. sandbox/test/boundary.test.ts lets the sandbox import this
 * folder only while it imports nothing.
 *
 * The retired routes: products New Relic retired and routes NerdGraph cannot serve, by family
 * (routes-next.md §8; the paths as New Relic's v2 swagger lists them, v2-definitions-2016.json).
 */
export type RetiredFamilyName =
  | 'plugins'
  | 'components'
  | 'servers'
  | 'usages'
  | 'alertPolicies'
  | 'notificationChannels'
  | 'dashboards'
  | 'pluginsConditions'
  | 'resetPassword';

export type RetiredMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

/** Every retired (method, route) with its family: the mapping modules and the legacy face both read this list. */
export const RETIRED_ROUTES: ReadonlyArray<{ family: RetiredFamilyName; id: string; method: RetiredMethod; route: string; summary: string }> = [
  { family: 'plugins', id: 'plugins.list', method: 'GET', route: '/v2/plugins.{format}', summary: 'List plugins' },
  { family: 'plugins', id: 'plugins.show', method: 'GET', route: '/v2/plugins/{id}.{format}', summary: 'Show a plugin' },
  { family: 'components', id: 'components.list', method: 'GET', route: '/v2/components.{format}', summary: 'List plugin components' },
  { family: 'components', id: 'components.show', method: 'GET', route: '/v2/components/{id}.{format}', summary: 'Show a plugin component' },
  { family: 'components', id: 'components.metric-names', method: 'GET', route: '/v2/components/{id}/metrics.{format}', summary: 'Metric names of a component' },
  { family: 'components', id: 'components.metric-data', method: 'GET', route: '/v2/components/{id}/metrics/data.{format}', summary: 'Metric data of a component' },
  { family: 'servers', id: 'servers.list', method: 'GET', route: '/v2/servers.{format}', summary: 'List servers' },
  { family: 'servers', id: 'servers.show', method: 'GET', route: '/v2/servers/{id}.{format}', summary: 'Show a server' },
  { family: 'servers', id: 'servers.update', method: 'PUT', route: '/v2/servers/{id}.{format}', summary: 'Rename a server' },
  { family: 'servers', id: 'servers.delete', method: 'DELETE', route: '/v2/servers/{id}.{format}', summary: 'Delete a server' },
  { family: 'servers', id: 'servers.metric-names', method: 'GET', route: '/v2/servers/{id}/metrics.{format}', summary: 'Metric names of a server' },
  { family: 'servers', id: 'servers.metric-data', method: 'GET', route: '/v2/servers/{id}/metrics/data.{format}', summary: 'Metric data of a server' },
  { family: 'usages', id: 'usages.show', method: 'GET', route: '/v2/usages/{product}.{format}', summary: 'Usage of a product' },
  { family: 'alertPolicies', id: 'alert-policies.list', method: 'GET', route: '/v2/alert_policies.{format}', summary: 'List legacy alert policies' },
  { family: 'alertPolicies', id: 'alert-policies.show', method: 'GET', route: '/v2/alert_policies/{id}.{format}', summary: 'Show a legacy alert policy' },
  { family: 'alertPolicies', id: 'alert-policies.update', method: 'PUT', route: '/v2/alert_policies/{id}.{format}', summary: 'Update a legacy alert policy' },
  { family: 'notificationChannels', id: 'notification-channels.list', method: 'GET', route: '/v2/notification_channels.{format}', summary: 'List legacy notification channels' },
  { family: 'notificationChannels', id: 'notification-channels.show', method: 'GET', route: '/v2/notification_channels/{id}.{format}', summary: 'Show a legacy notification channel' },
  { family: 'dashboards', id: 'dashboards.list', method: 'GET', route: '/v2/dashboards.{format}', summary: 'List Insights dashboards' },
  { family: 'dashboards', id: 'dashboards.create', method: 'POST', route: '/v2/dashboards.{format}', summary: 'Create an Insights dashboard' },
  { family: 'dashboards', id: 'dashboards.show', method: 'GET', route: '/v2/dashboards/{id}.{format}', summary: 'Show an Insights dashboard' },
  { family: 'dashboards', id: 'dashboards.update', method: 'PUT', route: '/v2/dashboards/{id}.{format}', summary: 'Update an Insights dashboard' },
  { family: 'dashboards', id: 'dashboards.delete', method: 'DELETE', route: '/v2/dashboards/{id}.{format}', summary: 'Delete an Insights dashboard' },
  { family: 'pluginsConditions', id: 'alerts-plugins-conditions.list', method: 'GET', route: '/v2/alerts_plugins_conditions.{format}', summary: 'List the plugin alert conditions of a policy' },
  { family: 'pluginsConditions', id: 'alerts-plugins-conditions.create', method: 'POST', route: '/v2/alerts_plugins_conditions/policies/{policy_id}.{format}', summary: 'Create a plugin alert condition' },
  { family: 'pluginsConditions', id: 'alerts-plugins-conditions.update', method: 'PUT', route: '/v2/alerts_plugins_conditions/{id}.{format}', summary: 'Update a plugin alert condition' },
  { family: 'pluginsConditions', id: 'alerts-plugins-conditions.delete', method: 'DELETE', route: '/v2/alerts_plugins_conditions/{id}.{format}', summary: 'Delete a plugin alert condition' },
  { family: 'resetPassword', id: 'users.reset-password', method: 'POST', route: '/v2/users/{id}/reset_password.{format}', summary: 'Reset a user\'s password' },
];

