/**
 * Error titles where REST v2's own words are UNCONFIRMED: the project's wording of its written
 * rules, which the gateway and the sandbox's legacy face both answer, so that the differential
 * tests compare the rest of each answer. Data only: no logic beyond filling in a name, no
 * imports. A title New Relic documents is in v2-titles.ts instead; a refusal only one face has
 * (a type or link with no place in a NerdGraph world) is worded by that face alone.
 */

/** The metric-data rules (docs/metric-data-rules.md §1-§3; v2's texts: rest-v2.md §7.4, unconfirmed). */
export const METRIC_RULE_TITLES = {
  timeRangeTooShort: 'Time range must be at least 60 seconds',
  tooManyTimeslices: 'Time range too long for the period: at most 366 timeslices per metric, use a larger period',
  namesRequired: 'Invalid parameter names[]: at least one metric name is required',
  tooManyNames: 'Invalid parameter names[]: at most 100 metric names per request',
  periodNotMinutes: 'Invalid parameter period: expected a whole number of minutes, in seconds',
  periodTooSmall: (minimumSeconds: number): string => `Invalid parameter period: the smallest period for this time range is ${minimumSeconds} seconds`,
  badTime: (parameter: 'from' | 'to'): string => `Invalid parameter ${parameter}: expected an ISO 8601 time such as 2026-01-01T10:00:00+00:00`,
  timeBeforeEpoch: (parameter: 'from' | 'to'): string => `Invalid parameter ${parameter}: times before 1970-01-01T00:00:00Z are not accepted`,
} as const;

/** alerts_incidents, alerts_violations and alerts_events (routes-next.md §5.1-§5.3). */
export const ALERT_ISSUE_RULE_TITLES = {
  incidentNotFound: 'No Incident found with the given ID',
  alreadyClosed: 'Incident already closed',
  badTime: (key: string): string => `Invalid parameter ${key}: expected a date-time such as 2026-01-01T00:00:00Z`,
  timeOrder: 'Invalid parameters: the end of the time range must not be before its start',
  badFilter: (key: string, allowed: readonly string[]): string => `Invalid parameter ${key}: expected one of ${allowed.join(', ')}`,
  badId: (key: string): string => `Invalid parameter ${key}: expected a positive integer id`,
} as const;

/** alerts_channels and alerts_policy_channels: what a `{"channel": ...}` body or a link query may hold (routes-next.md §5.4). */
export const CHANNEL_RULE_TITLES = {
  invalid: (detail: string): string => `Invalid channel: ${detail}`,
  policyIdRequired: 'Invalid parameter policy_id: a policy id is required',
  channelIdsRequired: 'Invalid parameter channel_ids: at least one channel id is required',
  channelIdRequired: 'Invalid parameter channel_id: a channel id is required',
  idInvalid: (key: string): string => `Invalid parameter ${key}: expected a positive integer id`,
} as const;

/** The details `CHANNEL_RULE_TITLES.invalid` names. */
export const CHANNEL_RULE_DETAILS = {
  notText: (key: string): string => `configuration.${key} must be text`,
  tooLong: (key: string, longest: number): string => `configuration.${key} is too long (maximum is ${longest} characters)`,
  controlCharacters: (key: string): string => `configuration.${key} must not contain control characters`,
  blank: (key: string): string => `configuration.${key} can't be blank`,
  notUrl: (key: string): string => `configuration.${key} must be an http or https URL`,
  notBoolean: (key: string): string => `configuration.${key} must be true or false`,
  nameBlank: "name can't be blank",
  nameTooLong: 'name is too long (maximum is 255 characters)',
  nameControlCharacters: 'name must not contain control characters',
  typeOneOf: (types: readonly string[]): string => `type must be one of ${types.join(', ')}`,
  configurationRequired: 'configuration is required',
  recipients: 'configuration.recipients must be a comma-separated list of email addresses',
  authUsernameRequired: 'configuration.auth_username is required with auth_password',
  payloadTypeOneOf: (types: readonly string[]): string => `configuration.payload_type must be one of ${types.join(', ')}`,
  userId: 'configuration.user_id must be a user id',
} as const;

/** alerts_policies and the alert condition families (routes-next.md §0, §5; rest-v2-shapes.md §9). */
export const ALERT_RULE_TITLES = {
  policyNotFound: 'No Policy found with the given ID',
  conditionNotFound: 'No Condition found with the given ID',
  policyIdRequired: 'Invalid parameter policy_id: a policy id is required',
  idInvalid: (key: string): string => `Invalid parameter ${key}: expected a positive integer id`,
  /** A body's first problem: `Invalid policy: name can't be blank`. */
  invalid: (wrapper: string, detail: string): string => `Invalid ${wrapper}: ${detail}`,
} as const;

/** labels (rest-v2-shapes.md §10; a label is kept as a tag on its applications). */
export const LABEL_RULE_TITLES = {
  blank: (field: 'category' | 'name'): string => `Invalid label: ${field} can't be blank`,
  notText: (field: string): string => `Invalid label: ${field} must be text`,
  categoryColon: "Invalid label: category must not contain ':'",
  tooLong: (field: string, max: number): string => `Invalid label: ${field} is longer than ${max} characters`,
  reserved: (category: string): string => `Invalid label: category '${category}' is a tag New Relic sets itself`,
  badApplications: 'Invalid label: links.applications must be a list of application ids',
  servers: 'Invalid label: servers were retired on May 15, 2018 and have no entity to label; give applications only',
  unknownApplication: (id: number): string => `Invalid label: no application with id ${id} in this account`,
  notFound: 'No Label found with the given key',
} as const;

/** Deployments (the v2 route and the v0 form post; rest-v2.md §3.7) and created applications. */
export const DEPLOYMENT_RULE_TITLES = {
  tooLong: (field: string, max: number): string => `Invalid deployment: ${field} is longer than ${max} characters`,
  fourByte: (field: string): string => `Invalid deployment: ${field} contains a 4-byte UTF-8 character`,
  notText: (field: string): string => `Invalid deployment: ${field} must be text`,
  badTimestamp: 'Invalid deployment: timestamp must be an ISO 8601 time',
  future: 'Invalid deployment: timestamp must not be in the future',
  notLatest: 'Invalid deployment: timestamp must be later than the most recent deployment',
  appFieldRequired: 'Validation error: an application_id or app_name is required',
  appNameNotFound: 'No Application found with the given name',
} as const;

/** A created application's name (the mobile and browser application creates). */
export const CREATED_APP_RULE_TITLES = {
  nameBlank: "Validation error: name can't be blank",
  nameTooLong: 'Validation error: name is too long (maximum is 255 characters)',
} as const;

/** Query parameters, headers, methods and bodies of any route (docs/compatibility.md, "Parameters"). */
export const REQUEST_RULE_TITLES = {
  idList: (key: string): string => `Invalid parameter ${key}: expected a comma-separated list of positive integer ids`,
  boolean: (key: string): string => `Invalid parameter ${key}: expected true or false`,
  accountHeader: 'Invalid X-Account-Id header: expected a positive integer account id',
  languageFilter: 'Invalid parameter filter[language]: expected an agent language such as java or python',
  methodNotAllowed: (method: string): string => `Method ${method} is not allowed here`,
  bodyTooLarge: (maxBytes: number): string => `Request body larger than ${maxBytes} bytes`,
  bodyUnreadable: 'The request body could not be read',
} as const;
