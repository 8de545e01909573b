/**
 * Identifiers v2 had and NerdGraph does not: the generic encodings. Each resource's own scheme
 * (host, deployment, channel, alert and user ids) lives with its resource in mappings/<resource>/ (or mappings/common/)
 * and is built from these.
 */
import { boundedMemo } from './bounded-memo.ts';

/** FNV-1a over UTF-16 code units: cheap, and stable across processes and versions. */
export function fnv1a32(text: string, from = 0x811c9dc5): number {
  let hash = from;
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

/**
 * Decodes a GUID so the account of any entity NerdGraph returns can be checked locally. Every
 * entity of every answer is checked, often more than once (a list page and its details), and the
 * same entities come back request after request: decoded GUIDs are kept, frozen, in a bounded memo
 * (boundedMemo: the last 10,000, oldest first out).
 */
export function decodeEntityGuid(guid: string): Readonly<DecodedGuid> | undefined {
  // A text far longer than any GUID is decoded (and refused) without being kept.
  return guid.length > MAX_KEPT_GUID_LENGTH ? decodeGuidText(guid) : keptDecode(guid);
}

const MAX_KEPT_GUID_LENGTH = 128;
/** A few MB at most: 10,000 GUIDs of up to 128 characters, and their decoded parts. */
const keptDecode = boundedMemo(10_000, decodeGuidText);

function decodeGuidText(guid: string): Readonly<DecodedGuid> | undefined {
  if (!/^[A-Za-z0-9_-]+$/.test(guid)) return undefined;
  const parts = Buffer.from(guid, 'base64url').toString('utf8').split('|');
  if (parts.length !== 4) return undefined;
  const [account, domain, type, domainId] = parts as [string, string, string, string];
  if (!/^\d+$/.test(account)) return undefined;
  return Object.freeze({ accountId: Number(account), domain, type, domainId });
}

/**
 * A v2 integer id derived from a NerdGraph id (a UUID NerdGraph generates): positive, below
 * 2^53 so every JSON client reads it exactly (DERIVED_ID_PATTERN), and the same for the same id
 * in every listing and process. `salt` keeps one resource's scheme apart from another's.
 */
export function derivedV2Id(nerdgraphId: string, salt = ''): number {
  const high = fnv1a32(`${salt}high|${nerdgraphId}`) & 0x1fffff;
  const low = fnv1a32(`${salt}low|${nerdgraphId}`);
  return high * 0x1_0000_0000 + low || 1;
}
