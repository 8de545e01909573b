import { ID_PATTERN } from './params.ts';
/**
 * Identifiers v2 had and NerdGraph does not.
 *
 * REST v2 host ids name an (application, host) pair; NerdGraph only knows host names.
 * v2-bridge therefore derives a stable positive 31-bit id from the pair, so a client that
 * lists hosts and comes back with an id is understood. Real v2 host ids are different
 * numbers: this is a documented gap of every route that shows host ids.
 */
export function syntheticHostId(applicationId: number, hostName: string): number {
  // Keep it positive, 31-bit and non-zero so it is a valid v2 id.
  return fnv1a32(`${applicationId}|${hostName}`) >>> 1 || 1;
}

/** FNV-1a over UTF-16 code units: cheap, and stable across processes and versions. */
export function fnv1a32(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}

/** Entity GUIDs are unpadded base64url of `accountId|DOMAIN|TYPE|domainId` (entity-definitions guid_spec). */
export function entityGuid(accountId: number, domain: string, type: string, domainId: number | string): string {
  return Buffer.from(`${accountId}|${domain}|${type}|${domainId}`, 'utf8').toString('base64url');
}

export interface DecodedGuid {
  accountId: number;
  domain: string;
  type: string;
  domainId: string;
}

/** Decodes a GUID so the account of any entity NerdGraph returns can be checked locally. */
export function decodeEntityGuid(guid: string): DecodedGuid | undefined {
  if (!/^[A-Za-z0-9_-]+$/.test(guid)) return undefined;
  const parts = Buffer.from(guid, 'base64url').toString('utf8').split('|');
  if (parts.length !== 4) return undefined;
  const [account, domain, type, domainId] = parts as [string, string, string, string];
  if (!/^\d+$/.test(account)) return undefined;
  return { accountId: Number(account), domain, type, domainId };
}

/**
 * The v2 integer id of a deployment, derived from its NerdGraph change-tracking id (a UUID
 * NerdGraph generates): positive, below 2^53 so every JSON client reads it exactly, and the
 * same for the same event in every listing. v2's own deployment ids are not recoverable.
 */
export function deploymentV2Id(changeTrackingId: string): number {
  const high = fnv1a32(`high|${changeTrackingId}`) & 0x1fffff;
  const low = fnv1a32(`low|${changeTrackingId}`);
  return high * 0x1_0000_0000 + low || 1;
}

// Issue 11, users (helper A).
/**
 * The v2 integer id of a NerdGraph user (`UserManagementUser.id`, an `ID`): the id itself when
 * it is a positive integer v2 accepts in a path (ID_PATTERN: at most 15 digits; user ids seen are numeric strings; whether they are the
 * numbers v2 showed is UNCONFIRMED), otherwise derived from the string as deploymentV2Id does.
 */
export function userV2Id(userId: string): number {
  if (ID_PATTERN.test(userId)) return Number(userId);
  return deploymentV2Id(`user|${userId}`);
}

// alerts_channels (helper C): notification channel ids.
/**
 * The v2 integer id of an alert channel, derived from its NerdGraph notification channel id
 * (a UUID): positive, below 2^53, the same in every listing. v2's own channel ids are not
 * recoverable (a documented gap of every channel route).
 */
export function channelV2Id(channelId: string): number {
  const high = fnv1a32(`channel-high|${channelId}`) & 0x1fffff;
  const low = fnv1a32(`channel-low|${channelId}`);
  return high * 0x1_0000_0000 + low || 1;
}

/**
 * The v2 integer id of an alert issue (REST "incident") or incident (REST "violation"),
 * derived from its NerdGraph id (a UUID) the way deploymentV2Id is: stable, positive, below
 * 2^53. v2's own ids are not recoverable; both sandbox faces and the gateway use this one.
 */
export function alertV2Id(nerdgraphId: string): number {
  return deploymentV2Id(`alert|${nerdgraphId}`);
}
