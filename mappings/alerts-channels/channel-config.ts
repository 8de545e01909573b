/**
 * REST v2 alert channels (`alerts_channels`) and their NerdGraph form: a notification
 * destination (where to) plus a channel (what to send), routes-next.md §5.4. The v2 rules of
 * the channel mappings (mappings/alerts-channels.*, alerts-policy-channels.*): types, the
 * configuration a channel becomes, policy links through workflows, and their titles. (The
 * sandbox's legacy face keeps its own copy of these rules: sandbox/legacy/channel-rules.ts.)
 *
 * Choices where the reference is UNCONFIRMED (each is listed in the mappings' assumptions, no probe:
 * the route comparison of /v2/alerts_channels shows them for the channel types the account has):
 * - v2 `slack` is NerdGraph's `SLACK_LEGACY` (webhook-URL Slack); `SLACK` (app-based) lists as
 *   slack too. `user` is `MOBILE_PUSH`. `pagerduty` is `PAGERDUTY_SERVICE_INTEGRATION`
 *   (`PAGERDUTY_ACCOUNT_INTEGRATION` lists as pagerduty too).
 * - Property keys: destination `email` (recipients), `url` (slack URL, webhook base URL),
 *   `userId`; channel `includeJsonAttachment`, `channel` (slack), `payloadType`, `payload`,
 *   `headers` (webhook).
 * - Secrets (`service_key`, `auth_password`) go to NerdGraph only as its secure inputs
 *   (destination auth token / basic password), which NerdGraph never reads back.
 */
import { derivedV2Id, ID_PATTERN, V2Error } from '../../src/mapping-api.ts';
import { ALERT_CHANNEL_TITLES, missingParameter } from '../../facts/v2-titles.ts';
import { ALERT_CHANNEL_LINKS, ALERT_CHANNEL_TYPES } from '../../facts/v2-values.ts';
import { CHANNEL_RULE_DETAILS, CHANNEL_RULE_TITLES } from '../../facts/rule-titles.ts';

export type V2ChannelType = (typeof ALERT_CHANNEL_TYPES)[number];
export const V2_CHANNEL_TYPES: readonly V2ChannelType[] = ALERT_CHANNEL_TYPES;

/** NerdGraph channel types v2 can show, and the v2 type each shows as. Other types are not listed. */
export const V2_TYPE_OF_CHANNEL: Readonly<Record<string, V2ChannelType>> = {
  EMAIL: 'email',
  SLACK_LEGACY: 'slack',
  SLACK: 'slack',
  WEBHOOK: 'webhook',
  PAGERDUTY_SERVICE_INTEGRATION: 'pagerduty',
  PAGERDUTY_ACCOUNT_INTEGRATION: 'pagerduty',
  MOBILE_PUSH: 'user',
};

/** The v2 configuration keys of each type, in the order the answers show them. */
export const CONFIGURATION_KEYS: Readonly<Record<Exclude<V2ChannelType, 'opsgenie' | 'victorops'>, readonly string[]>> = {
  email: ['recipients', 'include_json_attachment'],
  slack: ['url', 'channel'],
  pagerduty: ['service_key'],
  webhook: ['base_url', 'auth_username', 'auth_password', 'payload_type', 'payload', 'headers'],
  user: ['user_id'],
};

export const ChannelTitles = {
  missing: missingParameter('channel'),
  notFound: ALERT_CHANNEL_TITLES.notFound,
  policyNotFound: ALERT_CHANNEL_TITLES.policyNotFound,
  invalid: CHANNEL_RULE_TITLES.invalid,
  noEquivalent: (type: string): string =>
    `Invalid channel: ${type} channels have no New Relic equivalent since the REST v2 end of life (NerdGraph has no ${type} destination); send these alerts through a webhook channel`,
  policyIdRequired: CHANNEL_RULE_TITLES.policyIdRequired,
  channelIdsRequired: CHANNEL_RULE_TITLES.channelIdsRequired,
  channelIdRequired: CHANNEL_RULE_TITLES.channelIdRequired,
  idInvalid: CHANNEL_RULE_TITLES.idInvalid,
} as const;

export interface PropertyInput {
  key: string;
  value: string;
}

