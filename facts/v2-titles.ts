/**
 * REST v2's error titles as facts: data only, no logic, and no imports. Only titles whose
 * wording New Relic gave are here, each with where it comes from; both the gateway and the
 * sandbox's legacy face read them. Titles the project worded itself where v2's are unknown
 * (UNCONFIRMED) are in rule-titles.ts.
 *
 * Sources: SW = New Relic's swagger of the v2 routes (../shared/reference/v2-definitions-2016.json,
 * each route's response descriptions); rest-v2.md §3.10 (the 2018 swagger's reasons);
 * routes-next.md §0 (the 404 titles of the routes beyond applications, from SW).
 */

/** Titles of any route: authentication and the server's own failure (rest-v2.md §3.10; SW on every route). */
export const WIRE_TITLES = {
  apiKeyRequired: 'Invalid request, API key required',
  invalidApiKey: 'Invalid API key',
  /** SW wraps "New Relic support" in a link to support.newrelic.com; the title is its text. */
  serverError: 'A server error occurred, please contact New Relic support',
} as const;

/**
 * A body without its wrapper object (`{"deployment": {...}}` without `deployment`): v2's words
 * for the deployment wrapper (rest-v2.md §3.7, from deployphp/recipes#175). That v2 answered the
 * other wrappers (policy, channel, label, the conditions) in the same words is UNCONFIRMED.
 */
export const missingParameter = (wrapper: string): string => `missing parameter: ${wrapper}`;

/** applications (SW: GET, PUT, DELETE /v2/applications/{id}; rest-v2.md §3.8, §3.10). */
export const APPLICATION_TITLES = {
  notFound: 'No Application found with the given ID',
  /** 409 of DELETE. */
  stillReporting: 'Cannot delete an application that is still reporting data.',
  /** 422 of PUT. */
  updateInvalid: 'Validation error occurred when updating the application',
} as const;

/** Application hosts and instances (SW: GET /v2/applications/{application_id}/hosts/{id} and /instances/{id}; routes-next.md §0). */
export const APPLICATION_HOST_TITLES = {
  hostNotFound: 'No application host found with the given ID',
  instanceNotFound: 'No application instance found with the given ID',
} as const;

/** mobile_applications (SW: GET /v2/mobile_applications/{id}; routes-next.md §0). */
export const MOBILE_APPLICATION_TITLES = {
  notFound: 'No Mobile Application found with the given ID',
} as const;

/** key_transactions (SW: GET /v2/key_transactions/{id}; routes-next.md §0). */
export const KEY_TRANSACTION_TITLES = {
  notFound: 'No key transaction found with the given ID',
} as const;

/** users (SW: GET /v2/users/{id}; routes-next.md §0). */
export const USER_TITLES = {
  notFound: 'No user found with the given ID',
} as const;

/** Deployments (SW: 400 of POST /v2/applications/{application_id}/deployments). */
export const DEPLOYMENT_TITLES = {
  missingWrapper: missingParameter('deployment'),
  revisionRequired: 'Revision parameter required',
} as const;

/**
 * alerts_channels and alerts_policy_channels. SW gives these words to the legacy routes those
 * replaced (404 of GET /v2/notification_channels/{id}, of GET and PUT /v2/alert_policies/{id};
 * routes-next.md §0); that the alerts_* routes answered the same is UNCONFIRMED.
 */
export const ALERT_CHANNEL_TITLES = {
  notFound: 'No notification channel found with the given ID',
  policyNotFound: 'No alert policy found with the given ID',
} as const;
