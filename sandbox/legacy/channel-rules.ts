/**
 * The legacy face's v2 alert channels: what a `{"channel": {name, type, configuration}}` body
 * may hold and what it becomes in the sandbox's NerdGraph-shaped store (a destination and a
 * channel on it), and how a stored channel reads back as v2's `configuration`.
 *
 * Sources: routes-next.md §5.4 (New Relic's swagger: the configuration keys of each type; the
 * NerdGraph channel and destination types each v2 type lands on; opsgenie and victorops have no
 * NerdGraph type), rest-v2-shapes.md §9 (`configuration` is an object of strings; `headers` and
 * `payload` may arrive as objects; create answers the plural `channels`).
 *
 * The sandbox's choices where the reference is silent (UNCONFIRMED): v2 `slack` is stored as
 * `SLACK_LEGACY` (the webhook-URL Slack of v2's `url` key) and app-based `SLACK` lists as slack
 * too; `user` is `MOBILE_PUSH`; `pagerduty` is `PAGERDUTY_SERVICE_INTEGRATION` with the service
 * key as the destination's token; webhook basic auth is the destination's BASIC auth; the
 * property keys are `email`, `url`, `userId` (destinations) and `includeJsonAttachment`,
 * `channel`, `payloadType`, `payload`, `headers` (channels). Error titles are the sandbox's own
 * (v2's are UNCONFIRMED): where a type or a link has no place in the store, the sandbox says so
 * in its words, and the differential compares statuses only there.
 */
import type { PropertyInput } from '../policy-workflows.ts';
import { V2Error } from './wire.ts';
import { ALERT_CHANNEL_TITLES, missingParameter } from '../../facts/v2-titles.ts';
import { ALERT_CHANNEL_TYPES } from '../../facts/v2-values.ts';
import { CHANNEL_RULE_DETAILS, CHANNEL_RULE_TITLES } from '../../facts/rule-titles.ts';

export type V2ChannelType = (typeof ALERT_CHANNEL_TYPES)[number];
const V2_TYPES: readonly V2ChannelType[] = ALERT_CHANNEL_TYPES;

/** The NerdGraph channel types v2 can show, as the v2 type each shows as. */
export const V2_TYPE_OF: Readonly<Record<string, V2ChannelType>> = {
  EMAIL: 'email',
  SLACK_LEGACY: 'slack',
  SLACK: 'slack',
  WEBHOOK: 'webhook',
  PAGERDUTY_SERVICE_INTEGRATION: 'pagerduty',
  PAGERDUTY_ACCOUNT_INTEGRATION: 'pagerduty',
  MOBILE_PUSH: 'user',
};

export const ChannelTitles = {
  missing: missingParameter('channel'),
  notFound: ALERT_CHANNEL_TITLES.notFound,
  policyNotFound: ALERT_CHANNEL_TITLES.policyNotFound,
  invalid: CHANNEL_RULE_TITLES.invalid,
  /** The store is NerdGraph's: a type it has no destination for cannot be kept (what New Relic's own legacy API answers then is UNCONFIRMED). */
  noEquivalent: (type: string): string => `Invalid channel: type ${type} cannot be stored (there is no ${type} destination)`,
  policyIdRequired: CHANNEL_RULE_TITLES.policyIdRequired,
  channelIdsRequired: CHANNEL_RULE_TITLES.channelIdsRequired,
  channelIdRequired: CHANNEL_RULE_TITLES.channelIdRequired,
  idInvalid: CHANNEL_RULE_TITLES.idInvalid,
  sharedWorkflow: 'Invalid parameter channel_id: the channel reaches this policy through a workflow of other policies too',
  pushNotRoutable: 'Invalid channel: a user channel cannot be linked to a policy (a workflow cannot route to mobile push)',
} as const;

const invalid = (detail: string): V2Error => new V2Error(422, ChannelTitles.invalid(detail));

export type StoredAuth = { type: 'TOKEN'; token: string } | { type: 'BASIC'; user: string; password: string } | null;

/** A v2 channel as the store keeps it. */
export interface ChannelToStore {
  name: string;
  v2Type: Exclude<V2ChannelType, 'opsgenie' | 'victorops'>;
  destination: { type: string; properties: PropertyInput[]; auth: StoredAuth };
  channel: { type: string; properties: PropertyInput[] };
}

