import { MetricTitles, invalidParameter } from './errors.ts';
import { hasControlCharacters } from './control-characters.ts';
import { REQUEST_RULE_TITLES } from '../../facts/rule-titles.ts';

/**
 * REST v2 parameters as real clients send them (client-behaviour.md §3): in the query string
 * and, on GET as well as POST, in a form-encoded body; array keys as `names[]`, `names`,
 * `names[0]`, with brackets raw or percent-encoded; `filter[ids]` also as `filter[ids][]`.
 * Keys are normalised by dropping one trailing `[]` or `[<digits>]`, so every spelling lands
 * on the same key; values keep their order of arrival.
 */
export type V2Params = ReadonlyMap<string, readonly string[]>;

const ARRAY_SUFFIX = /\[\d*\]$/;

export function normaliseKey(key: string): string {
  return key.replace(ARRAY_SUFFIX, '');
}

/** Parses `a=1&b[]=2` text (query string without `?`, or a form body). `+` means a space. */
export function parseParamText(text: string, into: Map<string, string[]> = new Map()): Map<string, string[]> {
  for (const [rawKey, value] of new URLSearchParams(text)) {
    const key = normaliseKey(rawKey);
    if (key === '') continue;
    const list = into.get(key);
    if (list) list.push(value);
    else into.set(key, [value]);
  }
  return into;
}

export function parseV2Params(rawQuery: string, formBody?: string): V2Params {
  const params = parseParamText(rawQuery);
  if (formBody) parseParamText(formBody, params);
  return params;
}

/** A single-valued parameter: the last occurrence wins, as in Rails. */
export function lastValue(params: V2Params, key: string): string | undefined {
  const values = params.get(key);
  return values === undefined ? undefined : values[values.length - 1];
}

const MAX_PAGE = 1_000_000;

/** `page` is 1-based; absent or empty means 1. */
export function parsePage(params: V2Params): number {
  const raw = lastValue(params, 'page');
  if (raw === undefined || raw.trim() === '') return 1;
  const text = raw.trim();
  if (!/^\d{1,7}$/.test(text) || Number(text) < 1 || Number(text) > MAX_PAGE) {
    throw invalidParameter(`Invalid parameter page: expected a whole number from 1 to ${MAX_PAGE}`);
  }
  return Number(text);
}

const MAX_IDS = 1000;
/**
 * A v2 id New Relic assigned (applications, hosts, policies, users, ...): a positive integer of
 * at most 15 digits, so it fits a JSON number exactly. The one id pattern of the gateway.
 */
export const ID_PATTERN = /^[1-9]\d{0,14}$/;
/**
 * A v2 id the gateway derives from a NerdGraph UUID (deployments, alert channels, incidents and
 * violations: src/v2/ids.ts derivedV2Id): positive and below 2^53, so up to 16 digits. The
 * alerts and channels parameters take ids of this bound (their ids are mostly derived ones).
 */
export const DERIVED_ID_PATTERN = /^[1-9]\d{0,15}$/;

/** Which ids a parameter accepts: New Relic's (ID_PATTERN) or derived ones (DERIVED_ID_PATTERN). */
export type IdBound = 'v2' | 'derived';

/** The id `text` spells, when it is one of `bound`; undefined otherwise (no trimming). */
export function v2IdOf(text: string, bound: IdBound = 'v2'): number | undefined {
  if (bound === 'v2') return ID_PATTERN.test(text) ? Number(text) : undefined;
  return DERIVED_ID_PATTERN.test(text) && Number.isSafeInteger(Number(text)) ? Number(text) : undefined;
}

/** A comma list of ids, from one or several occurrences of `key` (raw `,` or `%2C`). */
export function parseIdList(params: V2Params, key: string): number[] | undefined {
  const values = params.get(key);
  if (values === undefined) return undefined;
  const ids: number[] = [];
  for (const value of values) {
    for (const piece of value.split(',')) {
      const text = piece.trim();
      if (text === '') continue;
      if (!ID_PATTERN.test(text)) {
        throw invalidParameter(REQUEST_RULE_TITLES.idList(key));
      }
      ids.push(Number(text));
    }
  }
  if (ids.length > MAX_IDS) throw invalidParameter(`Invalid parameter ${key}: at most ${MAX_IDS} ids are accepted`);
  return [...new Set(ids)];
}

const MAX_TEXT = 255;

/** A free-text filter: trimmed of nothing, capped in length, no control characters. */
export function parseText(params: V2Params, key: string): string | undefined {
  const value = lastValue(params, key);
  if (value === undefined || value === '') return undefined;
  if (value.length > MAX_TEXT || hasControlCharacters(value)) {
    throw invalidParameter(`Invalid parameter ${key}: expected text of at most ${MAX_TEXT} characters without control characters`);
  }
  return value;
}

/** A boolean flag in the spellings Rails accepted. */
export function parseFlag(params: V2Params, key: string): boolean {
  const value = lastValue(params, key);
  if (value === undefined) return false;
  const text = value.trim().toLowerCase();
  if (['true', '1', 'yes', 'on', 't'].includes(text)) return true;
  if (['false', '0', 'no', 'off', 'f', ''].includes(text)) return false;
  throw invalidParameter(REQUEST_RULE_TITLES.boolean(key));
}

const MAX_METRIC_NAMES = 100;

/** The values of an array parameter, in order of arrival, without empties and repeats. */
export function distinctValues(params: V2Params, key: string): string[] {
  return [...new Set((params.get(key) ?? []).filter((value) => value !== ''))];
}

/**
 * `names[]` of a metric-data request: at least one, at most 100 (docs/metric-data-rules.md §1).
 * `aliases` are keys also read as names, after `names[]` (mobile data takes a single `name`).
 */
export function parseMetricNames(params: V2Params, aliases: readonly string[] = []): string[] {
  const names = [...new Set([distinctValues(params, 'names'), ...aliases.map((alias) => distinctValues(params, alias))].flat())];
  if (names.length === 0) throw invalidParameter(MetricTitles.namesRequired);
  if (names.length > MAX_METRIC_NAMES) throw invalidParameter(MetricTitles.tooManyNames);
  return names;
}
