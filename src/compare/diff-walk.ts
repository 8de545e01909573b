import { redactKeys } from '../ops/redact.ts';
import type { JsonValue } from '../v2/xml.ts';
import { mediaType, semanticLinks } from './answer.ts';
import type { AnswerSnapshot, Difference } from './types.ts';

/**
 * The diff engine's first half (diff.ts judges what it finds): every difference between two
 * decoded bodies, and between two answers' headers, unjudged. Linear in the size of the
 * answers: arrays are matched through index maps, paths are only spelled out for differences,
 * and stored values are serialised with a bound and redacted.
 *
 * Paths: `applications[id=5].name` (concrete) and `applications[].name` (pattern). Arrays of
 * objects are matched by `id` when every item on both sides has a unique one, else by `name`,
 * else by `from` (timeslices), else by position (`[3]`). Arrays of primitives are multisets
 * (v2 orders id lists arbitrarily): an element only on one side is `[=5]`. Beside the body,
 * `(status)`, `(content-type)` and `(link).<rel>` carry the header-level differences.
 */

/** A selector longer than this is cut (a 1 MB `name` must not be copied into every path under it). */
const MAX_SELECTOR_CHARS = 120;
const MAX_STORED_CHARS = 200;

// ---------------------------------------------------------------------------------------------
// Paths: a linked list of steps, spelled out only when a difference is recorded.

interface Step {
  parent: Step | undefined;
  /** `name`, `.name`, `[id=5]`, `[3]`, `[=5]`. */
  concrete: string;
  /** `name`, `.name`, `[]`. */
  pattern: string;
  depth: number;
}

function keyStep(parent: Step | undefined, key: string): Step {
  return parent === undefined ? { parent, concrete: key, pattern: key, depth: 1 } : { parent, concrete: `.${key}`, pattern: `.${key}`, depth: parent.depth + 1 };
}

function elementStep(parent: Step | undefined, selector: string): Step {
  return { parent, concrete: `[${selector}]`, pattern: '[]', depth: (parent?.depth ?? 0) + 1 };
}

/** v2 bodies are a few levels deep; a body nested deeper than this is refused, not walked (the walk recurses). */
export const MAX_DEPTH = 256;

export class TooDeepError extends Error {
  override name = 'TooDeepError';
}

function enter(at: Step | undefined): void {
  if (at !== undefined && at.depth > MAX_DEPTH) throw new TooDeepError(`bodies nest deeper than ${MAX_DEPTH} levels`);
}

function spell(step: Step | undefined): { path: string; pattern: string } {
  const concrete: string[] = [];
  const pattern: string[] = [];
  for (let at = step; at !== undefined; at = at.parent) {
    concrete.push(at.concrete);
    pattern.push(at.pattern);
  }
  return { path: concrete.reverse().join(''), pattern: pattern.reverse().join('') };
}

/** A selector value: plain when it reads unambiguously in a path, else as a JSON string. */
function selectorText(value: string | number | boolean | null): string {
  if (typeof value !== 'string') return String(value);
  const text = value.length > MAX_SELECTOR_CHARS ? `${value.slice(0, MAX_SELECTOR_CHARS)}…` : value;
  return /^[A-Za-z0-9_\-:+ /@]*$/.test(text) ? text : JSON.stringify(text);
}

// ---------------------------------------------------------------------------------------------
// Stored values: bounded, redacted.

function cut(text: string): string {
  return text.length > MAX_STORED_CHARS ? `${text.slice(0, MAX_STORED_CHARS)}…` : text;
}

/** JSON text of `value`, stopping once it is longer than `limit` (no full serialisation of big values). */
function boundedJson(value: JsonValue, limit: number): string {
  const parts: string[] = [];
  let length = 0;
  const push = (text: string): boolean => {
    parts.push(text);
    length += text.length;
    return length <= limit;
  };
  const write = (v: JsonValue): boolean => {
    if (v === null || typeof v !== 'object') {
      return push(typeof v === 'string' ? JSON.stringify(v.length > limit ? v.slice(0, limit + 1) : v) : String(v));
    }
    if (Array.isArray(v)) {
      if (!push('[')) return false;
      for (let i = 0; i < v.length; i++) {
        if (i > 0 && !push(',')) return false;
        if (!write(v[i] as JsonValue)) return false;
      }
      return push(']');
    }
    if (!push('{')) return false;
    let first = true;
    for (const key of Object.keys(v)) {
      if (!first && !push(',')) return false;
      first = false;
      if (!push(`${JSON.stringify(key.length > limit ? key.slice(0, limit + 1) : key)}:`)) return false;
      if (!write(v[key] as JsonValue)) return false;
    }
    return push('}');
  };
  write(value);
  return parts.join('');
}

