import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { V2Error } from '../../src/v2/errors.ts';
import { LabelTitles, MAX_LABEL_APPLICATIONS, aggregateLabels, isLabelTagKey, labelKeyText, parseLabelCreate, parseLabelDelete, parseLabelKey } from './label-rules.ts';
import { parseRequestBody } from '../../src/v2/request-body.ts';

/** The label rules (mappings/labels/label-rules.ts): the key, the bodies, the aggregation. */
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
    expect(parseLabelCreate({ label: { category: 'T', name: 'D', links: { applications: '3, 4' } } }, 'form').applications).toEqual([3, 4]);
    expect(parseLabelCreate({ label: { category: 'T', name: 'D', links: { applications: '5' } } }, 'xml').applications).toEqual([5]);
    expect(parseLabelCreate({ label: { category: 'T', name: 7 } }).applications).toEqual([]);
    expect(() => parseLabelCreate({ label: { category: 'T', name: 'D', links: { applications: [0] } } })).toThrow(V2Error);
    expect(parseLabelDelete({})).toEqual({ applications: undefined });
  });

  it('reads the Rails XML list rule for XML only: in JSON applications must be an array', () => {
    const body = (applications: unknown) => ({ label: { category: 'T', name: 'D', links: { applications } } });
    const refusal = (fn: () => unknown): { status: number; title: string } | undefined => {
      try {
        fn();
        return undefined;
      } catch (error) {
        return { status: (error as V2Error).status, title: (error as V2Error).message };
      }
    };
    // `<applications type="array"><application>1</application><application>2</application></applications>`
    expect(parseLabelCreate(body({ application: ['1', '2'] }), 'xml').applications).toEqual([1, 2]);
    expect(parseLabelCreate(body({ x: 1 }), 'xml').applications).toEqual([1]);
    for (const applications of [{ x: 1 }, { application: [1, 2] }, 1, '1,2']) {
      expect(refusal(() => parseLabelCreate(body(applications), 'json')), JSON.stringify(applications)).toEqual({ status: 422, title: LabelTitles.badApplications });
      expect(refusal(() => parseLabelDelete(body(applications), 'json')), JSON.stringify(applications)).toEqual({ status: 422, title: LabelTitles.badApplications });
    }
    // A form has no list element either: `applications[x]=1`.
    expect(refusal(() => parseLabelCreate(body({ x: '1' }), 'form'))).toEqual({ status: 422, title: LabelTitles.badApplications });
  });

  it('dedupes ids and stops at the first id past the limit (the rest is never read)', () => {
    const ids = Array.from({ length: MAX_LABEL_APPLICATIONS }, (_, i) => 1000 + i);
    const body = (applications: unknown) => ({ label: { category: 'T', name: 'D', links: { applications } } });
    // Repeats do not count towards the limit.
    expect(parseLabelCreate(body([...ids, ...ids, ...ids])).applications).toEqual(ids);
    // One more distinct id is too many, whatever follows it: the list is not read further.
    let readPast = 0;
    const list = [...ids, 99, 'not an id'];
    const counted = new Proxy(list, {
      get(target, key, receiver) {
        if (typeof key === 'string' && /^[0-9]+$/.test(key) && Number(key) > ids.length) readPast++;
        return Reflect.get(target, key, receiver) as unknown;
      },
    });
    expect(() => parseLabelCreate(body(counted))).toThrow(LabelTitles.tooManyApplications);
    expect(readPast).toBe(0);
    expect(() => parseLabelDelete(body(counted))).toThrow(LabelTitles.tooManyApplications);
    // Comma-separated text (forms, XML) stops the same way, before a bad piece further on.
    expect(() => parseLabelCreate(body(`${[...ids, 99].join(',')},x,${'1,'.repeat(100_000)}1`), 'form')).toThrow(LabelTitles.tooManyApplications);
    // Servers: the first one is refused.
    expect(() => parseLabelCreate({ label: { category: 'T', name: 'D', links: { applications: [1], servers: [1, 'x'] } } })).toThrow(LabelTitles.servers);
    expect(MAX_LABEL_APPLICATIONS).toBe(25);
    expect(LabelTitles.tooManyApplications).toContain('further requests');
  });

  it('reads a long form list of `[]` values in order, and refuses a key that is both a value and a list', () => {
    const count = 50_000;
    const form = 'label[category]=A&label[name]=B&' + Array.from({ length: count }, (_, i) => `label[links][applications][]=${i + 1}`).join('&');
    const parsed = parseRequestBody('application/x-www-form-urlencoded', form) as { label: { links: { applications: string[] } } };
    expect(parsed.label.links.applications).toHaveLength(count);
    expect(parsed.label.links.applications.slice(0, 3)).toEqual(['1', '2', '3']);
    expect(parsed.label.links.applications.at(-1)).toBe(String(count));
    // And the labels rule stops after 26 of them.
    expect(() => parseLabelCreate(parsed, 'form')).toThrow(LabelTitles.tooManyApplications);
    const refused = (text: string): unknown => {
      try {
        return parseRequestBody('application/x-www-form-urlencoded', text);
      } catch (error) {
        return { status: (error as V2Error).status, title: (error as V2Error).message };
      }
    };
    const bad = { status: 400, title: 'The request body is not valid form data' };
    // `applications=A&applications[]=B` used to drop A silently.
    expect(refused('label[links][applications]=1&label[links][applications][]=2')).toEqual(bad);
    expect(refused('label[links][applications][]=1&label[links][applications]=2')).toEqual(bad);
    expect(refused('a[]=1&a[]=2')).toEqual({ a: ['1', '2'] });
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
