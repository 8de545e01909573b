import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventFilters, violationParams } from './alert-params.ts';
import { V2Error } from '../../src/v2/errors.ts';
import { parseV2Params } from '../../src/v2/params.ts';
import { DEMO_KEY, FIXED_NOW, createTestGateway, startSandbox, type TestGateway } from '../../test/support/harness.ts';

/**
 * The parameters of alerts_violations and alerts_events, whatever a client sends: a parsed
 * request or a v2 422, never anything else; and through the gateway, never a 5xx.
 */
const KEYS = ['only_open', 'filter[only_open]', 'start_date', 'end_date', 'filter[start_time]', 'filter[end_time]', 'filter[product]', 'filter[entity_type]', 'filter[entity_group_id]', 'filter[entity_id]', 'filter[event_type]', 'filter[incident_id]', 'page'];
const value = fc.oneof(
  fc.string({ maxLength: 30 }),
  fc.constantFrom('true', 'false', '1', 'APM', 'mobile', 'DEPLOYMENT', 'VIOLATION', 'Application', '2026-11-20T00:00:00Z', '2026-11-21', '2030-01-01', '0001-01-01', '0', '-1', '99999999999999999999', '%', '+'),
);
const query = fc.array(fc.tuple(fc.constantFrom(...KEYS), value), { maxLength: 4 }).map((pairs) => pairs.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&'));

function onlyV2Errors(run: () => unknown): void {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(V2Error);
    expect((error as V2Error).status).toBe(422);
  }
}

describe('alerts parameters', () => {
  it('parse or answer 422, never anything else', () => {
    fc.assert(
      fc.property(query, (text) => {
        const params = parseV2Params(text);
        onlyV2Errors(() => violationParams(params, FIXED_NOW));
        onlyV2Errors(() => eventFilters(params));
      }),
      { numRuns: 500 },
    );
  });

  it('a start after the end is 422; dates bound the window; defaults reach 30 days back', () => {
    expect(() => violationParams(parseV2Params('start_date=2026-11-21&end_date=2026-11-20'), FIXED_NOW)).toThrow(V2Error);
    // Windows end a minute after now (clock skew).
    expect(violationParams(parseV2Params('filter[start_time]=2026-11-20T00:00:00Z'), FIXED_NOW).window).toEqual({ startTime: Date.UTC(2026, 10, 20), endTime: FIXED_NOW + 60_000 });
    expect(violationParams(parseV2Params(''), FIXED_NOW).window).toEqual({ startTime: FIXED_NOW - 30 * 86_400_000, endTime: FIXED_NOW + 60_000 });
    // only_open reaches 90 days back: open incidents can be older than 30 days.
    expect(violationParams(parseV2Params('only_open=true'), FIXED_NOW).window).toEqual({ startTime: FIXED_NOW - 90 * 86_400_000, endTime: FIXED_NOW + 60_000 });
    expect(eventFilters(parseV2Params('filter[product]=browser&filter[event_type]=violation_open'))).toEqual({ product: 'BROWSER', eventType: 'VIOLATION_OPEN' });
  });

  it('odd dates: a start before 1970 counts from 1970, an end never past now, a start after the end reads nothing', () => {
    const windowOf = (query: string) => violationParams(parseV2Params(query), FIXED_NOW).window;
    expect(windowOf('start_date=0001-01-01')).toEqual({ startTime: 0, endTime: FIXED_NOW + 60_000 });
    expect(windowOf('start_date=1970-01-01')).toEqual({ startTime: 0, endTime: FIXED_NOW + 60_000 });
    expect(windowOf('end_date=9999-12-31')).toEqual({ startTime: FIXED_NOW - 30 * 86_400_000, endTime: FIXED_NOW + 60_000 });
    expect(windowOf('start_date=2030-01-01')).toBeNull();
    expect(windowOf('start_date=2030-01-01&end_date=2031-01-01')).toBeNull();
    expect(windowOf('start_date=0001-01-01&end_date=0001-06-01')).toBeNull();
    expect(windowOf('end_date=1960-01-01')).toBeNull();
    fc.assert(
      fc.property(query, (text) => {
        let window;
        try {
          window = violationParams(parseV2Params(text), FIXED_NOW).window;
        } catch {
          return;
        }
        if (window === null) return;
        expect(window.startTime).toBeGreaterThanOrEqual(0);
        expect(window.startTime).toBeLessThan(window.endTime);
        expect(window.endTime).toBeLessThanOrEqual(FIXED_NOW + 60_000);
      }),
      { numRuns: 500 },
    );
  });

  describe('through the gateway', () => {
    let sandbox: Awaited<ReturnType<typeof startSandbox>>;
    let gateway: TestGateway;
    beforeAll(async () => {
      sandbox = await startSandbox({ apmApps: 40 });
      gateway = await createTestGateway({ nerdgraphUrl: sandbox.graphqlUrl });
    });
    afterAll(async () => {
      await sandbox.close();
    });

    it('never answers a 5xx to any mix of these parameters', async () => {
      await fc.assert(
        fc.asyncProperty(fc.constantFrom('alerts_violations', 'alerts_events', 'alerts_incidents'), query, async (route, text) => {
          const response = await gateway.app.request(`/v2/${route}.json?${text}`, { headers: { 'X-Api-Key': DEMO_KEY } });
          expect([200, 422]).toContain(response.status);
          const body = (await response.json()) as Record<string, unknown>;
          expect(Object.keys(body)).toEqual(response.status === 200 ? [route === 'alerts_events' ? 'recent_events' : route.replace('alerts_', '')] : ['error']);
        }),
        { numRuns: 40 },
      );
    }, 120_000);
  });
});