/** What a difference keeps of a value: strings cut at 200 characters, objects and arrays as at most 200 characters of JSON text. */
export function storedValue(value: JsonValue): unknown {
  if (typeof value === 'string') return cut(redactKeys(value));
  if (value === null || typeof value !== 'object') return value;
  return cut(redactKeys(boundedJson(value, MAX_STORED_CHARS)));
}

// ---------------------------------------------------------------------------------------------
// The walk.

type Kind = 'null' | 'array' | 'object' | 'string' | 'number' | 'boolean';
type JsonObject = { [key: string]: JsonValue };

function kindOf(value: JsonValue): Kind {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'array';
  return typeof value as Kind;
}

function isObject(value: JsonValue | undefined): value is JsonObject {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

const MATCH_FIELDS = ['id', 'name', 'host', 'from'] as const;

class Walk {
  readonly differences: Difference[] = [];

  private record(at: Step | undefined, kind: Difference['kind'], legacy: JsonValue | undefined, translated: JsonValue | undefined): void {
    const difference: Difference = { ...spell(at), kind };
    if (legacy !== undefined) difference.legacy = storedValue(legacy);
    if (translated !== undefined) difference.translated = storedValue(translated);
    this.differences.push(difference);
  }

  node(legacy: JsonValue, translated: JsonValue, at: Step | undefined): void {
    if (legacy === translated) return;
    const kind = kindOf(legacy);
    if (kind !== kindOf(translated)) return this.record(at, 'type', legacy, translated);
    if (kind === 'object') return this.object(legacy as JsonObject, translated as JsonObject, at);
    if (kind === 'array') return this.array(legacy as JsonValue[], translated as JsonValue[], at);
    // Same primitive kind, not ===: a different value.
    this.record(at, 'value', legacy, translated);
  }

  private object(legacy: JsonObject, translated: JsonObject, at: Step | undefined): void {
    enter(at);
    for (const key of Object.keys(legacy)) {
      const l = legacy[key] as JsonValue;
      if (!Object.hasOwn(translated, key)) {
        this.record(keyStep(at, key), 'missing', l, undefined);
        continue;
      }
      const t = translated[key] as JsonValue;
      // Equal primitives: no step allocated at all.
      if (l === t) continue;
      this.node(l, t, keyStep(at, key));
    }
    for (const key of Object.keys(translated)) {
      if (!Object.hasOwn(legacy, key)) this.record(keyStep(at, key), 'extra', undefined, translated[key] as JsonValue);
    }
  }

  private array(legacy: JsonValue[], translated: JsonValue[], at: Step | undefined): void {
    enter(at);
    if (legacy.length !== translated.length) this.record(at, 'length', legacy.length, translated.length);
    if (legacy.length === 0 && translated.length === 0) return;
    const allPrimitive = (items: JsonValue[]): boolean => items.every((v) => v === null || typeof v !== 'object');
    if (allPrimitive(legacy) && allPrimitive(translated)) return this.multiset(legacy, translated, at);
    if (legacy.every(isObject) && translated.every(isObject)) {
      for (const field of MATCH_FIELDS) {
        const legacyIndex = indexBy(legacy, field);
        if (!legacyIndex) continue;
        const translatedIndex = indexBy(translated, field);
        if (!translatedIndex) continue;
        // Wholly disjoint keys pair nothing (ids the gateway derives never equal v2's own, a
        // documented gap): try the next field, else pair by position.
        if (legacyIndex.size > 0 && !sharesAKey(legacyIndex, translatedIndex)) continue;
        return this.keyed(legacyIndex, translatedIndex, at);
      }
    }
    this.positional(legacy, translated, at);
  }

  private keyed(legacy: Map<string, JsonObject>, translated: Map<string, JsonObject>, at: Step | undefined): void {
    for (const [selector, item] of legacy) {
      const other = translated.get(selector);
      if (other === undefined) this.record(elementStep(at, selector), 'missing', item, undefined);
      else this.object(item, other, elementStep(at, selector));
    }
    for (const [selector, item] of translated) {
      if (!legacy.has(selector)) this.record(elementStep(at, selector), 'extra', undefined, item);
    }
  }

  private positional(legacy: JsonValue[], translated: JsonValue[], at: Step | undefined): void {
    const shared = Math.min(legacy.length, translated.length);
    for (let i = 0; i < shared; i++) {
      const l = legacy[i] as JsonValue;
      const t = translated[i] as JsonValue;
      if (l !== t) this.node(l, t, elementStep(at, String(i)));
    }
    for (let i = shared; i < legacy.length; i++) this.record(elementStep(at, String(i)), 'missing', legacy[i] as JsonValue, undefined);
    for (let i = shared; i < translated.length; i++) this.record(elementStep(at, String(i)), 'extra', undefined, translated[i] as JsonValue);
  }

  private multiset(legacy: JsonValue[], translated: JsonValue[], at: Step | undefined): void {
    // Count by kind and value (`5` and `"5"` are different elements), in first-seen order.
    const counts = new Map<string, { value: JsonValue; count: number }>();
    const tally = (items: JsonValue[], delta: number): void => {
      for (const value of items) {
        const key = `${kindOf(value)}:${String(value)}`;
        const entry = counts.get(key);
        if (entry) entry.count += delta;
        else counts.set(key, { value, count: delta });
      }
    };
    tally(legacy, 1);
    tally(translated, -1);
    for (const { value, count } of counts.values()) {
      const step = count === 0 ? undefined : elementStep(at, `=${selectorText(value as string | number | boolean | null)}`);
      for (let i = 0; i < count; i++) this.record(step, 'missing', value, undefined);
      for (let i = 0; i < -count; i++) this.record(step, 'extra', undefined, value);
    }
  }
}

/** Items by their selector (`id=5`), or undefined unless every item has a unique string or number there. */
function sharesAKey(a: ReadonlyMap<string, unknown>, b: ReadonlyMap<string, unknown>): boolean {
  for (const key of a.keys()) if (b.has(key)) return true;
  return false;
}

function indexBy(items: JsonValue[], field: string): Map<string, JsonObject> | undefined {
  const index = new Map<string, JsonObject>();
  for (const item of items as JsonObject[]) {
    const value = item[field];
    if (typeof value !== 'string' && typeof value !== 'number') return undefined;
    const selector = `${field}=${selectorText(value)}`;
    if (index.has(selector)) return undefined;
    index.set(selector, item);
  }
  return index;
}

/** Every difference between two decoded bodies, in the legacy answer's order. Throws TooDeepError past MAX_DEPTH. */
export function diffValues(legacy: JsonValue, translated: JsonValue): Difference[] {
  const walk = new Walk();
  walk.node(legacy, translated, undefined);
  return walk.differences;
}

// ---------------------------------------------------------------------------------------------
// Header-level differences.

export function headerDifferences(legacy: AnswerSnapshot, translated: AnswerSnapshot): Difference[] {
  const differences: Difference[] = [];
  if (legacy.status !== translated.status) {
    differences.push({ path: '(status)', pattern: '(status)', kind: 'value', legacy: legacy.status, translated: translated.status });
  }
  // Only bodies have a type that matters: an empty answer's content type is incidental.
  if (legacy.body.trim() !== '' && translated.body.trim() !== '') {
    const [l, t] = [mediaType(legacy.contentType), mediaType(translated.contentType)];
    if (l !== t) differences.push({ path: '(content-type)', pattern: '(content-type)', kind: 'value', legacy: cut(redactKeys(l)), translated: cut(redactKeys(t)) });
  }
  const [legacyLinks, translatedLinks] = [semanticLinks(legacy.link), semanticLinks(translated.link)];
  for (const [rel, l] of legacyLinks) {
    const path = `(link).${rel}`;
    const t = translatedLinks.get(rel);
    if (t === undefined) differences.push({ path, pattern: path, kind: 'missing', legacy: cut(l) });
    else if (t !== l) differences.push({ path, pattern: path, kind: 'value', legacy: cut(l), translated: cut(t) });
  }
  for (const [rel, t] of translatedLinks) {
    const path = `(link).${rel}`;
    if (!legacyLinks.has(rel)) differences.push({ path, pattern: path, kind: 'extra', translated: cut(t) });
  }
  return differences;
}
