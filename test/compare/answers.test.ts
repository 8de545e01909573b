import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeAnswerBody, semanticLinks } from '../../src/compare/answer.ts';
import { MAX_DEPTH, MAX_KEPT_DIFFERENCES, compareAnswers, type DiffRules } from '../../src/compare/diff.ts';
import { parseThresholds } from '../../src/compare/thresholds.ts';
import type { AnswerSnapshot } from '../../src/compare/types.ts';
import { toXml, type JsonValue } from '../../src/v2/xml.ts';

const NO_RULES: DiffRules = { gapPatterns: [], thresholds: [] };

function json(body: JsonValue, extra: Partial<AnswerSnapshot> = {}): AnswerSnapshot {
  return { status: 200, contentType: 'application/json; charset=utf-8', body: JSON.stringify(body), link: null, ms: 1, ...extra };
}

function xml(body: { [key: string]: JsonValue }, extra: Partial<AnswerSnapshot> = {}): AnswerSnapshot {
  return { status: 200, contentType: 'application/xml; charset=utf-8', body: toXml(body), link: null, ms: 1, ...extra };
}

function metricData(callCount: number, averageResponseTime: number): JsonValue {
  return {
    metric_data: {
      from: '2024-01-01T00:00:00+00:00',
      to: '2024-01-01T00:30:00+00:00',
      metrics: [
        {
          name: 'HttpDispatcher',
          timeslices: [
            { from: '2024-01-01T00:00:00+00:00', to: '2024-01-01T00:30:00+00:00', values: { call_count: callCount, average_response_time: averageResponseTime } },
          ],
        },
      ],
    },
  };
}

const CALLS = 'metric_data.metrics[name=HttpDispatcher].timeslices[from=2024-01-01T00:00:00+00:00].values.call_count';

