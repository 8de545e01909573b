import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createRouteTable, type RouteEntry } from '../../src/v2/route-table.ts';

/** The reference: one anchored regex per template, as src/routes/v2-router.ts compile() builds it. */
function compile(template: string): RegExp {
  const source = template
    .split(/(\{[a-z_]+\})/)
    .map((part) => {
      const name = /^\{([a-z_]+)\}$/.exec(part)?.[1];
      if (name === undefined) return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      return name === 'format' ? '(?<format>[^./]+)' : `(?<${name}>[^/]+?)`;
    })
    .join('');
  return new RegExp(`^${source}$`);
}

function naive(entries: ReadonlyArray<RouteEntry<number>>, path: string) {
  const hits = entries.flatMap((entry) => {
    const found = compile(entry.template).exec(path);
    if (!found) return [];
    // A template without placeholders (`/deployments.xml`) matches with no groups object at all.
    const { format, ...params } = found.groups ?? {};
    return [{ value: entry.value, format, params }];
  });
  return hits.length === 0 ? undefined : hits;
}

const V2: Array<RouteEntry<string>> = [
  { template: '/v2/applications.{format}', methods: ['GET'], value: 'list' },
  { template: '/v2/applications/{id}.{format}', methods: ['GET'], value: 'show' },
  { template: '/v2/applications/{id}.{format}', methods: ['PUT', 'DELETE'], value: 'update' },
  { template: '/v2/applications/{id}/metrics/data.{format}', methods: ['GET', 'POST'], value: 'data' },
  { template: '/v2/applications/{id}/hosts/{host_id}/metrics/data.{format}', methods: ['GET'], value: 'host-data' },
  { template: '/v2/applications/{application_id}/deployments/{id}.{format}', methods: ['DELETE'], value: 'deployment' },
  { template: '/deployments.xml', methods: ['POST'], value: 'v0' },
];

describe('route table', () => {
  const table = createRouteTable(V2);

  it('matches literal, param and suffix segments, params raw', () => {
    expect(table.match('/v2/applications.json')).toEqual({
      format: 'json',
      allow: ['GET'],
      entries: [{ value: 'list', template: '/v2/applications.{format}', methods: ['GET'], params: {} }],
    });
    const hit = table.match('/v2/applications/12%2F3/hosts/h.1/metrics/data.xml');
    expect(hit?.format).toBe('xml');
    expect(hit?.entries.map((e) => [e.value, { ...e.params }])).toEqual([['host-data', { id: '12%2F3', host_id: 'h.1' }]]);
  });

  it('keeps every entry of one shape, in table order, with the union of methods', () => {
    const hit = table.match('/v2/applications/1.2.yaml');
    expect(hit?.format).toBe('yaml');
    expect(hit?.entries.map((e) => [e.value, e.params.id])).toEqual([
      ['show', '1.2'],
      ['update', '1.2'],
    ]);
    expect(hit?.allow).toEqual(['GET', 'PUT', 'DELETE']);
  });

  it('takes a literal extension as the format, and nothing else', () => {
    expect(table.match('/deployments.xml')?.entries.map((e) => e.value)).toEqual(['v0']);
    expect(table.match('/deployments.json')).toBeUndefined();
  });

  it('answers undefined when nothing matches', () => {
    for (const path of ['', '/', '/v2/applications', '/v2/applications.', '/v2/applications/.json', '/v2/applications//metrics/data.json', '/v2/applications/1/metrics/data/x.json']) {
      expect(table.match(path), path).toBeUndefined();
    }
  });

  it('validates templates when built', () => {
    const bad = ['v2/x.{format}', '/v2/x', '/v2/{Id}.{format}', '/v2/app-{id}.{format}', '/v2/{id/x.{format}', '/v2//x.{format}', '/v2/{format}/x.{format}', '/v2/{id}/{id}.{format}', '/v2/x.{id}'];
    for (const template of bad) {
      expect(() => createRouteTable([{ template, methods: ['GET'], value: 0 }]), template).toThrow(/Invalid route template/);
    }
    expect(() => createRouteTable([{ template: '/v2/x.{format}', methods: [], value: 0 }])).toThrow(/no methods/);
  });

  it('gives params a null prototype', () => {
    const hit = createRouteTable([{ template: '/v2/{__proto__}.{format}', methods: ['GET'], value: 0 }]).match('/v2/x.json');
    expect(hit?.entries[0]?.params.__proto__).toBe('x');
  });
});

// Small alphabets, so generated paths often hit generated templates.
const word = fc.constantFrom('a', 'b', 'ab', 'a.b', 'v2');
const paramName = fc.constantFrom('id', 'host_id', 'x');
const templateSegment = fc.oneof(word, paramName.map((n) => `{${n}}`));
const template = fc
  .tuple(fc.array(templateSegment, { minLength: 0, maxLength: 3 }), templateSegment, fc.constantFrom('.{format}', '.xml', '.{format}'))
  .filter(([middle, last]) => {
    const names = [...middle, last].filter((s) => s.startsWith('{'));
    return new Set(names).size === names.length;
  })
  .map(([middle, last, suffix]) => `/${[...middle, `${last}${suffix}`].join('/')}`);
const pathSegment = fc.oneof(word, fc.constantFrom('', '.', '1', '1.2', 'a.', '.b', '%2F', '__proto__'));
const path = fc
  .tuple(fc.array(pathSegment, { minLength: 0, maxLength: 4 }), fc.constantFrom('.json', '.xml', '.yaml', '', '.', '.a.b'))
  .map(([segments, suffix]) => `/${segments.join('/')}${suffix}`);

describe('route table against one regex per template', () => {
  it('finds the same entries, params and format', () => {
    fc.assert(
      fc.property(fc.array(template, { minLength: 1, maxLength: 6 }), fc.array(path, { minLength: 1, maxLength: 8 }), (templates, paths) => {
        const entries = templates.map((t, value) => ({ template: t, methods: ['GET'], value }));
        const table = createRouteTable(entries);
        for (const p of paths) {
          const expected = naive(entries, p);
          const got = table.match(p);
          expect(got?.entries.map((e) => ({ value: e.value, params: { ...e.params } })), p).toEqual(
            expected?.map(({ value, params }) => ({ value, params: { ...params } })),
          );
          // A template with a literal extension has no format group; the path's suffix is it.
          for (const hit of expected ?? []) if (hit.format !== undefined) expect(got?.format).toBe(hit.format);
        }
      }),
      { numRuns: 2000 },
    );
  });
});
