import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import applicationsList, { applicationListParams } from '../../mappings/applications/list.ts';
import metricData from '../../mappings/applications/metric-data.ts';
import metricNames from '../../mappings/applications/metric-names.ts';
import applicationsShow from '../../mappings/applications/show.ts';
import { fullReport } from '../../src/routes/compat-report.ts';
import { methodsOf, type Mapping } from '../../src/routes/mapping.ts';
import { loadMappings } from '../../src/routes/mappings-loader.ts';
import { MetricTitles, V2Error } from '../../src/v2/errors.ts';
import { NO_PARAMS, defineParams, param } from '../../src/v2/param-schema.ts';
import { parseV2Params } from '../../src/v2/params.ts';

/** The title of the V2Error `run` throws (fails the test when it throws something else or nothing). */
function refusal(run: () => unknown): { status: number; title: string } {
  try {
    run();
  } catch (error) {
    if (error instanceof V2Error) return { status: error.status, title: error.title };
    throw error;
  }
  throw new Error('expected a V2Error');
}

const listOf = (query: string) => applicationListParams.parse(parseV2Params(query));

describe('applications.list parameters', () => {
  it('reads nothing into an empty request', () => {
    expect(listOf('')).toEqual({ host: undefined, name: undefined, ids: undefined, language: undefined, excludeLinks: false, page: 1 });
  });

  it.each([
    ['filter[ids]=1,2', [1, 2]],
    ['filter%5Bids%5D=1%2C2', [1, 2]],
    ['filter[ids][]=3&filter[ids][]=4,5', [3, 4, 5]],
    ['filter[ids]=7,,7, 8', [7, 8]],
    ['filter[id]=9', [9]],
    ['filter[ids]=1,2&filter[id]=2&filter[id]=3', [1, 2, 3]],
    ['filter[ids]=', []],
  ])('filter[ids] as %s', (query, ids) => {
    expect(listOf(query).ids).toEqual(ids);
  });

  it('reads filter[name] raw or encoded, the last one winning, empty as absent', () => {
    expect(listOf('filter%5Bname%5D=tf_').name).toBe('tf_');
    expect(listOf('filter[name]=a&filter[name]=b+c').name).toBe('b c');
    expect(listOf('filter[name]=').name).toBeUndefined();
  });

  it('trims and lower-cases filter[language]', () => {
    expect(listOf('filter[language]=+Java+').language).toBe('java');
    expect(listOf('filter[language]=').language).toBeUndefined();
  });

  it.each([['web-1', 'web-1'], ['WEB', 'WEB'], ['', undefined], ["%_'", "%_'"]])('filter[host]=%s', (value, host) => {
    expect(listOf(`filter[host]=${encodeURIComponent(value)}`).host).toBe(host);
  });

  it.each([
    ['true', true],
    ['ON', true],
    ['t', true],
    ['0', false],
    ['', false],
    ['no', false],
  ])('exclude_links=%s', (value, flag) => {
    expect(listOf(`exclude_links=${value}`).excludeLinks).toBe(flag);
  });

  it.each([
    ['filter[host]=a%00b', 'Invalid parameter filter[host]: expected text of at most 255 characters without control characters'],
    [`filter[host]=${'h'.repeat(256)}`, 'Invalid parameter filter[host]: expected text of at most 255 characters without control characters'],
    ['filter[ids]=abc', 'Invalid parameter filter[ids]: expected a comma-separated list of positive integer ids'],
    ['filter[id]=0', 'Invalid parameter filter[id]: expected a comma-separated list of positive integer ids'],
    [`filter[ids]=${Array.from({ length: 1001 }, (_, i) => i + 1).join(',')}`, 'Invalid parameter filter[ids]: at most 1000 ids are accepted'],
    ['filter[name]=a%01b', 'Invalid parameter filter[name]: expected text of at most 255 characters without control characters'],
    [`filter[name]=${'x'.repeat(256)}`, 'Invalid parameter filter[name]: expected text of at most 255 characters without control characters'],
    ['filter[language]=c%2B%2B', 'Invalid parameter filter[language]: expected an agent language such as java or python'],
    ['exclude_links=maybe', 'Invalid parameter exclude_links: expected true or false'],
    ['page=0', 'Invalid parameter page: expected a whole number from 1 to 1000000'],
    // Declaration order is refusal order, as v2 checked them: filter[name], filter[host], filter[ids], ..., page last.
    ['page=x&filter[ids]=x&filter[host]=h', 'Invalid parameter filter[ids]: expected a comma-separated list of positive integer ids'],
    ['filter[ids]=x&filter[host]=%01&filter[name]=%02', 'Invalid parameter filter[name]: expected text of at most 255 characters without control characters'],
    ['filter[ids]=x&filter[host]=%01', 'Invalid parameter filter[host]: expected text of at most 255 characters without control characters'],
    ['page=x&filter[ids]=x', 'Invalid parameter filter[ids]: expected a comma-separated list of positive integer ids'],
  ])('refuses %s with 422', (query, title) => {
    expect(refusal(() => listOf(query))).toEqual({ status: 422, title });
  });
});