describe('compareAnswers: outcome and judging', () => {
  it('a second legacy answer changes nothing unless the first judgement found a mismatch (so it is only asked for then)', () => {
    // Small v2-like bodies: a list of apps whose fields the three answers may or may not share.
    const app = fc.record({ id: fc.integer({ min: 1, max: 4 }), name: fc.constantFrom('a', 'b'), score: fc.constantFrom(0.5, 0.52, 0.9), health_status: fc.constantFrom('green', 'gray') });
    const body = fc.record({ applications: fc.array(app, { maxLength: 4 }) });
    const status = fc.constantFrom(200, 200, 200, 404);
    const rules = fc.constantFrom<DiffRules>(NO_RULES, { gapPatterns: ['applications[].health_status'], thresholds: parseThresholds('applications[].score=rel:0.05') });
    fc.assert(
      fc.property(body, body, body, status, status, rules, (legacy, again, translated, legacyStatus, againStatus, diffRules) => {
        const sides = { legacy: json(legacy, { status: legacyStatus }), translated: json(translated), rules: diffRules };
        const alone = compareAnswers(sides);
        const withAgain = compareAnswers({ ...sides, legacyAgain: json(again, { status: againStatus }) });
        if (alone.outcome !== 'mismatch') expect(withAgain).toEqual(alone);
        else expect(['mismatch', 'noise']).toContain(withAgain.outcome);
      }),
      { numRuns: 500 },
    );
  });

  it('is a match when the answers agree', () => {
    const body = { applications: [{ id: 1, name: 'a' }, { id: 2, name: 'b' }] };
    const reordered = { applications: [{ name: 'b', id: 2 }, { id: 1, name: 'a' }] };
    expect(compareAnswers({ legacy: json(body), translated: json(reordered), rules: NO_RULES })).toEqual({ outcome: 'match', differences: [], total: 0, tally: [] });
  });

  it('calls a metric value that moved between the two legacy calls noise, not a mismatch', () => {
    const result = compareAnswers({
      legacy: json(metricData(100, 0.5)),
      legacyAgain: json(metricData(104, 0.5)),
      translated: json(metricData(103, 0.5)),
      rules: NO_RULES,
    });
    expect(result.outcome).toBe('noise');
    expect(result.differences).toEqual([
      { path: CALLS, pattern: 'metric_data.metrics[].timeslices[].values.call_count', kind: 'value', legacy: 100, translated: 103, verdict: 'noise' },
    ]);
    // Without the second legacy call the same difference is a mismatch.
    expect(compareAnswers({ legacy: json(metricData(100, 0.5)), translated: json(metricData(103, 0.5)), rules: NO_RULES }).outcome).toBe('mismatch');
  });

  it('noise never hides a structural or an outsized difference where the legacy value moves', () => {
    const moving = { legacy: json(metricData(100, 0.5)), legacyAgain: json(metricData(104, 0.5)), rules: NO_RULES };
    const verdictOf = (translated: JsonValue): string | undefined =>
      compareAnswers({ ...moving, translated: json(translated) }).differences.find((d) => d.path === CALLS)?.verdict;
    // A wrong type, a value off by orders of magnitude, and a dropped field stay mismatches.
    expect(verdictOf(JSON.parse(JSON.stringify(metricData(100, 0.5)).replace('"call_count":100', '"call_count":"100"')) as JsonValue)).toBe('mismatch');
    expect(verdictOf(metricData(5e9, 0.5))).toBe('mismatch');
    expect(verdictOf(metricData(160, 0.5))).toBe('mismatch');
    const dropped = JSON.parse(JSON.stringify(metricData(100, 0.5)).replace('"call_count":100,', '')) as JsonValue;
    expect(verdictOf(dropped)).toBe('mismatch');
    // Within ten times the legacy movement (here 4) it is noise; two reads that land close
    // together still leave 2 % of the value.
    expect(verdictOf(metricData(139, 0.5))).toBe('noise');
    expect(compareAnswers({ legacy: json(metricData(100, 0.5)), legacyAgain: json(metricData(100.01, 0.5)), translated: json(metricData(101.5, 0.5)), rules: NO_RULES }).outcome).toBe('noise');
  });

  it('counts every difference by pattern in its tally, beyond the 50 it keeps', () => {
    const apps = (suffix: string, extra: number) =>
      json({ applications: Array.from({ length: 60 }, (_, i) => ({ id: i, name: `app ${i}${suffix}`, settings: { x: i === 59 ? extra : 0 } })) });
    const result = compareAnswers({ legacy: apps('', 0), translated: apps(' (renamed)', 1), rules: NO_RULES });
    expect(result.total).toBe(61);
    expect(result.differences).toHaveLength(MAX_KEPT_DIFFERENCES);
    expect(result.differences.some((d) => d.pattern === 'applications[].settings.x')).toBe(false);
    expect(result.tally).toEqual([
      { pattern: 'applications[].name', kind: 'value', verdict: 'mismatch', count: 60 },
      { pattern: 'applications[].settings.x', kind: 'value', verdict: 'mismatch', count: 1 },
    ]);
  });

  it('keeps a mismatch elsewhere a mismatch when other values are noise', () => {
    const result = compareAnswers({
      legacy: json(metricData(100, 0.5)),
      legacyAgain: json(metricData(104, 0.5)),
      translated: json(metricData(103, 0.7)),
      rules: NO_RULES,
    });
    expect(result.outcome).toBe('mismatch');
    expect(result.differences.map((d) => [d.path.split('.').pop(), d.verdict])).toEqual([
      ['average_response_time', 'mismatch'],
      ['call_count', 'noise'],
    ]);
  });

  it('a list that grew between the legacy calls excuses its length, not a wrong field in another item', () => {
    const legacy = { applications: [{ id: 1, name: 'a' }, { id: 2, name: 'b' }] };
    const legacyAgain = { applications: [{ id: 1, name: 'a' }, { id: 2, name: 'b' }, { id: 3, name: 'c' }] };
    const translated = { applications: [{ id: 1, name: 'a' }, { id: 2, name: 'WRONG' }, { id: 3, name: 'c' }] };
    const result = compareAnswers({ legacy: json(legacy), legacyAgain: json(legacyAgain), translated: json(translated), rules: NO_RULES });
    expect(result.differences.map((d) => [d.path, d.verdict])).toEqual([
      ['applications[id=2].name', 'mismatch'],
      ['applications', 'noise'],
      ['applications[id=3]', 'noise'],
    ]);
  });

  it('everything inside an item that only one legacy answer has is noise', () => {
    const legacy: JsonValue = { applications: [{ id: 1, name: 'a' }, { id: 9, name: 'new', health_status: 'green' }] };
    const legacyAgain = { applications: [{ id: 1, name: 'a' }] };
    const translated: JsonValue = { applications: [{ id: 1, name: 'a' }, { id: 9, name: 'new', health_status: 'gray' }] };
    const result = compareAnswers({ legacy: json(legacy), legacyAgain: json(legacyAgain), translated: json(translated), rules: NO_RULES });
    expect(result.outcome).toBe('noise');
    expect(result.differences.map((d) => [d.path, d.verdict])).toEqual([['applications[id=9].health_status', 'noise']]);
  });

  it('turns a documented gap into gap, whatever its selectors', () => {
    const legacy = { application: { id: 1, links: { alert_policy: 7, servers: [1] } } };
    const translated = { application: { id: 1, links: { servers: [1] } } };
    for (const gap of ['application.links.alert_policy', 'application.links']) {
      const result = compareAnswers({ legacy: json(legacy), translated: json(translated), rules: { gapPatterns: [gap], thresholds: [] } });
      expect(result).toMatchObject({ outcome: 'match', total: 1, differences: [{ path: 'application.links.alert_policy', kind: 'missing', verdict: 'gap' }] });
    }
    const list = compareAnswers({
      legacy: json({ applications: [{ id: 5, name: 'a', application_summary: { response_time: 1 } }] }),
      translated: json({ applications: [{ id: 5, name: 'a', application_summary: { response_time: 2 } }] }),
      rules: { gapPatterns: ['applications[id=5].application_summary.response_time'], thresholds: [] },
    });
    expect(list.differences.map((d) => d.verdict)).toEqual(['gap']);
    // A gap does not cover a sibling whose name merely starts the same way.
    const sibling = compareAnswers({ legacy: json({ links: 1 }), translated: json({ links: 2 }), rules: { gapPatterns: ['link'], thresholds: [] } });
    expect(sibling.outcome).toBe('mismatch');
  });

  it('tolerates numbers within a matching threshold only', () => {
    const rules: DiffRules = { gapPatterns: [], thresholds: parseThresholds('**.values.average_response_time=rel:0.05') };
    const close = compareAnswers({ legacy: json(metricData(100, 0.5)), translated: json(metricData(100, 0.51)), rules });
    expect(close).toMatchObject({ outcome: 'match', total: 1, differences: [{ verdict: 'tolerated' }] });
    const far = compareAnswers({ legacy: json(metricData(100, 0.5)), translated: json(metricData(100, 0.6)), rules });
    expect(far.outcome).toBe('mismatch');
    const otherField = compareAnswers({ legacy: json(metricData(100, 0.5)), translated: json(metricData(101, 0.5)), rules });
    expect(otherField.outcome).toBe('mismatch');
    // The default relative 1e-9 always applies.
    const formatting = compareAnswers({ legacy: json({ v: 0.3 }), translated: json({ v: 0.1 + 0.2 }), rules: NO_RULES });
    expect(formatting).toMatchObject({ outcome: 'match', differences: [{ verdict: 'tolerated' }] });
  });

  it('keeps at most 50 differences, mismatches first, and counts them all', () => {
    const legacy: { [key: string]: JsonValue } = {};
    const translated: { [key: string]: JsonValue } = {};
    for (let i = 0; i < 80; i++) {
      legacy[`gap${i}`] = i;
      translated[`gap${i}`] = i + 1;
    }
    legacy.real = 'a';
    translated.real = 'b';
    const result = compareAnswers({ legacy: json(legacy), translated: json(translated), rules: { gapPatterns: Array.from({ length: 80 }, (_, i) => `gap${i}`), thresholds: [] } });
    expect(result.total).toBe(81);
    expect(result.differences).toHaveLength(MAX_KEPT_DIFFERENCES);
    expect(result.differences[0]).toMatchObject({ path: 'real', verdict: 'mismatch' });
    expect(result.outcome).toBe('mismatch');
  });
});

