import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ancestorPaths, diffValues, storedValue } from '../../src/compare/diff.ts';
import type { JsonValue } from '../../src/v2/xml.ts';

type JsonObject = { [key: string]: JsonValue };

// A v2-like body: objects, and lists of objects that carry unique ids (as v2 lists do).
const KEYS = ['name', 'value', 'call_count', 'links', 'summary', 'health_status', 'language', 'a', 'b'] as const;
const primitive = fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.string({ maxLength: 12 }), fc.boolean(), fc.constant(null));
const { node: v2Body } = fc.letrec<{ node: JsonValue; object: JsonObject; list: JsonObject[] }>((tie) => ({
  node: fc.oneof({ depthSize: 'small', withCrossShrink: true }, primitive, tie('object'), tie('list')),
  object: fc.dictionary(fc.constantFrom(...KEYS), tie('node'), { maxKeys: 5 }),
  list: fc
    .uniqueArray(fc.nat(10_000), { maxLength: 5 })
    .chain((ids) => fc.tuple(...ids.map((id) => tie('object').map((o): JsonObject => ({ ...o, id }))))),
}));
const v2Root = fc.dictionary(fc.constantFrom(...KEYS), v2Body, { minKeys: 1, maxKeys: 4 });

/** Every leaf (a primitive not under a list's `id`) and every object key, with its expected concrete path. */
interface Place {
  path: string;
  parent: JsonObject;
  key: string;
  leaf: boolean;
}

function places(value: JsonValue, path: string, out: Place[]): Place[] {
  if (Array.isArray(value)) {
    for (const item of value as JsonObject[]) {
      const itemPath = `${path}[id=${String(item.id)}]`;
      for (const key of Object.keys(item)) {
        if (key === 'id') continue;
        out.push({ path: `${itemPath}.${key}`, parent: item, key, leaf: !isContainer(item[key]) });
        places(item[key] as JsonValue, `${itemPath}.${key}`, out);
      }
    }
  } else if (value !== null && typeof value === 'object') {
    for (const key of Object.keys(value)) {
      const childPath = path === '' ? key : `${path}.${key}`;
      out.push({ path: childPath, parent: value, key, leaf: !isContainer(value[key]) });
      places(value[key] as JsonValue, childPath, out);
    }
  }
  return out;
}

function isContainer(value: JsonValue | undefined): boolean {
  return value !== null && typeof value === 'object';
}

