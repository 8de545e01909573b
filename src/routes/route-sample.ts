import type { ReadSample, SampleJson, WriteSample } from './mapping-base.ts';

/**
 * A route's sample (ReadSample, WriteSample of mapping-base.ts) filled with the values a tool's
 * fixtures found: the probe's (src/probe/routes.ts) and the cost table's (scripts/compat-costs.ts).
 */

/** Sample values by name; undefined for one the fixtures did not find. A name absent is no sample value at all. */
export type SampleValues = Readonly<Record<string, string | number | undefined>>;

/** The first placeholder the values lack: its sample value, and the path or query parameter it fills. */
export interface MissingValue {
  value: string;
  where: 'path' | 'query';
  parameter: string;
}

const PLACEHOLDER = /\{([a-z_]+)\}/g;

/** `text` with each placeholder's value, encoded; the first value missing instead, if any. A name that is no sample value is the mapping's mistake: thrown. */
function fill(text: string, values: SampleValues): { text: string } | { missing: string } {
  let missing: string | undefined;
  const filled = text.replace(PLACEHOLDER, (_whole, name: string) => {
    if (!Object.hasOwn(values, name)) throw new Error(`{${name}} in a sample (or a path parameter no sample names) is no sample value: ${Object.keys(values).join(', ')}`);
    const value = values[name];
    if (value === undefined) missing ??= name;
    return encodeURIComponent(String(value ?? ''));
  });
  return missing === undefined ? { text: filled } : { missing };
}

/** A query (or form body) of `name=value` pairs, filled; or the first parameter whose value is missing. */
export function fillQuery(query: string, values: SampleValues): string | MissingValue {
  const pairs: string[] = [];
  for (const pair of query.split('&')) {
    const filled = fill(pair, values);
    if ('missing' in filled) return { value: filled.missing, where: 'query', parameter: pair.split('=')[0] ?? pair };
    pairs.push(filled.text);
  }
  return pairs.join('&');
}

/**
 * The path and query of a route's sample: each path parameter the sample's `path` template or
 * the value of its own name, `{format}` the format, then the sample's query; or the first value
 * missing.
 */
export function samplePath(route: string, sample: ReadSample | WriteSample | undefined, values: SampleValues, format = 'json'): string | MissingValue {
  let missing: MissingValue | undefined;
  const path = route.replace(PLACEHOLDER, (_whole, parameter: string) => {
    if (parameter === 'format') return format;
    const filled = fill(sample?.path?.[parameter] ?? `{${parameter}}`, values);
    if ('missing' in filled) {
      missing ??= { value: filled.missing, where: 'path', parameter };
      return '';
    }
    return filled.text;
  });
  if (missing !== undefined) return missing;
  if (sample?.query === undefined) return path;
  const query = fillQuery(sample.query, values);
  return typeof query === 'string' ? `${path}?${query}` : query;
}

/** A JSON body's placeholders filled: a string that is one placeholder is the value itself (an id stays a number). A value missing is thrown: a write's fixtures find every one. */
export function fillJson(body: SampleJson, values: SampleValues): unknown {
  if (typeof body === 'string') {
    const valueOf = (name: string): string | number => {
      const value = fill(`{${name}}`, values);
      if ('missing' in value) throw new Error(`a sample body names {${name}}, which the fixtures found no value for`);
      return values[name] as string | number;
    };
    const whole = /^\{([a-z_]+)\}$/.exec(body)?.[1];
    return whole === undefined ? body.replace(PLACEHOLDER, (_whole, name: string) => String(valueOf(name))) : valueOf(whole);
  }
  if (Array.isArray(body)) return body.map((item: SampleJson) => fillJson(item, values));
  if (body !== null && typeof body === 'object') return Object.fromEntries(Object.entries(body).map(([key, item]) => [key, fillJson(item, values)]));
  return body;
}
