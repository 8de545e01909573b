import type { JsonValue } from '../../src/v2/xml.ts';

/**
 * Ids that each side makes up on its own (issue 20): the gateway derives v2 ids from
 * NerdGraph's (src/v2/ids.ts: host, deployment, channel and alert ids), the sandbox's legacy
 * face hands out its own row ids, as New Relic's database did. The two never agree, so the
 * differential tests compare records, not ids: a request names a record by a token
 * (`{{kind:key}}`, the key being what both sides share: a NerdGraph id, a host name, a
 * revision), each side's path gets that side's id for it, and each side's answer has its ids
 * at known paths put back to `kind:key` before the answers are compared. This is the one place
 * that normalisation lives.
 */
export type IdKind = 'host' | 'deployment' | 'channel' | 'alert';

/** One side's ids: the id of a record's key, and the key of an id (undefined: unknown here). */
export interface SideIds {
  idOf(kind: IdKind, key: string): number | undefined;
  keyOf(kind: IdKind, id: number): string | undefined;
}

/** The token a corpus writes where a record's id goes. */
export const idToken = (kind: IdKind, key: string): string => `{{${kind}:${key}}}`;

const TOKEN = /\{\{(host|deployment|channel|alert):([^}]*)\}\}/g;

/** A path (or body) with every token replaced by this side's id; a record the side does not know gets an id no record has. */
export function resolveTokens(text: string, side: SideIds): string {
  return text.replace(TOKEN, (_all, kind: IdKind, key: string) => String(side.idOf(kind, decodeURIComponent(key)) ?? 999_999_999_999));
}

/** Where ids stand in an answer: `channels[].id`, `policy.channel_ids[]`, `links.application_hosts[]`. */
export interface IdPath {
  path: string;
  kind: IdKind;
}

function rewrite(value: JsonValue, steps: readonly string[], kind: IdKind, side: SideIds): JsonValue {
  const [step, ...rest] = steps;
  if (step === undefined) {
    if (typeof value === 'number') return `${kind}:${side.keyOf(kind, value) ?? `unknown ${value}`}`;
    if (Array.isArray(value)) return value.map((item) => rewrite(item, [], kind, side));
    return value;
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const many = step.endsWith('[]');
  const key = many ? step.slice(0, -2) : step;
  if (!Object.hasOwn(value, key)) return value;
  const child = value[key] as JsonValue;
  const next = many && Array.isArray(child) ? child.map((item) => rewrite(item, rest, kind, side)) : rewrite(child, rest, kind, side);
  return { ...value, [key]: next };
}

/** The answer with the ids at `paths` replaced by `kind:key`, so the two sides' answers compare. */
export function normaliseIds(body: JsonValue, paths: readonly IdPath[], side: SideIds): JsonValue {
  return paths.reduce((current, { path, kind }) => rewrite(current, path.split('.'), kind, side), body);
}

/**
 * A side's ids from lookups that see the current world: every id seen is remembered, so a
 * record deleted since still reads back by its id.
 */
export function rememberingSide(lookup: { [K in IdKind]?: () => Iterable<readonly [key: string, id: number]> }): SideIds {
  const byKey = new Map<string, number>();
  const byId = new Map<string, string>();
  const refresh = (kind: IdKind): void => {
    for (const [key, id] of lookup[kind]?.() ?? []) {
      byKey.set(`${kind}|${key}`, id);
      byId.set(`${kind}|${id}`, key);
    }
  };
  return {
    idOf(kind, key) {
      refresh(kind);
      return byKey.get(`${kind}|${key}`);
    },
    keyOf(kind, id) {
      if (!byId.has(`${kind}|${id}`)) refresh(kind);
      return byId.get(`${kind}|${id}`);
    },
  };
}