describe('diffValues', () => {
  it('finds nothing between a value and a copy of itself', () => {
    fc.assert(
      fc.property(fc.jsonValue(), (value) => {
        expect(diffValues(value as JsonValue, structuredClone(value) as JsonValue)).toEqual([]);
      }),
    );
  });

  it('ignores the order of id lists and of primitive lists', () => {
    const body = fc
      .uniqueArray(fc.record({ id: fc.nat(), name: fc.string(), tags: fc.array(fc.integer({ min: 0, max: 3 }), { maxLength: 6 }) }), { selector: (a) => a.id, maxLength: 30 })
      .chain((apps) =>
        fc.tuple(
          fc.constant(apps),
          fc.shuffledSubarray(apps, { minLength: apps.length }).chain((shuffled) =>
            fc.tuple(...shuffled.map((app) => fc.shuffledSubarray(app.tags, { minLength: app.tags.length }).map((tags) => ({ ...app, tags })))),
          ),
        ),
      );
    fc.assert(
      fc.property(body, ([apps, permuted]) => {
        expect(diffValues({ applications: apps }, { applications: permuted })).toEqual([]);
      }),
    );
  });

  it('reports a changed leaf at exactly its path, as a value or type difference', () => {
    const scenario = v2Root.chain((root) => {
      const leaves = places(root, '', []).filter((p) => p.leaf);
      if (leaves.length === 0) return fc.constant(undefined);
      return fc.tuple(fc.constant(root), fc.constantFrom(...leaves.map((_, i) => i)), fc.boolean());
    });
    fc.assert(
      fc.property(scenario, (picked) => {
        fc.pre(picked !== undefined);
        const [root, index, changeType] = picked as [JsonObject, number, boolean];
        const translated = structuredClone(root);
        const leaf = places(translated, '', []).filter((p) => p.leaf)[index] as Place;
        const before = leaf.parent[leaf.key] as JsonValue;
        let kind: 'value' | 'type';
        if (changeType || before === null) {
          leaf.parent[leaf.key] = typeof before === 'string' ? 7 : 'changed';
          kind = 'type';
        } else {
          leaf.parent[leaf.key] = typeof before === 'number' ? (before === 1 ? 2 : 1) : typeof before === 'string' ? `${before}x` : !before;
          kind = 'value';
        }
        const differences = diffValues(root, translated);
        expect(differences.map((d) => [d.path, d.kind])).toEqual([[leaf.path, kind]]);
        expect(differences[0]?.legacy).toEqual(storedValue(before));
      }),
    );
  });

  it('reports a deleted key as missing at its path', () => {
    const scenario = v2Root.chain((root) => {
      const keys = places(root, '', []);
      return fc.tuple(fc.constant(root), fc.constantFrom(...keys.map((_, i) => i)));
    });
    fc.assert(
      fc.property(scenario, ([root, index]) => {
        const translated = structuredClone(root);
        const place = places(translated, '', [])[index] as Place;
        delete place.parent[place.key];
        const differences = diffValues(root, translated);
        expect(differences.map((d) => [d.path, d.kind])).toEqual([[place.path, 'missing']]);
      }),
    );
  });

  it('spells patterns with the selectors dropped', () => {
    const legacy = { applications: [{ id: 5, name: 'a', application_summary: { response_time: 1 } }] };
    const translated = { applications: [{ id: 5, name: 'b', application_summary: { response_time: 1 } }], links: {} };
    expect(diffValues(legacy, translated)).toEqual([
      { path: 'applications[id=5].name', pattern: 'applications[].name', kind: 'value', legacy: 'a', translated: 'b' },
      { path: 'links', pattern: 'links', kind: 'extra', translated: '{}' },
    ]);
  });

  it('matches list items by id, else name, else from, else position', () => {
    const byName = diffValues({ metrics: [{ name: 'A', v: 1 }, { name: 'B', v: 2 }] }, { metrics: [{ name: 'B', v: 3 }, { name: 'A', v: 1 }] });
    expect(byName.map((d) => d.path)).toEqual(['metrics[name=B].v']);
    const byFrom = diffValues(
      { timeslices: [{ from: '2024-01-01T00:00:00+00:00', v: 1 }, { from: '2024-01-01T00:01:00+00:00', v: 2 }] },
      { timeslices: [{ from: '2024-01-01T00:01:00+00:00', v: 2 }, { from: '2024-01-01T00:00:00+00:00', v: 9 }] },
    );
    expect(byFrom.map((d) => d.path)).toEqual(['timeslices[from=2024-01-01T00:00:00+00:00].v']);
    // Duplicate ids: the id is no key, so position decides.
    const byPosition = diffValues({ items: [{ id: 1, v: 1 }, { id: 1, v: 2 }] }, { items: [{ id: 1, v: 1 }, { id: 1, v: 3 }, { id: 2 }] });
    expect(byPosition.map((d) => [d.path, d.kind])).toEqual([
      ['items', 'length'],
      ['items[1].v', 'value'],
      ['items[2]', 'extra'],
    ]);
    // A name that would not read plainly in a path is quoted.
    expect(diffValues({ m: [{ name: 'a.b[c]', v: 1 }] }, { m: [{ name: 'a.b[c]', v: 2 }] })[0]?.path).toBe('m[name="a.b[c]"].v');
  });

  it('pairs list items by the next field when no id is shared (ids the gateway derives never equal v2 own)', () => {
    // Hosts: v2's row ids against the gateway's derived ids, in each side's id order: paired by host name.
    const hosts = diffValues(
      { application_hosts: [{ id: 4000002, host: 'web-1', throughput: 5 }, { id: 4000003, host: 'web-2', throughput: 7 }] },
      { application_hosts: [{ id: 352554187, host: 'web-2', throughput: 7 }, { id: 91, host: 'web-1', throughput: 6 }] },
    );
    expect(hosts.map((d) => [d.path, d.kind])).toEqual([
      ['application_hosts[host=web-1].id', 'value'],
      ['application_hosts[host=web-1].throughput', 'value'],
      ['application_hosts[host=web-2].id', 'value'],
    ]);
    // Deployments: nothing else to pair by, so position (both newest first); one shared id keeps id pairing.
    expect(diffValues({ d: [{ id: 1, user: 'a' }] }, { d: [{ id: 2, user: 'b' }] }).map((d) => d.path)).toEqual(['d[0].id', 'd[0].user']);
    expect(diffValues({ d: [{ id: 1 }, { id: 2 }] }, { d: [{ id: 2 }, { id: 3 }] }).map((d) => [d.path, d.kind])).toEqual([
      ['d[id=1]', 'missing'],
      ['d[id=3]', 'extra'],
    ]);
  });

  it('reports missing and extra list items and the length', () => {
    const differences = diffValues({ applications: [{ id: 1 }, { id: 2 }, { id: 3 }] }, { applications: [{ id: 3 }, { id: 1 }, { id: 4 }, { id: 5 }] });
    expect(differences.map((d) => [d.path, d.pattern, d.kind])).toEqual([
      ['applications', 'applications', 'length'],
      ['applications[id=2]', 'applications[]', 'missing'],
      ['applications[id=4]', 'applications[]', 'extra'],
      ['applications[id=5]', 'applications[]', 'extra'],
    ]);
    expect(differences[0]).toMatchObject({ legacy: 3, translated: 4 });
  });

  it('compares primitive lists as multisets', () => {
    const differences = diffValues({ links: { servers: [1, 2, 2, 3] } }, { links: { servers: [3, 2, 1, 4] } });
    expect(differences.map((d) => [d.path, d.pattern, d.kind, d.legacy ?? d.translated])).toEqual([
      ['links.servers[=2]', 'links.servers[]', 'missing', 2],
      ['links.servers[=4]', 'links.servers[]', 'extra', 4],
    ]);
    // 5 and "5" are different elements.
    expect(diffValues([5], ['5']).map((d) => [d.path, d.kind])).toEqual([
      ['[=5]', 'missing'],
      ['[=5]', 'extra'],
    ]);
  });

  it('reports a type difference where the kinds differ, without descending', () => {
    expect(diffValues({ a: { b: 1 } }, { a: null })).toEqual([{ path: 'a', pattern: 'a', kind: 'type', legacy: '{"b":1}', translated: null }]);
    expect(diffValues({ a: [] }, { a: {} }).map((d) => d.kind)).toEqual(['type']);
    expect(diffValues(1, '1')).toEqual([{ path: '', pattern: '', kind: 'type', legacy: 1, translated: '1' }]);
  });

  it('handles big lists (index maps, not pairwise search)', () => {
    const apps = Array.from({ length: 50_000 }, (_, i) => ({ id: i, name: `app ${i}`, reporting: i % 2 === 0 }));
    const reversed = [...apps].reverse().map((a) => (a.id === 123 ? { ...a, name: 'renamed' } : a));
    expect(diffValues({ applications: apps }, { applications: reversed }).map((d) => d.path)).toEqual(['applications[id=123].name']);
  });
});

