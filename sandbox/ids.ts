/**
 * The sandbox's own identifiers: New Relic's entity GUID encoding, a string hash for drawing
 * stable values from names, and the integer ids its legacy REST face assigns where NerdGraph
 * has none. Written for the sandbox alone (the gateway has its own, and the two must not agree
 * by construction: sandbox/test/boundary.test.ts).
 */
import { createHash } from 'node:crypto';

/**
 * An entity GUID: `accountId|DOMAIN|TYPE|domainId`, base64 without padding (New Relic's
 * entity-definitions repository, "guid_spec"; the GUIDs NerdGraph returns decode this way,
 * e.g. `MXxBUE18QVBQTElDQVRJT058MQ` is `1|APM|APPLICATION|1`). NerdGraph's GUIDs use the
 * URL-safe alphabet.
 */
export function entityGuid(accountId: number, domain: string, type: string, domainId: number | string): string {
  return Buffer.from([accountId, domain, type, domainId].join('|')).toString('base64url');
}

export interface GuidParts {
  accountId: number;
  domain: string;
  type: string;
  domainId: string;
}

/** The four parts of a GUID, or undefined when the text is not one. */
export function guidParts(guid: string): GuidParts | undefined {
  if (guid === '' || /[^A-Za-z0-9_=+/-]/.test(guid)) return undefined;
  const parts = Buffer.from(guid, 'base64').toString('utf8').split('|');
  if (parts.length !== 4 || !/^[0-9]+$/.test(parts[0] ?? '')) return undefined;
  return { accountId: Number(parts[0]), domain: parts[1] ?? '', type: parts[2] ?? '', domainId: parts[3] ?? '' };
}

/**
 * 32-bit FNV-1a (Fowler, Noll and Vo's public algorithm: offset basis 2166136261, prime
 * 16777619) over UTF-16 code units. The sandbox draws its world's stable values from names
 * with it; changing it would change the generated world.
 */
export function fnv1a32(text: string): number {
  let hash = 2166136261;
  for (let i = 0; i < text.length; i++) hash = Math.imul(hash ^ text.charCodeAt(i), 16777619);
  return hash >>> 0;
}

/**
 * The integer ids of the legacy face's own records (hosts, deployments, channels, alert
 * incidents and violations), as New Relic's REST database would give them: a row id, here a
 * per-world sequence per table, handed out in the order the sandbox first meets a record and
 * then kept. They are not the ids the gateway derives for the same records (it cannot know
 * them): the differential tests match such records by their other fields (test/support/derived-ids.ts).
 */
export class RowIds {
  private readonly ids = new Map<string, number>();
  private readonly keys = new Map<number, string>();
  private next: number;

  constructor(first: number) {
    this.next = first;
  }

  /** The id of the record `key`, given on first sight. */
  idOf(key: string): number {
    let id = this.ids.get(key);
    if (id === undefined) {
      id = this.next++;
      this.ids.set(key, id);
      this.keys.set(id, key);
    }
    return id;
  }

  /** The record an id was given to, if any. */
  keyOf(id: number): string | undefined {
    return this.keys.get(id);
  }
}

/**
 * The row id of a record the sandbox makes up lazily (seeded deployments, alert issues and
 * incidents drawn from the clock), where a sequence would depend on which request saw it
 * first: 48 bits of the SHA-256 of its table and NerdGraph id, the same whatever the order.
 */
export function hashedRowId(table: string, key: string): number {
  return parseInt(createHash('sha256').update(`${table}\n${key}`).digest('hex').slice(0, 12), 16) || 1;
}