export type DestinationAuthInput = { type: 'TOKEN'; token: { token: string } } | { type: 'BASIC'; basic: { user: string; password: string } };

/** What one v2 channel becomes in NerdGraph: a destination, then a channel on it. */
export interface ChannelPlan {
  name: string;
  type: Exclude<V2ChannelType, 'opsgenie' | 'victorops'>;
  destination: { name: string; type: string; properties: PropertyInput[]; auth?: DestinationAuthInput };
  channel: { name: string; type: string; product: 'IINT'; properties: PropertyInput[] };
}

const invalid = (detail: string): V2Error => new V2Error(422, ChannelTitles.invalid(detail), { kind: 'invalid_channel' });

type Json = string | number | boolean | null | Json[] | { [key: string]: Json };

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** An own key only: a body's keys never reach Object.prototype. */
const own = (holder: Record<string, unknown>, key: string): unknown => (Object.hasOwn(holder, key) ? holder[key] : undefined);

// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;
const MAX_VALUE = 10_000;

/** A configuration value as v2 kept it: text (numbers and flags as their text); headers and payload may be objects (kept as JSON text). */
function configText(configuration: Record<string, unknown>, key: string, allowObject = false): string | undefined {
  const value = own(configuration, key);
  if (value === undefined || value === null) return undefined;
  let text: string;
  if (typeof value === 'string') text = value;
  else if (typeof value === 'number' && Number.isFinite(value)) text = String(value);
  else if (typeof value === 'boolean') text = String(value);
  else if (allowObject && (isObject(value) || Array.isArray(value))) text = JSON.stringify(value as Json);
  else throw invalid(CHANNEL_RULE_DETAILS.notText(key));
  if (text.length > MAX_VALUE) throw invalid(CHANNEL_RULE_DETAILS.tooLong(key, MAX_VALUE));
  if (!allowObject && CONTROL.test(text)) throw invalid(CHANNEL_RULE_DETAILS.controlCharacters(key));
  return text;
}

function required(configuration: Record<string, unknown>, key: string): string {
  const text = configText(configuration, key)?.trim();
  if (text === undefined || text === '') throw invalid(CHANNEL_RULE_DETAILS.blank(key));
  return text;
}