describe('compareAnswers: status, content type and Link', () => {
  it('reports a status difference as a mismatch', () => {
    const result = compareAnswers({ legacy: json({ error: { title: 'x' } }, { status: 404 }), translated: json({ error: { title: 'x' } }, { status: 500 }), rules: NO_RULES });
    expect(result).toMatchObject({ outcome: 'mismatch', differences: [{ path: '(status)', pattern: '(status)', kind: 'value', legacy: 404, translated: 500, verdict: 'mismatch' }] });
  });

  it('reports a content type difference', () => {
    const result = compareAnswers({ legacy: json({ a: 1 }), translated: { ...json({ a: 1 }), contentType: 'application/xml', body: toXml({ a: 1 }) }, rules: NO_RULES });
    expect(result.differences).toMatchObject([{ path: '(content-type)', legacy: 'application/json', translated: 'application/xml', verdict: 'mismatch' }]);
  });

  it('compares Link headers per relation, by path and decoded parameters, ignoring the origin', () => {
    const legacyLink = '<https://api.newrelic.com/v2/fixture_widgets.json?filter%5Bname%5D=my+app&page=2>; rel="next", <https://api.newrelic.com/v2/fixture_widgets.json?filter%5Bname%5D=my+app&page=3>; rel="last"';
    const same = '<http://127.0.0.1:8080/v2/fixture_widgets.json?page=2&filter[name]=my%20app>; rel="next", <http://127.0.0.1:8080/v2/fixture_widgets.json?filter[name]=my%20app&page=3>; rel="last"';
    expect(compareAnswers({ legacy: json({}, { link: legacyLink }), translated: json({}, { link: same }), rules: NO_RULES }).outcome).toBe('match');

    const lostParam = '<http://127.0.0.1:8080/v2/fixture_widgets.json?page=2>; rel="next"';
    const result = compareAnswers({ legacy: json({}, { link: legacyLink }), translated: json({}, { link: lostParam }), rules: NO_RULES });
    expect(result.differences.map((d) => [d.path, d.kind, d.legacy, d.translated])).toEqual([
      ['(link).next', 'value', '/v2/fixture_widgets.json?filter[name]=my app&page=2', '/v2/fixture_widgets.json?page=2'],
      ['(link).last', 'missing', '/v2/fixture_widgets.json?filter[name]=my app&page=3', undefined],
    ]);
    const extra = compareAnswers({ legacy: json({}), translated: json({}, { link: lostParam }), rules: NO_RULES });
    expect(extra.differences).toMatchObject([{ path: '(link).next', kind: 'extra', verdict: 'mismatch' }]);
  });

  it('never keeps a key from a Link URL', () => {
    const links = semanticLinks('<https://api.newrelic.com/v2/x.json?api_key=NRAK-SECRET123&q=NRAK-OTHER456&page=2>; rel="next"');
    expect(links.get('next')).toBe('/v2/x.json?page=2&q=[redacted]');
  });

  it('a Link that grew between legacy calls is noise', () => {
    const two = '<https://h/v2/a.json?page=2>; rel="next", <https://h/v2/a.json?page=2>; rel="last"';
    const three = '<https://h/v2/a.json?page=2>; rel="next", <https://h/v2/a.json?page=3>; rel="last"';
    const result = compareAnswers({ legacy: json({}, { link: two }), legacyAgain: json({}, { link: three }), translated: json({}, { link: three }), rules: NO_RULES });
    expect(result).toMatchObject({ outcome: 'noise', differences: [{ path: '(link).last', verdict: 'noise' }] });
  });
});

