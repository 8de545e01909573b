import { invalidParameter } from './errors.ts';
import { distinctValues, type IdBound, v2IdOf, lastValue, parseFlag, parseIdList, parseMetricNames, parsePage, parseText, type V2Params } from './params.ts';
import { parseV2Time } from './timestamps.ts';

/**
 * A route's v2 request parameters as one declaration that both parses the request and
 * documents it for the compatibility report, so the two cannot drift (coercion kept apart from
 * the route's logic, as SOFA does). Each declaration wraps a parser of params.ts; a parse
 * reads the declarations in order, so the first bad parameter in declaration order is the
 * one refused.
 */
/** `passthrough`: forwarded unchanged to the legacy REST API, never translated (ROUTE_MODES). */
export type Fidelity = 'exact' | 'approximate' | 'unsupported' | 'passthrough';

/** One row of the compatibility report's parameter table. */
export interface ParameterNote {
  name: string;
  fidelity: Fidelity;
  note: string;
}

/** What the report says about a parameter. */
export interface ParamDoc {
  fidelity: Fidelity;
  note: string;
}

/** One declared parameter: how to read it, and the report row it produces. */
export interface ParamSpec<T> {
  readonly doc: ParameterNote;
  read(params: V2Params): T;
}

const spec = <T>(name: string, doc: ParamDoc, read: (params: V2Params) => T): ParamSpec<T> => ({
  doc: { name, fidelity: doc.fidelity, note: doc.note },
  read,
});

function readId(params: V2Params, key: string, doc: { title: string; ids?: IdBound }): number | undefined {
  const value = lastValue(params, key)?.trim();
  if (value === undefined || value === '') return undefined;
  const id = v2IdOf(value, doc.ids);
  if (id === undefined) throw invalidParameter(doc.title);
  return id;
}