type Hash = { [key: string]: unknown };
const isHash = (value: unknown): value is Hash => typeof value === 'object' && value !== null && !Array.isArray(value);
const own = (hash: Hash, key: string): unknown => (Object.hasOwn(hash, key) ? hash[key] : undefined);

// eslint-disable-next-line no-control-regex
const CONTROL = /[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/;
const LONGEST_VALUE = 10_000;

/** A configuration value as text (v2 kept strings: numbers and flags as their text); headers and payload may be objects, kept as JSON text. */
function textAt(config: Hash, key: string, objectsAllowed = false): string | undefined {
  const value = own(config, key);
  let text: string;
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') text = value;
  else if ((typeof value === 'number' && Number.isFinite(value)) || typeof value === 'boolean') text = String(value);
  else if (objectsAllowed && typeof value === 'object') text = JSON.stringify(value);
  else throw invalid(CHANNEL_RULE_DETAILS.notText(key));
  if (text.length > LONGEST_VALUE) throw invalid(CHANNEL_RULE_DETAILS.tooLong(key, LONGEST_VALUE));
  if (!objectsAllowed && CONTROL.test(text)) throw invalid(CHANNEL_RULE_DETAILS.controlCharacters(key));
  return text;
}

function requiredAt(config: Hash, key: string): string {
  const text = textAt(config, key)?.trim() ?? '';
  if (text === '') throw invalid(CHANNEL_RULE_DETAILS.blank(key));
  return text;
}

function urlAt(config: Hash, key: string): string {
  const text = requiredAt(config, key);
  if (!URL.canParse(text) || !['http:', 'https:'].includes(new URL(text).protocol)) throw invalid(CHANNEL_RULE_DETAILS.notUrl(key));
  return text;
}

function flagAt(config: Hash, key: string): 'true' | 'false' {
  const text = textAt(config, key)?.trim().toLowerCase() ?? '';
  if (text === '' || text === 'false' || text === '0') return 'false';
  if (text === 'true' || text === '1') return 'true';
  throw invalid(CHANNEL_RULE_DETAILS.notBoolean(key));
}

const optional = (key: string, value: string | undefined): PropertyInput[] => (value === undefined || value === '' ? [] : [{ key, value }]);

/** Reads the body's `channel` object; 400 without it, 422 for what v2 refused or the store cannot hold. */
export function channelToStore(wrapper: unknown): ChannelToStore {
  if (!isHash(wrapper)) throw new V2Error(400, ChannelTitles.missing);
  const rawName = own(wrapper, 'name');
  const name = typeof rawName === 'string' ? rawName.trim() : typeof rawName === 'number' ? String(rawName) : '';
  if (name === '') throw invalid(CHANNEL_RULE_DETAILS.nameBlank);
  if (name.length > 255) throw invalid(CHANNEL_RULE_DETAILS.nameTooLong);
  if (CONTROL.test(name)) throw invalid(CHANNEL_RULE_DETAILS.nameControlCharacters);
  const rawType = own(wrapper, 'type');
  const type = (typeof rawType === 'string' ? rawType.trim().toLowerCase() : '') as V2ChannelType;
  if (!V2_TYPES.includes(type)) throw invalid(CHANNEL_RULE_DETAILS.typeOneOf(V2_TYPES));
  if (type === 'opsgenie' || type === 'victorops') throw new V2Error(422, ChannelTitles.noEquivalent(type));
  const config = own(wrapper, 'configuration');
  if (!isHash(config)) throw invalid(CHANNEL_RULE_DETAILS.configurationRequired);
  switch (type) {
    case 'email': {
      const recipients = requiredAt(config, 'recipients').split(',').map((r) => r.trim()).filter((r) => r !== '');
      if (recipients.length === 0 || recipients.some((r) => !/^[^\s@,]+@[^\s@,]+$/.test(r))) throw invalid(CHANNEL_RULE_DETAILS.recipients);
      return {
        name,
        v2Type: type,
        destination: { type: 'EMAIL', properties: [{ key: 'email', value: recipients.join(',') }], auth: null },
        channel: { type: 'EMAIL', properties: [{ key: 'includeJsonAttachment', value: flagAt(config, 'include_json_attachment') }] },
      };
    }
    case 'slack':
      return {
        name,
        v2Type: type,
        destination: { type: 'SLACK_LEGACY', properties: [{ key: 'url', value: urlAt(config, 'url') }], auth: null },
        channel: { type: 'SLACK_LEGACY', properties: optional('channel', textAt(config, 'channel')?.trim()) },
      };
    case 'pagerduty':
      return {
        name,
        v2Type: type,
        destination: { type: 'PAGERDUTY_SERVICE_INTEGRATION', properties: [], auth: { type: 'TOKEN', token: requiredAt(config, 'service_key') } },
        channel: { type: 'PAGERDUTY_SERVICE_INTEGRATION', properties: [] },
      };
    case 'webhook': {
      const url = urlAt(config, 'base_url');
      const user = textAt(config, 'auth_username')?.trim() || undefined;
      const password = textAt(config, 'auth_password');
      if (user === undefined && password !== undefined && password !== '') throw invalid(CHANNEL_RULE_DETAILS.authUsernameRequired);
      const payloadType = textAt(config, 'payload_type')?.trim() || undefined;
      const payloadTypes = ['application/json', 'application/x-www-form-urlencoded'];
      if (payloadType !== undefined && !payloadTypes.includes(payloadType)) throw invalid(CHANNEL_RULE_DETAILS.payloadTypeOneOf(payloadTypes));
      return {
        name,
        v2Type: type,
        destination: { type: 'WEBHOOK', properties: [{ key: 'url', value: url }], auth: user === undefined ? null : { type: 'BASIC', user, password: password ?? '' } },
        channel: {
          type: 'WEBHOOK',
          properties: [...optional('payloadType', payloadType), ...optional('payload', textAt(config, 'payload', true)), ...optional('headers', textAt(config, 'headers', true))],
        },
      };
    }
    case 'user': {
      const userId = requiredAt(config, 'user_id');
      if (!/^[1-9][0-9]{0,14}$/.test(userId)) throw invalid(CHANNEL_RULE_DETAILS.userId);
      return { name, v2Type: type, destination: { type: 'MOBILE_PUSH', properties: [{ key: 'userId', value: userId }], auth: null }, channel: { type: 'MOBILE_PUSH', properties: [] } };
    }
  }
}

const propertyOf = (properties: readonly PropertyInput[], key: string): string | null => properties.find((p) => p.key === key)?.value ?? null;

/** v2's `configuration` of a stored channel: every key of its type, text or null; secrets shown (v2 echoed them). */
export function v2ConfigurationOf(
  channel: { type: string; properties: readonly PropertyInput[] },
  destination: { properties: readonly PropertyInput[]; auth: StoredAuth } | undefined,
): Record<string, string | null> {
  const ofChannel = (key: string): string | null => propertyOf(channel.properties, key);
  const ofDestination = (key: string): string | null => propertyOf(destination?.properties ?? [], key);
  const auth = destination?.auth ?? null;
  switch (V2_TYPE_OF[channel.type]) {
    case 'email':
      return { recipients: ofDestination('email'), include_json_attachment: ofChannel('includeJsonAttachment') ?? 'false' };
    case 'slack':
      return { url: ofDestination('url'), channel: ofChannel('channel') };
    case 'pagerduty':
      return { service_key: auth?.type === 'TOKEN' ? auth.token : null };
    case 'webhook':
      return {
        base_url: ofDestination('url'),
        auth_username: auth?.type === 'BASIC' ? auth.user : null,
        auth_password: auth?.type === 'BASIC' ? auth.password : null,
        payload_type: ofChannel('payloadType'),
        payload: ofChannel('payload'),
        headers: ofChannel('headers'),
      };
    case 'user':
      return { user_id: ofDestination('userId') };
    default:
      return {};
  }
}

/** Ids given as a comma list, in one or several occurrences of `key`, without repeats; 422 for anything but positive integers. */
export function idsIn(values: readonly string[], key: string): number[] {
  const ids: number[] = [];
  for (const piece of values.flatMap((v) => v.split(',')).map((p) => p.trim())) {
    if (piece === '') continue;
    if (!/^[1-9][0-9]{0,15}$/.test(piece) || !Number.isSafeInteger(Number(piece))) throw new V2Error(422, ChannelTitles.idInvalid(key));
    if (!ids.includes(Number(piece))) ids.push(Number(piece));
  }
  return ids;
}

/** One id (the last occurrence wins); 422 `missing` when absent or blank. */
export function oneIdIn(values: readonly string[], key: string, missing: string): number {
  const last = values.at(-1)?.trim() ?? '';
  if (last === '') throw new V2Error(422, missing);
  const ids = idsIn([last], key);
  if (ids.length !== 1) throw new V2Error(422, ChannelTitles.idInvalid(key));
  return ids[0] as number;
}