function url(configuration: Record<string, unknown>, key: string): string {
  const text = required(configuration, key);
  let parsed: URL;
  try {
    parsed = new URL(text);
  } catch {
    throw invalid(CHANNEL_RULE_DETAILS.notUrl(key));
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') throw invalid(CHANNEL_RULE_DETAILS.notUrl(key));
  return text;
}

function flag(configuration: Record<string, unknown>, key: string): string {
  const text = configText(configuration, key)?.trim().toLowerCase();
  if (text === undefined || text === '') return 'false';
  if (['true', '1'].includes(text)) return 'true';
  if (['false', '0'].includes(text)) return 'false';
  throw invalid(CHANNEL_RULE_DETAILS.notBoolean(key));
}

const EMAIL = /^[^\s@,]+@[^\s@,]+$/;
const PAYLOAD_TYPES = ['application/json', 'application/x-www-form-urlencoded'];

const property = (key: string, value: string | undefined): PropertyInput[] => (value === undefined ? [] : [{ key, value }]);

/**
 * Validates a v2 channel (the body's `channel` object) and plans its NerdGraph destination and
 * channel. Throws v2's 422 (400 when the wrapper is missing) on bad input.
 */
export function planChannel(wrapper: unknown): ChannelPlan {
  if (!isObject(wrapper)) throw new V2Error(400, ChannelTitles.missing, { kind: 'invalid_channel' });
  const rawName = own(wrapper, 'name');
  const name = typeof rawName === 'string' ? rawName.trim() : typeof rawName === 'number' ? String(rawName) : '';
  if (name === '') throw invalid(CHANNEL_RULE_DETAILS.nameBlank);
  if (name.length > 255) throw invalid(CHANNEL_RULE_DETAILS.nameTooLong);
  if (CONTROL.test(name)) throw invalid(CHANNEL_RULE_DETAILS.nameControlCharacters);
  const rawType = own(wrapper, 'type');
  const type = typeof rawType === 'string' ? rawType.trim().toLowerCase() : '';
  if (!(V2_CHANNEL_TYPES as readonly string[]).includes(type)) throw invalid(CHANNEL_RULE_DETAILS.typeOneOf(V2_CHANNEL_TYPES));
  if (type === 'opsgenie' || type === 'victorops') throw new V2Error(422, ChannelTitles.noEquivalent(type), { kind: 'channel_type_unsupported' });
  const configuration = own(wrapper, 'configuration');
  if (!isObject(configuration)) throw invalid(CHANNEL_RULE_DETAILS.configurationRequired);
  const channel = (channelType: string, properties: PropertyInput[]) => ({ name, type: channelType, product: 'IINT' as const, properties });
  switch (type as ChannelPlan['type']) {
    case 'email': {
      const recipients = required(configuration, 'recipients')
        .split(',')
        .map((piece) => piece.trim())
        .filter((piece) => piece !== '');
      if (recipients.length === 0 || !recipients.every((address) => EMAIL.test(address))) throw invalid(CHANNEL_RULE_DETAILS.recipients);
      return {
        name,
        type: 'email',
        destination: { name, type: 'EMAIL', properties: [{ key: 'email', value: recipients.join(',') }] },
        channel: channel('EMAIL', [{ key: 'includeJsonAttachment', value: flag(configuration, 'include_json_attachment') }]),
      };
    }
    case 'slack':
      return {
        name,
        type: 'slack',
        destination: { name, type: 'SLACK_LEGACY', properties: [{ key: 'url', value: url(configuration, 'url') }] },
        channel: channel('SLACK_LEGACY', property('channel', configText(configuration, 'channel')?.trim() || undefined)),
      };
    case 'pagerduty':
      return {
        name,
        type: 'pagerduty',
        destination: { name, type: 'PAGERDUTY_SERVICE_INTEGRATION', properties: [], auth: { type: 'TOKEN', token: { token: required(configuration, 'service_key') } } },
        channel: channel('PAGERDUTY_SERVICE_INTEGRATION', []),
      };
    case 'webhook': {
      const baseUrl = url(configuration, 'base_url');
      const user = configText(configuration, 'auth_username')?.trim() || undefined;
      const password = configText(configuration, 'auth_password');
      if (password !== undefined && password !== '' && user === undefined) throw invalid(CHANNEL_RULE_DETAILS.authUsernameRequired);
      const payloadType = configText(configuration, 'payload_type')?.trim() || undefined;
      if (payloadType !== undefined && !PAYLOAD_TYPES.includes(payloadType)) throw invalid(CHANNEL_RULE_DETAILS.payloadTypeOneOf(PAYLOAD_TYPES));
      return {
        name,
        type: 'webhook',
        destination: {
          name,
          type: 'WEBHOOK',
          properties: [{ key: 'url', value: baseUrl }],
          ...(user !== undefined && { auth: { type: 'BASIC' as const, basic: { user, password: password ?? '' } } }),
        },
        channel: channel('WEBHOOK', [
          ...property('payloadType', payloadType),
          ...property('payload', configText(configuration, 'payload', true)),
          ...property('headers', configText(configuration, 'headers', true)),
        ]),
      };
    }
    case 'user': {
      const userId = required(configuration, 'user_id');
      if (!ID_PATTERN.test(userId)) throw invalid(CHANNEL_RULE_DETAILS.userId);
      return { name, type: 'user', destination: { name, type: 'MOBILE_PUSH', properties: [{ key: 'userId', value: userId }] }, channel: channel('MOBILE_PUSH', []) };
    }
  }
}

/** A channel as NerdGraph shows it, with its destination: what v2's `configuration` is rebuilt from. */
export interface ChannelView {
  channelType: string;
  channelProperties: readonly PropertyInput[];
  destinationProperties: readonly PropertyInput[];
  /** The destination's basic-auth user, when it has one. */
  authUser: string | null;
  /** The secrets themselves: only the sandbox's legacy face knows them (NerdGraph never reads them back). */
  secrets?: { token?: string; password?: string };
}

const valueOf = (properties: readonly PropertyInput[], key: string): string | null => properties.find((p) => p.key === key)?.value ?? null;

/**
 * v2's `configuration` for a channel: every key of its type present, text or null. Secrets are
 * null unless `view.secrets` holds them (the gateway never has them).
 */
export function v2Configuration(view: ChannelView): Record<string, string | null> {
  const type = V2_TYPE_OF_CHANNEL[view.channelType];
  const channel = (key: string): string | null => valueOf(view.channelProperties, key);
  const destination = (key: string): string | null => valueOf(view.destinationProperties, key);
  switch (type) {
    case 'email':
      return { recipients: destination('email'), include_json_attachment: channel('includeJsonAttachment') ?? 'false' };
    case 'slack':
      return { url: destination('url'), channel: channel('channel') };
    case 'pagerduty':
      return { service_key: view.secrets?.token ?? null };
    case 'webhook':
      return {
        base_url: destination('url'),
        auth_username: view.authUser,
        auth_password: view.authUser === null ? null : (view.secrets?.password ?? null),
        payload_type: channel('payloadType'),
        payload: channel('payload'),
        headers: channel('headers'),
      };
    case 'user':
      return { user_id: destination('userId') };
    default:
      return {};
  }
}

/** The workflow filter predicate that binds a policy (UNCONFIRMED attribute, routes-next.md §5.5; no probe: the route comparison of /v2/alerts_channels shows the links). */
export const POLICY_PREDICATE = { attribute: 'labels.policyIds', operator: 'EXACTLY_MATCHES' } as const;

/** The policy ids a workflow's filter binds: every value of its `labels.policyIds EXACTLY_MATCHES` predicates that is an id. */
export function policyIdsOfPredicates(predicates: ReadonlyArray<{ attribute: string; operator: string; values: readonly string[] }>): number[] {
  const ids: number[] = [];
  for (const predicate of predicates) {
    if (predicate.attribute !== POLICY_PREDICATE.attribute || predicate.operator !== POLICY_PREDICATE.operator) continue;
    for (const value of predicate.values) if (ID_PATTERN.test(value.trim())) ids.push(Number(value.trim()));
  }
  return ids;
}

/** The name the gateway gives a workflow it creates for a policy. */
export const policyWorkflowName = (policyId: number): string => `REST v2 policy ${policyId} channels`;

/** Whether a workflow's filter is a policy's own (exactly one predicate, binding exactly that policy): the only kind the translation edits. */
export function isOwnPolicyFilter(predicates: ReadonlyArray<{ attribute: string; operator: string; values: readonly string[] }>, policyId: number): boolean {
  if (predicates.length !== 1) return false;
  const [only] = predicates as [{ attribute: string; operator: string; values: readonly string[] }];
  return only.attribute === POLICY_PREDICATE.attribute && only.operator === POLICY_PREDICATE.operator && only.values.length === 1 && only.values[0]?.trim() === String(policyId);
}

/** v2's top-level links beside a channel answer (facts/v2-values.ts). */
export const CHANNEL_TOP_LINKS = ALERT_CHANNEL_LINKS;

/**
 * The v2 integer id of an alert channel, derived from its NerdGraph notification channel id
 * (a UUID): positive, below 2^53, the same in every listing. v2's own channel ids are not
 * recoverable (a documented gap of every channel route).
 */
export function channelV2Id(channelId: string): number {
  return derivedV2Id(channelId, 'channel-');
}

/** More policy ids than this in one create's policy_ids is refused (each costs a workflow write). */
export const MAX_POLICY_IDS = 10;
/** More channel ids than this in one policy_channels PUT is refused. */
export const MAX_CHANNEL_IDS = 100;

export const PolicyChannelTitles = {
  sharedWorkflow: 'The channel reaches this policy through a workflow shared with other policies; edit that workflow in New Relic (Alerts > Workflows)',
  pushNotRoutable: 'Invalid parameter channel_ids: user (mobile push) channels cannot be linked to a policy since the REST v2 end of life: NerdGraph workflows cannot route to them',
  tooManyPolicies: `Invalid parameter policy_ids: at most ${MAX_POLICY_IDS} policies per channel create`,
  tooManyChannels: `Invalid parameter channel_ids: at most ${MAX_CHANNEL_IDS} channels per request`,
  lastChannelOfForeignWorkflow: (workflow: string): string =>
    `The channel is the last one of the workflow "${workflow.slice(0, 120)}", which was not created through this API and would be left with no channel; nothing was changed: edit or delete that workflow in New Relic (Alerts > Workflows)`,
} as const;