describe('compareAnswers: bodies', () => {
  it('decodes v2 XML to the same value as the JSON body', () => {
    const body = {
      application: {
        id: 5,
        name: 'shop & <co>',
        health_status: 'green',
        reporting: true,
        last_reported_at: null,
        application_summary: { response_time: 12.5, throughput: 3, apdex_score: 1 },
        links: { servers: [1, 2], application_hosts: [] },
      },
    };
    expect(decodeAnswerBody('application/xml', toXml(body))).toEqual({ ok: true, value: body });
    const result = compareAnswers({ legacy: xml(body), translated: xml(body), rules: NO_RULES });
    expect(result.outcome).toBe('match');
    const changed = compareAnswers({ legacy: xml(body), translated: xml({ application: { ...body.application, reporting: false } }), rules: NO_RULES });
    expect(changed.differences).toMatchObject([{ path: 'application.reporting', kind: 'value', legacy: true, translated: false }]);
  });

  it('XML and JSON renderings of the same v2 list compare alike (property)', () => {
    const app = fc.record({
      id: fc.nat(),
      name: fc.stringMatching(/^[A-Za-z0-9 &<>'"._-]{1,20}$/),
      reporting: fc.boolean(),
      response_time: fc.oneof(fc.integer({ min: -1000, max: 1000 }), fc.double({ min: -1e6, max: 1e6, noNaN: true }).filter((n) => !Object.is(n, -0))),
      servers: fc.array(fc.nat(), { maxLength: 4 }),
      last_reported_at: fc.constant(null),
    });
    fc.assert(
      fc.property(fc.uniqueArray(app, { selector: (a) => a.id, maxLength: 8 }), (apps) => {
        const legacy = xml({ applications: apps });
        const reversed = { applications: [...apps].reverse() };
        // XML against XML in another order: a match; XML against JSON: only the content type differs.
        expect(compareAnswers({ legacy, translated: xml(reversed), rules: NO_RULES }).outcome).toBe('match');
        const mixed = compareAnswers({ legacy, translated: json(reversed), rules: NO_RULES });
        expect(mixed.differences.map((d) => d.path)).toEqual(['(content-type)']);
      }),
    );
  });

  it('an undecodable body is an error with a short reason that quotes nothing of it', () => {
    const html = { status: 502, contentType: 'text/html', body: '<html>NRAK-SECRET</html>', link: null, ms: 1 };
    const result = compareAnswers({ legacy: html, translated: json({ a: 1 }), rules: NO_RULES });
    expect(result).toMatchObject({ outcome: 'error', error: 'legacy: content type text/html is neither JSON nor XML' });
    expect(result.differences.map((d) => d.path)).toEqual(['(status)', '(content-type)']);
    const broken = compareAnswers({ legacy: json({ a: 1 }), translated: { ...json({}), body: '{"a": NRAK-SECRET' }, rules: NO_RULES });
    expect(broken).toMatchObject({ outcome: 'error', error: 'translated: body is not valid JSON', total: 0 });
    const badXml = compareAnswers({ legacy: { ...xml({ a: 1 }), body: '<response><a type="integer">NRAK-SECRET</a></response>' }, translated: xml({ a: 1 }), rules: NO_RULES });
    expect(badXml).toMatchObject({ outcome: 'error', error: 'legacy: body is not valid v2 XML' });
    expect(JSON.stringify([result, broken, badXml])).not.toMatch(/NRAK-/);
  });

  it('refuses XML with a document type declaration (entity expansion)', () => {
    const bomb = '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;">]><response><x>&b;</x></response>';
    expect(decodeAnswerBody('application/xml', bomb)).toEqual({ ok: false, reason: 'body is not valid v2 XML' });
  });

  it('reads an empty body as null, and sniffs a body without a content type', () => {
    expect(decodeAnswerBody('', '')).toEqual({ ok: true, value: null });
    expect(decodeAnswerBody('', '{"a":1}')).toEqual({ ok: true, value: { a: 1 } });
    expect(decodeAnswerBody('', toXml({ a: 1 }))).toEqual({ ok: true, value: { a: 1 } });
    const deleted = compareAnswers({ legacy: { ...json(null), body: '', contentType: '' }, translated: { ...json(null), body: '' }, rules: NO_RULES });
    expect(deleted.outcome).toBe('match');
  });

  it('a second legacy call that failed only marks the status as noise', () => {
    const result = compareAnswers({
      legacy: json({ applications: [{ id: 1, name: 'a' }] }),
      legacyAgain: json({ error: { title: 'busy' } }, { status: 503 }),
      translated: json({ applications: [{ id: 1, name: 'b' }] }, { status: 500 }),
      rules: NO_RULES,
    });
    expect(result.differences.map((d) => [d.path, d.verdict])).toEqual([
      ['applications[id=1].name', 'mismatch'],
      ['(status)', 'noise'],
    ]);
  });
});

describe('compareAnswers: hostile shapes', () => {
  it('refuses bodies nested past MAX_DEPTH as an error instead of overflowing the stack', () => {
    const deep = `${'['.repeat(5000)}1${']'.repeat(5000)}`;
    const other = `${'['.repeat(5000)}2${']'.repeat(5000)}`;
    const result = compareAnswers({ legacy: { ...json(null), body: deep }, translated: { ...json(null), body: other }, rules: NO_RULES });
    expect(result).toEqual({ outcome: 'error', differences: [], total: 0, tally: [], error: `bodies nest deeper than ${MAX_DEPTH} levels` });
    // Within the bound, deep bodies still compare.
    const fine = `${'['.repeat(100)}1${']'.repeat(100)}`;
    expect(compareAnswers({ legacy: { ...json(null), body: fine }, translated: { ...json(null), body: fine.replace('1', '2') }, rules: NO_RULES }).outcome).toBe('mismatch');
  });
});

describe('legacy XML as Rails writes it', () => {
  it('reads whole-number floats (0.0, 1.0) from the legacy API, so such answers still compare', () => {
    const legacy: AnswerSnapshot = {
      status: 200,
      contentType: 'application/xml',
      body: '<?xml version="1.0" encoding="UTF-8"?><response><application><error_rate type="float">0.0</error_rate><apdex type="float">1.0</apdex></application></response>',
      link: null,
      ms: 1,
    };
    const result = compareAnswers({ legacy, translated: xml({ application: { error_rate: 0, apdex: 1 } }), rules: NO_RULES });
    expect(result).toMatchObject({ outcome: 'match', total: 0 });
  });
});
