import { invalidParameter } from './errors.ts';
import { distinctValues, lastValue, parseFlag, parseIdList, parseMetricNames, parsePage, parseText, type V2Params } from './params.ts';

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

  /** A boolean in the spellings Rails accepted; absent is false (parseFlag). */
  flag: (key: string, doc: ParamDoc): ParamSpec<boolean> => spec(key, doc, (params) => parseFlag(params, key)),

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
