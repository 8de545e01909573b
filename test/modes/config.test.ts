import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/ops/config.ts';
import { modeResolverFor } from '../../src/modes/mode-resolver.ts';
import { formatRouteModes, parseRouteModes, ROUTE_MODE_NAMES, RouteModesError, RULE_METHODS, type ModeRule } from '../../src/ops/route-modes.ts';
import { GADGETS, loadTestMappings, SPROCKETS, WIDGET, WIDGETS } from '../support/fixture-routes.ts';

/** ROUTE_MODES: parsing (pure, total), resolution order, and the start-up errors. */
const segment = fc.stringMatching(/^[a-z_{}0-9]{1,12}$/);
const pattern = fc.oneof(
  fc.constant('*'),
  fc.array(fc.oneof(segment, fc.constant('*'), segment.map((s) => `${s}*`)), { minLength: 1, maxLength: 5 }).map((parts) => `/${parts.join('/')}`),
);
const rule: fc.Arbitrary<ModeRule> = fc.record(
  { method: fc.constantFrom(...RULE_METHODS), pattern, mode: fc.constantFrom(...ROUTE_MODE_NAMES) },
  { requiredKeys: ['pattern', 'mode'] },
);

describe('parseRouteModes', () => {
  it('reads a rule of each form: method and template, method and glob, catch-all', () => {
    expect(parseRouteModes('GET /v2/fixture_widgets/{id}/notes=compare;GET /v2/fixture_g*=passthrough;*=translate')).toEqual([
      { method: 'GET', pattern: '/v2/fixture_widgets/{id}/notes', mode: 'compare' },
      { method: 'GET', pattern: '/v2/fixture_g*', mode: 'passthrough' },
      { pattern: '*', mode: 'translate' },
    ]);
  });

  it('round-trips: parse(format(rules)) equals rules', () => {
    fc.assert(
      fc.property(fc.array(rule, { maxLength: 8 }), (rules) => {
        expect(parseRouteModes(formatRouteModes(rules))).toEqual(rules);
      }),
    );
  });

  it('never throws anything but its own error on garbage', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.array(fc.constantFrom('GET ', '/v2/', '*', '=', ';', ' ', 'compare', 'x', '\t')).map((p) => p.join(''))), (text) => {
        try {
          parseRouteModes(text);
        } catch (error) {
          expect(error).toBeInstanceOf(RouteModesError);
        }
      }),
    );
  });

  it.each([
    ['GET /v2/x=fast', 'unknown mode'],
    ['GET =compare', 'empty pattern'],
    ['=compare', 'empty pattern'],
    ['FETCH /v2/x=compare', 'unknown method'],
    ['/v2/x', 'expected [METHOD ]PATTERN=MODE'],
    ['GET v2/x=compare', 'path glob'],
  ])('refuses %s (%s), naming the rule', (text, why) => {
    expect(() => parseRouteModes(text)).toThrow(why);
    expect(() => parseRouteModes(text)).toThrow(JSON.stringify(text.trim()));
  });
});

describe('ROUTE_MODES in the configuration', () => {
  it('stops start-up with a ConfigError naming the variable and the rule', () => {
    expect(() => loadConfig({ ROUTE_MODES: 'GET /v2/fixture_widgets=sometimes' })).toThrow(ConfigError);
    expect(() => loadConfig({ ROUTE_MODES: 'GET /v2/fixture_widgets=sometimes' })).toThrow(/ROUTE_MODES: rule "GET \/v2\/fixture_widgets=sometimes": unknown mode/);
  });

  it('defaults: no rules, the legacy API at the region host or the NerdGraph origin, sampling 1', () => {
    expect(loadConfig({}).routeModes).toEqual([]);
    expect(loadConfig({}).legacyRestUrl).toBeUndefined();
    expect(loadConfig({ NEW_RELIC_REGION: 'us' }).legacyRestUrl).toBe('https://api.newrelic.com');
    expect(loadConfig({ NEW_RELIC_REGION: 'eu' }).legacyRestUrl).toBe('https://api.eu.newrelic.com');
    expect(loadConfig({ NERDGRAPH_URL: 'http://127.0.0.1:8081/graphql' }).legacyRestUrl).toBe('http://127.0.0.1:8081');
    expect(loadConfig({ NEW_RELIC_REGION: 'us', LEGACY_REST_URL: 'https://legacy.example/' }).legacyRestUrl).toBe('https://legacy.example');
    expect(loadConfig({}).compare).toEqual({ sampleRate: 1, concurrency: 2, queueMax: 64, thresholds: undefined, maxBodyBytes: 2 * 1024 * 1024, maxLoopUtilisation: 0.5 });
    expect(loadConfig({ COMPARE_MAX_LOOP_UTILISATION: '1' }).compare.maxLoopUtilisation).toBe(1);
    expect(() => loadConfig({ COMPARE_MAX_LOOP_UTILISATION: '1.2' })).toThrow(/COMPARE_MAX_LOOP_UTILISATION/);
    expect(() => loadConfig({ LEGACY_REST_URL: 'ftp://x' })).toThrow(/LEGACY_REST_URL/);
    expect(() => loadConfig({ COMPARE_SAMPLE_RATE: '1.5' })).toThrow(/COMPARE_SAMPLE_RATE/);
    expect(loadConfig({ SANDBOX_DIVERGE: 'app-names, response-time', SANDBOX_LEGACY_JITTER: 'true' }).sandbox).toMatchObject({ diverge: ['app-names', 'response-time'], legacyJitter: true });
  });
});

