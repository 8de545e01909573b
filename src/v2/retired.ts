import type { RetiredFamilyName } from '../../facts/v2-routes.ts';
import type { V2Status } from './errors.ts';

/**
 * Retired products and routes NerdGraph cannot serve (routes-next.md §8): each family answers
 * one v2 error, on purpose, with a title that says what is gone, since when (where known) and
 * what to use instead. Both faces read this table: the gateway's unsupported mappings
 * (mappings/retired/retired.ts) and the sandbox's legacy face (sandbox/legacy/retired.ts),
 * which answers as the live legacy API answers today (where known). Like V2Titles, it is v2
 * wire shared by the two faces.
 */
export interface RetiredFamily {
  status: V2Status;
  title: string;
  reason: string;
  replacement: string;
  assumptions: readonly string[];
}

const STATUS_410_KNOWN = '410 Gone, as the live legacy REST API answers (routes-next.md §8); its exact error title is UNCONFIRMED, so the title is the gateway\'s own and names the replacement.';
const STATUS_410_CHOSEN = (what: string): string =>
  `What the live legacy REST API answers for ${what} today is UNCONFIRMED (routes-next.md §10.6): the gateway answers 410 Gone, the status for a retired product, with a title that names the replacement.`;

export const RETIRED = {
  plugins: {
    status: 410,
    title:
      'Plugins were retired on June 16, 2021 (access limited since December 2, 2020): use New Relic on-host integrations or quickstarts instead, and query their data with NRQL through NerdGraph (actor.account.nrql)',
    reason: 'New Relic retired the Plugins product on June 16, 2021; the live REST API answers 410 and NerdGraph has no plugin types.',
    replacement: 'On-host integrations (e.g. nri-redis, nri-mysql) or quickstarts; their metrics through NRQL in NerdGraph `actor { account(id) { nrql(query) } }`.',
    assumptions: [STATUS_410_KNOWN],
  },
  components: {
    status: 410,
    title:
      'Plugin components were retired with Plugins on June 16, 2021: use New Relic on-host integrations or quickstarts instead, and query their data with NRQL through NerdGraph (actor.account.nrql)',
    reason: 'Components are the instances of Plugins, retired on June 16, 2021; the live REST API answers 410 and NerdGraph has no plugin or component types.',
    replacement: 'On-host integrations or quickstarts; their metrics through NRQL in NerdGraph `actor { account(id) { nrql(query) } }` (component metrics have no timeslice equivalent).',
    assumptions: [STATUS_410_KNOWN],
  },
  servers: {
    status: 410,
    title:
      "The Servers product was retired on May 15, 2018: use New Relic Infrastructure hosts instead (NerdGraph entitySearch with domain = 'INFRA' AND type = 'HOST' and their hostSummary; metrics with NRQL FROM SystemSample); server ids do not carry over",
    reason: 'New Relic retired the Servers product (the legacy server monitor) on May 15, 2018; NerdGraph has no server entities.',
    replacement: "Infrastructure hosts: NerdGraph `entitySearch(query: \"domain = 'INFRA' AND type = 'HOST'\")` with `InfrastructureHostEntityOutline.hostSummary`, metrics with NRQL `FROM SystemSample`.",
    assumptions: [STATUS_410_CHOSEN('/v2/servers')],
  },
  usages: {
    status: 410,
    title:
      'Usage data over REST v2 (usages) is not served by this gateway: query NrConsumption (hourly) or NrMTDConsumption (month to date) with NRQL through NerdGraph (actor.account.nrql); units differ from v2\'s host hours',
    reason: 'The per-product usage counts of the original pricing model have no NerdGraph field; consumption is now reported as NrConsumption and NrMTDConsumption events.',
    replacement: 'NRQL `FROM NrConsumption` (hourly) or `FROM NrMTDConsumption` (month to date) through NerdGraph `actor { account(id) { nrql(query) } }`.',
    assumptions: [STATUS_410_CHOSEN('/v2/usages/{product}')],
  },
  alertPolicies: {
    status: 410,
    title:
      'Legacy alert policies (alert_policies) belong to legacy alerting, which New Relic announced retired together with the Servers product; this gateway does not serve them: use alerts_policies instead, or NerdGraph alertsPolicyCreate and alertsPolicyUpdate',
    reason: 'Legacy alerting (alert_policies with their server/application conditions) was retired; its policies have no NerdGraph equivalent.',
    replacement: 'The alerts_policies routes (kept alive and passed through), or NerdGraph `alertsPolicyCreate` / `alertsPolicyUpdate` / `actor.account.alerts.policiesSearch`.',
    assumptions: [
      STATUS_410_CHOSEN('legacy /v2/alert_policies'),
      'That legacy alerting retired together with Servers comes from a 2017 announcement cited by several clients (routes-next.md §8); the date in the title is that of Servers.',
    ],
  },
  notificationChannels: {
    status: 410,
    title:
      'Legacy notification channels (notification_channels) belong to legacy alerting, which New Relic announced retired together with the Servers product; this gateway does not serve them: use NerdGraph notification destinations and channels (aiNotificationsCreateDestination, aiNotificationsCreateChannel) with workflows (aiWorkflowsCreateWorkflow)',
    reason: 'Legacy alerting\'s notification channels were retired with it; alert notifications are now destinations, channels and workflows.',
    replacement: 'NerdGraph `aiNotificationsCreateDestination`, `aiNotificationsCreateChannel` and `aiWorkflowsCreateWorkflow`; to read, `actor.account.aiNotifications.channels` and `aiWorkflows.workflows`.',
    assumptions: [STATUS_410_CHOSEN('legacy /v2/notification_channels')],
  },
  dashboards: {
    status: 410,
    title:
      "Insights dashboards over REST v2 are gone (the live API answers 410 Gone): use NerdGraph dashboards instead: entitySearch with type = 'DASHBOARD' to list them, dashboardCreate, dashboardUpdate and dashboardDelete to change them",
    reason: 'New Relic turned the REST dashboards endpoints off (410 Gone, "This endpoint is deprecated: Please see documentation on migrating to NerdGraph"); NerdGraph dashboards have a different widget model, so nothing can be translated faithfully.',
    replacement: "NerdGraph `entitySearch(query: \"type = 'DASHBOARD'\")` / `actor.entity(guid) { ... on DashboardEntity }` to read, `dashboardCreate`, `dashboardUpdate`, `dashboardDelete` to write.",
    assumptions: [STATUS_410_KNOWN],
  },
  pluginsConditions: {
    status: 410,
    title:
      'Plugin alert conditions (alerts_plugins_conditions) went with Plugins, retired on June 16, 2021: alert on the integration\'s data with NRQL conditions instead (alerts_nrql_conditions, or NerdGraph alertsNrqlConditionStaticCreate)',
    reason: 'Conditions on plugin metrics cannot exist without Plugins (retired June 16, 2021); NerdGraph has only NRQL conditions.',
    replacement: 'NRQL alert conditions: the alerts_nrql_conditions routes (passed through) or NerdGraph `alertsNrqlConditionStaticCreate`.',
    assumptions: [STATUS_410_CHOSEN('/v2/alerts_plugins_conditions')],
  },
  resetPassword: {
    status: 422,
    title:
      "Passwords cannot be reset through the gateway: NerdGraph has no password-reset mutation. The user resets it from the New Relic login page ('Forgot your password?'); admins manage users in the User management UI or with NerdGraph userManagementUpdateUser",
    reason: 'NerdGraph user management has create, update and delete mutations for users, but none that resets a password.',
    replacement: "The login page's password reset; NerdGraph `userManagementUpdateUser` / `userManagementDeleteUser` for other user changes.",
    assumptions: [
      'What the live legacy REST API answers is UNCONFIRMED (routes-next.md §10.6); the route is not retired but cannot be translated, so the gateway answers 422 (the route exists, it cannot work here), as it does for deployment deletes, and changes nothing.',
    ],
  },
} as const satisfies Record<RetiredFamilyName, RetiredFamily>;

export type { RetiredFamilyName };

export { RETIRED_ROUTES, type RetiredMethod } from '../../facts/v2-routes.ts';