describe('stored values', () => {
  it('cuts long strings and serialises containers to at most 200 characters', () => {
    const long = 'x'.repeat(500);
    expect(storedValue(long)).toBe(`${'x'.repeat(200)}…`);
    const big = storedValue({ items: Array.from({ length: 10_000 }, (_, i) => i) }) as string;
    expect(big.length).toBe(201);
    expect(big.startsWith('{"items":[0,1,2')).toBe(true);
    expect(storedValue([1, 'a', null])).toBe('[1,"a",null]');
    expect(storedValue(3.5)).toBe(3.5);
  });

  it('never keeps an API key', () => {
    const [difference] = diffValues({ note: 'a' }, { note: 'NRAK-ABCDEF0123456789ABCDEF01234' });
    expect(JSON.stringify(difference)).not.toMatch(/NRAK-/);
    expect(storedValue({ k: 'NRAA-XYZ123' })).toBe('{"k":"[redacted]"}');
  });
});

describe('ancestorPaths', () => {
  it('lists the nodes above a path', () => {
    expect(ancestorPaths('a[id=5].b.c')).toEqual(['', 'a', 'a[id=5]', 'a[id=5].b']);
    expect(ancestorPaths('m[name="x.y]"].v')).toEqual(['', 'm', 'm[name="x.y]"]']);
    expect(ancestorPaths('[0].name')).toEqual(['', '[0]']);
    expect(ancestorPaths('(link).next')).toEqual(['(link)']);
    expect(ancestorPaths('(status)')).toEqual([]);
    expect(ancestorPaths('')).toEqual([]);
  });
});