describe('metric parameters', () => {
  const dataOf = (query: string, form?: string) => metricData.parameters.parse(parseV2Params(query, form));

  it.each(['names[]=a&names[]=b', 'names%5B%5D=a&names%5B%5D=b', 'names=a&names=b', 'names[0]=a&names[1]=b&names[2]=a&names[3]='])('names as %s', (query) => {
    expect(dataOf(query).names).toEqual(['a', 'b']);
  });

  it('reads values, flags and the window parameters as sent, query string then form body', () => {
    expect(dataOf('names[]=a&values[]=min&values=max&summarize=true', 'from=2026-01-01T10:00:00+00:00&period=60&to=x')).toEqual({
      names: ['a'],
      values: ['min', 'max'],
      summarize: true,
      raw: false,
      from: '2026-01-01T10:00:00 00:00',
      to: 'x',
      period: '60',
    });
  });

  it.each([
    ['', MetricTitles.namesRequired],
    ['names[]=', MetricTitles.namesRequired],
    [Array.from({ length: 101 }, (_, i) => `names[]=m${i}`).join('&'), MetricTitles.tooManyNames],
    ['names[]=a&summarize=2', 'Invalid parameter summarize: expected true or false'],
    ['names[]=a&raw=x', 'Invalid parameter raw: expected true or false'],
  ])('refuses %s with 422', (query, title) => {
    expect(refusal(() => dataOf(query))).toEqual({ status: 422, title });
  });

  it('metrics.json reads page and name, and ignores cursor', () => {
    expect(metricNames.parameters.parse(parseV2Params('name=CPU&page=2&cursor=abc'))).toEqual({ page: 2, name: 'CPU', cursor: undefined });
    expect(refusal(() => metricNames.parameters.parse(parseV2Params('page=-1&name=%00')))).toEqual({
      status: 422,
      title: 'Invalid parameter page: expected a whole number from 1 to 1000000',
    });
  });
});

/** The parameter rows of one route's section of the full report. */
function reportRows(mappings: readonly Mapping[], mapping: Mapping): string[] {
  const report = fullReport(mappings).split('\n');
  const start = report.indexOf(`## ${methodsOf(mapping).join(', ')} ${mapping.route}`);
  if (start === -1) throw new Error(`no report section for ${mapping.id}`);
  const end = report.findIndex((line, index) => index > start && line.startsWith('## '));
  const section = report.slice(start, end === -1 ? undefined : end);
  const header = section.indexOf('| parameter | fidelity | note |');
  if (header === -1) return [];
  const rows: string[] = [];
  for (const line of section.slice(header + 2)) {
    if (!line.startsWith('|')) break;
    rows.push(line);
  }
  return rows;
}

describe('the compatibility report lists the declared parameters', () => {
  it('for every mapping, exactly its schema notes, in declaration order', async () => {
    const mappings = await loadMappings();
    for (const mapping of mappings) {
      const names = reportRows(mappings, mapping).map((row) => /^\| `([^`]*)`/.exec(row)?.[1]);
      expect(names, mapping.id).toEqual(mapping.parameters.notes().map((note) => note.name));
    }
  });

  it('shows a parameter added to a schema with no other edit, and none for an empty schema', () => {
    const extended: Mapping = {
      ...applicationsList,
      parameters: defineParams({
        // A list's schema must still declare page: the list runner reads it.
        page: param.page({ fidelity: 'exact', note: 'pages' }),
        sort: param.text('sort', { fidelity: 'approximate', note: 'a | new parameter' }),
      }),
    };
    expect(reportRows([extended], extended)).toEqual(['| `page` | exact | pages |', '| `sort` | approximate | a \\| new parameter |']);
    const bare: Mapping = { ...applicationsShow, parameters: NO_PARAMS };
    expect(reportRows([bare], bare)).toEqual([]);
  });
});

describe('parse never fails with anything but a v2 422', () => {
  it('for any query string and form body, on every mapping', async () => {
    const mappings = await loadMappings();
    // Keys the mappings read, in every spelling, plus arbitrary ones.
    const keys = mappings
      .flatMap((m) => m.parameters.notes().map((note) => note.name.replace(/\[\]$/, '')))
      .flatMap((key) => [key, `${key}[]`, `${key}[0]`, encodeURIComponent(key), 'filter[id]']);
    const key = fc.oneof(fc.constantFrom(...keys), fc.string());
    const value = fc.oneof(
      fc.string(),
      fc.constantFrom('', '0', '1', '-1', 'true', 'maybe', '1,2,,3', '99999999999999999', 'java', 'C++', '%00', '\u0001', 'x'.repeat(300)),
      fc.array(fc.integer({ min: 0, max: 2_000_000 }), { maxLength: 20 }).map((numbers) => numbers.join(',')),
    );
    const query = fc.array(fc.tuple(key, value), { maxLength: 12 }).map((pairs) => new URLSearchParams(pairs).toString());
    fc.assert(
      fc.property(fc.constantFrom(...mappings), query, fc.oneof(fc.constant(undefined), fc.string()), (mapping, text, form) => {
        try {
          mapping.parameters.parse(parseV2Params(text, form));
        } catch (error) {
          expect(error).toBeInstanceOf(V2Error);
          expect((error as V2Error).status).toBe(422);
        }
      }),
      { numRuns: 2000 },
    );
  });
});