describe('mode resolution', () => {
  // The fixture routes (test/support/fixture-routes.ts) stand for each kind of route.
  const resolve = async (text: string) => modeResolverFor(parseRouteModes(text), await loadTestMappings('fixtures'));
  const APP = { template: WIDGET, passthroughOnly: false };
  const DATA = { template: WIDGETS, passthroughOnly: false };
  // Translated, but passed through unless a specific rule names it.
  const POLICIES = { template: SPROCKETS, passthroughOnly: false, passthroughByDefault: true };
  // A route NerdGraph cannot serve: passthrough only.
  const EXTERNAL = { template: GADGETS, passthroughOnly: true };

  it('specific rules, then the passthrough defaults, then the catch-all, then translate', async () => {
    const resolver = await resolve('*=candidate;GET /v2/fixture_widgets=compare;PUT /v2/fixture_widgets/*=translate');
    expect(resolver.modeOf({ method: 'GET', path: '/v2/fixture_widgets.json', route: DATA })).toBe('compare');
    expect(resolver.modeOf({ method: 'POST', path: '/v2/fixture_widgets.json', route: DATA })).toBe('candidate');
    expect(resolver.modeOf({ method: 'PUT', path: '/v2/fixture_widgets/5.json', route: APP })).toBe('translate');
    expect(resolver.modeOf({ method: 'GET', path: '/v2/fixture_widgets/5.json', route: APP })).toBe('candidate');
    expect(resolver.modeOf({ method: 'GET', path: '/v2/fixture_sprockets.json', route: POLICIES })).toBe('passthrough');
    expect((await resolve('')).modeOf({ method: 'GET', path: '/v2/fixture_widgets/5.json', route: APP })).toBe('translate');
    expect((await resolve('')).modeOf({ method: 'GET', path: '/v2/fixture_sprockets.json', route: POLICIES })).toBe('passthrough');
  });

  it('matches the request path too (ids, not only templates)', async () => {
    const resolver = await resolve('GET /v2/fixture_widgets/42=compare');
    expect(resolver.modeOf({ method: 'GET', path: '/v2/fixture_widgets/42.json', route: APP })).toBe('compare');
    expect(resolver.modeOf({ method: 'GET', path: '/v2/fixture_widgets/43.json', route: APP })).toBe('translate');
  });

  it('a broad rule does not make a passthrough-only route translated', async () => {
    const resolver = await resolve('GET /v2/*=compare');
    expect(resolver.modeOf({ method: 'GET', path: '/v2/fixture_gadgets.json', route: EXTERNAL })).toBe('passthrough');
    expect(resolver.modeOf({ method: 'GET', path: '/v2/fixture_widgets/1.json', route: APP })).toBe('compare');
  });

  it('a route passed through by default is translated or compared only by a specific rule, never by the catch-all', async () => {
    // The route as its request brings it; the mappings' own start-up check is the next test's.
    const others = (await loadTestMappings('fixtures')).filter((mapping) => !mapping.route.startsWith('/v2/fixture_sprockets'));
    const resolveOver = (text: string) => modeResolverFor(parseRouteModes(text), others);
    const asked = { method: 'GET', path: '/v2/fixture_sprockets.json', route: POLICIES };
    expect(resolveOver('').modeOf(asked)).toBe('passthrough');
    expect(resolveOver('*=translate').modeOf(asked)).toBe('passthrough');
    expect(resolveOver('*=translate;GET /v2/fixture_sprockets=compare').modeOf(asked)).toBe('compare');
    expect(resolveOver('/v2/fixture_sprock*=translate').modeOf(asked)).toBe('translate');
    expect(resolveOver('/v2/fixture_sprock*=translate').modeOf({ ...asked, method: 'POST' })).toBe('translate');
    expect(resolveOver('GET /v2/fixture_sprock*=translate').modeOf({ ...asked, method: 'POST' })).toBe('passthrough');
  });

  it('a route passed through by default follows a rule that names it, method by method', async () => {
    const resolver = await resolve('*=translate;GET /v2/fixture_sprockets=compare;PUT /v2/fixture_sprockets/*=translate');
    expect(resolver.modeOf({ method: 'GET', path: '/v2/fixture_sprockets.json', route: POLICIES })).toBe('compare');
    expect(resolver.modeOf({ method: 'POST', path: '/v2/fixture_sprockets.json', route: POLICIES })).toBe('passthrough');
    const ITEM = { ...POLICIES, template: '/v2/fixture_sprockets/{sprocket_id}.{format}' };
    expect(resolver.modeOf({ method: 'PUT', path: '/v2/fixture_sprockets/7.json', route: ITEM })).toBe('translate');
    expect(resolver.modeOf({ method: 'DELETE', path: '/v2/fixture_sprockets/7.json', route: ITEM })).toBe('passthrough');
  });

  it.each(['GET /v2/fixture_gad*=translate', 'GET /v2/fixture_gadgets=compare', 'PUT /v2/fixture_gadgets/{gadget_id}=candidate', 'POST /v2/fixture_sprockets=translate'])(
    'refuses %s at start-up: those routes have only a passthrough mapping',
    async (text) => {
      await expect(resolve(text)).rejects.toThrow(ConfigError);
      await expect(resolve(text)).rejects.toThrow(`ROUTE_MODES: rule ${JSON.stringify(text)}`);
    },
  );
});
