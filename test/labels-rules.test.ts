import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { V2Error } from '../src/v2/errors.ts';
import { aggregateLabels, isLabelTagKey, labelKeyText, parseLabelCreate, parseLabelDelete, parseLabelKey } from '../src/v2/labels.ts';

/** The label rules both faces share (src/v2/labels.ts): the key, the bodies, the aggregation. */
describe('label rules', () => {
  it('a label key round-trips through the path, percent-encoded', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1 }).filter((c) => !c.includes(':')),
        fc.string({ minLength: 1 }),
        (category, name) => {
          expect(parseLabelKey(encodeURIComponent(labelKeyText({ category, name })))).toEqual({ category, name });
        },
      ),
    );
  });

  it('a path that names no label is undefined, never a throw', () => {
    fc.assert(
      fc.property(fc.string(), (raw) => {
        const parsed = parseLabelKey(raw);
        if (parsed) expect(parsed.category.length).toBeGreaterThan(0);
      }),
    );
    for (const raw of ['', 'NoColon', ':x', 'x:', '%E0%A4%A', undefined]) expect(parseLabelKey(raw)).toBeUndefined();
  });

  it('any body is a label or a v2 error (4xx), never a crash', () => {
    fc.assert(
      fc.property(fc.jsonValue(), fc.jsonValue(), (body, label) => {
        for (const input of [body, { label }, { label: { category: label, name: 'n', links: { applications: label } } }]) {
          for (const parse of [parseLabelCreate, parseLabelDelete]) {
            try {
              parse(input);
            } catch (error) {
              expect(error).toBeInstanceOf(V2Error);
              expect((error as V2Error).status).toBeLessThan(500);
            }
          }
        }
      }),
    );
  });

  it('reads applications as v2 clients send them', () => {
    expect(parseLabelCreate({ label: { category: ' Team ', name: 'Data', links: { applications: [1, '2', 1] } } })).toEqual({ category: 'Team', name: 'Data', applications: [1, 2] });
    expect(parseLabelCreate({ label: { category: 'T', name: 'D', links: { applications: '3, 4' } } }).applications).toEqual([3, 4]);
    expect(parseLabelCreate({ label: { category: 'T', name: 7 } }).applications).toEqual([]);
    expect(() => parseLabelCreate({ label: { category: 'T', name: 'D', links: { applications: [0] } } })).toThrow(V2Error);
    expect(parseLabelDelete({})).toEqual({ applications: undefined });
  });

  it('keeps system tags out of labels, by exact key', () => {
    expect(isLabelTagKey('language')).toBe(false);
    expect(isLabelTagKey('account')).toBe(false);
    expect(isLabelTagKey('Language')).toBe(true);
    const labels = aggregateLabels([
      { id: 2, health: 'green', tags: [{ key: 'language', values: ['java'] }, { key: 'Team', values: ['B', 'A'] }] },
      { id: 1, health: 'red', tags: [{ key: 'Team', values: ['A'] }, { key: 'account', values: ['x'] }] },
    ]);
    expect(labels.map((label) => label.key)).toEqual(['Team:A', 'Team:B']);
    expect(labels[0]).toMatchObject({ links: { applications: [1, 2], servers: [] }, application_health_status: { green: [2], red: [1], orange: [], gray: [] } });
  });
});