/** The declarations; one function per kind of v2 parameter. */
export const param = {
  /** Free text, last occurrence wins; empty means absent (parseText). */
  text: (key: string, doc: ParamDoc): ParamSpec<string | undefined> => spec(key, doc, (params) => parseText(params, key)),

  /**
   * The last occurrence exactly as sent, for values a later rule validates together (e.g. the
   * metric window's from, to and period, whose limits depend on each other and on the clock).
   */
  single: (key: string, doc: ParamDoc): ParamSpec<string | undefined> => spec(key, doc, (params) => lastValue(params, key)),

  /**
   * Comma lists of ids under `key` and its aliases, merged without repeats (parseIdList);
   * undefined when none of the spellings was sent, [] when sent empty.
   */
  idList: (key: string, doc: ParamDoc & { aliases?: readonly string[] }): ParamSpec<number[] | undefined> =>
    spec(key, doc, (params) => {
      const keys = [key, ...(doc.aliases ?? [])];
      if (!keys.some((k) => params.has(k))) return undefined;
      return [...new Set(keys.flatMap((k) => parseIdList(params, k) ?? []))];
    }),

  /**
   * A boolean in the spellings Rails accepted; absent is false (parseFlag). With `aliases`,
   * true when any spelling is, read in order until one is true (a later one is not read).
   */
  flag: (key: string, doc: ParamDoc & { aliases?: readonly string[] }): ParamSpec<boolean> =>
    spec(key, doc, (params) => [key, ...(doc.aliases ?? [])].some((k) => parseFlag(params, k))),

  /**
   * One of `allowed`, matched case-insensitively and given back in its declared spelling;
   * trimmed, empty means absent; 422 `title` otherwise.
   */
  oneOf: <T extends string>(key: string, doc: ParamDoc & { allowed: readonly T[]; title: string }): ParamSpec<T | undefined> =>
    spec(key, doc, (params) => {
      const value = lastValue(params, key)?.trim();
      if (value === undefined || value === '') return undefined;
      const found = doc.allowed.find((candidate) => candidate.toLowerCase() === value.toLowerCase());
      if (found === undefined) throw invalidParameter(doc.title);
      return found;
    }),

  /**
   * A time (parseV2Time: ISO 8601 and the forms v2 took) as epoch ms; blank means absent, and
   * then the next of `aliases` is read; 422 `title(key)` for the first spelling that is no time.
   */
  time: (key: string, doc: ParamDoc & { aliases?: readonly string[]; title: (key: string) => string }): ParamSpec<number | undefined> =>
    spec(key, doc, (params) => {
      for (const k of [key, ...(doc.aliases ?? [])]) {
        const value = lastValue(params, k);
        if (value === undefined || value.trim() === '') continue;
        const at = parseV2Time(value);
        if (at === undefined) throw invalidParameter(doc.title(k));
        return at;
      }
      return undefined;
    }),

  /**
   * One id (the last occurrence, trimmed) of `ids` bound (default 'v2', ID_PATTERN); blank
   * means absent; 422 `title` when it is no such id.
   */
  id: (key: string, doc: ParamDoc & { title: string; ids?: IdBound }): ParamSpec<number | undefined> => spec(key, doc, (params) => readId(params, key, doc)),

  /** The same, required: absent or blank is 422 `missingTitle`. */
  requiredId: (key: string, doc: ParamDoc & { title: string; missingTitle: string; ids?: IdBound }): ParamSpec<number> =>
    spec(key, doc, (params) => {
      // The last occurrence, read as a comma list naming exactly one id (`7,` and `7,7` are 7, as v2 took them).
      const last = lastValue(params, key)?.trim();
      if (last === undefined || last === '') throw invalidParameter(doc.missingTitle);
      const pieces = last.split(',').map((piece) => piece.trim()).filter((piece) => piece !== '');
      const ids = new Set(pieces.map((piece) => v2IdOf(piece, doc.ids)));
      const [id] = [...ids];
      if (ids.size !== 1 || id === undefined) throw invalidParameter(doc.title);
      return id;
    }),

  /**
   * Ids of `ids` bound (default 'v2') from every occurrence, each a comma list (empty pieces
   * skipped), without repeats, in order; [] when absent; 422 `title` on any other piece.
   */
  ids: (key: string, doc: ParamDoc & { title: string; ids?: IdBound }): ParamSpec<number[]> =>
    spec(key, doc, (params) => {
      const pieces = (params.get(key) ?? []).flatMap((value) => value.split(',')).map((piece) => piece.trim()).filter((piece) => piece !== '');
      const ids = pieces.map((piece) => v2IdOf(piece, doc.ids));
      if (ids.some((id) => id === undefined)) throw invalidParameter(doc.title);
      return [...new Set(ids as number[])];
    }),

  /** Another spelling of a declaration that reads it through its `aliases`: a report row, read there. */
  alias: (key: string, doc: ParamDoc): ParamSpec<undefined> => spec(key, doc, () => undefined),

  /** A token such as a language tag: trimmed, lower-cased, empty means absent; 422 `title` unless it matches. */
  token: (key: string, doc: ParamDoc & { pattern: RegExp; title: string }): ParamSpec<string | undefined> =>
    spec(key, doc, (params) => {
      const value = lastValue(params, key)?.trim().toLowerCase();
      if (value === undefined || value === '') return undefined;
      if (!doc.pattern.test(value)) throw invalidParameter(doc.title);
      return value;
    }),

  /** `page`, 1-based (parsePage). */
  page: (doc: ParamDoc): ParamSpec<number> => spec('page', doc, parsePage),

  /** `names[]` of a metric-data request: 1 to 100 names (parseMetricNames). */
  metricNames: (doc: ParamDoc, aliases: readonly string[] = []): ParamSpec<string[]> =>
    spec(aliases.length > 0 ? ['names[]', ...aliases].join(' / ') : 'names[]', doc, (params) => parseMetricNames(params, aliases)),

  /** Every value of an array parameter, in order, without empties and repeats (distinctValues). */
  values: (key: string, doc: ParamDoc): ParamSpec<string[]> => spec(`${key}[]`, doc, (params) => distinctValues(params, key)),

  /** A v2 parameter the gateway cannot honour: sending it at all is refused with 422 `title`. */
  unsupported: (key: string, title: string, note: string): ParamSpec<undefined> =>
    spec(key, { fidelity: 'unsupported', note }, (params) => {
      if (params.has(key)) throw invalidParameter(title);
      return undefined;
    }),

  /** A v2 parameter accepted and ignored, whatever its value. */
  ignored: (key: string, doc: ParamDoc): ParamSpec<undefined> => spec(key, doc, () => undefined),

  /**
   * A field of a write's request body (JSON, XML or form), which the mapping's plan validates
   * with the body: listed for the report, read from no query parameter.
   */
  bodyField: (name: string, doc: ParamDoc): ParamSpec<undefined> => spec(name, doc, () => undefined),
};

/** The parsed request of a set of declarations: one property per declaration, typed by it. */
export type ParsedParams<S extends Record<string, ParamSpec<unknown>>> = { [K in keyof S]: S[K] extends ParamSpec<infer T> ? T : never };

export interface ParamSchema<T> {
  /** Validates and coerces the v2 parameters; throws V2Error (422) on bad input. */
  parse(params: V2Params): T;
  /** The report's parameter rows, one per declaration, in declaration order. */
  notes(): ParameterNote[];
}

export function defineParams<S extends Record<string, ParamSpec<unknown>>>(specs: S): ParamSchema<ParsedParams<S>> {
  const entries = Object.entries(specs);
  return {
    parse(params) {
      const parsed: Record<string, unknown> = {};
      for (const [name, declared] of entries) parsed[name] = declared.read(params);
      // The properties are exactly those of S, each read by its own declaration.
      return parsed as ParsedParams<S>;
    },
    notes: () => entries.map(([, declared]) => ({ ...declared.doc })),
  };
}

/** A route that reads no parameters. */
export const NO_PARAMS: ParamSchema<Record<string, never>> = defineParams({});
