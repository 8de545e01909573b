import { Writable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { createApp } from '../../../src/app.ts';
import { createLogger } from '../../../src/ops/logger.ts';
import { createMetrics } from '../../../src/ops/metrics.ts';
import { defineWriteMapping, type Mapping } from '../../../src/routes/mapping.ts';
import type { NerdGraph, UpstreamCall } from '../../../src/upstream/client.ts';
import { UpstreamError } from '../../../src/upstream/errors.ts';
import { WRITE_REFUSED, V2Error } from '../../../src/v2/errors.ts';
import { NO_PARAMS } from '../../../src/v2/param-schema.ts';

/**
 * The write runner's chained plans (WritePlan.next): one v2 call that needs several mutations
 * sends each exactly once, in order, each only after the one before was confirmed; once one is
 * out, no failure may read as "nothing was changed".
 */
const KEY = 'NRAK-CHAIN-TEST';
const UNCONFIRMED = 'The change may have been applied in part; list before retrying';

type Fault = 'none' | 'refused-second' | 'unavailable-second' | 'not-sent-second' | 'refused-first' | 'payload-refusal-first' | 'payload-refusal-second' | 'rate-limited-second' | 'bad-key-second' | 'key-in-refusal-second';

function fakeNerdGraph(fault: Fault): NerdGraph & { sent: UpstreamCall[] } {
  const sent: UpstreamCall[] = [];
  return {
    sent,
    async call<T>(call: UpstreamCall): Promise<T> {
      if (call.operation === 'AccessibleAccounts') return { actor: { accounts: [{ id: 1, name: 'one' }] } } as T;
      sent.push(call);
      const step = sent.length;
      if (step === 1 && fault === 'refused-first') throw new UpstreamError('invalid_input', 'bad input');
      if (step === 2 && fault === 'refused-second') throw new UpstreamError('invalid_input', 'bad input');
      if (step === 2 && fault === 'unavailable-second') throw new UpstreamError('unavailable', 'down');
      if (step === 2 && fault === 'not-sent-second') throw new UpstreamError('unavailable', 'no connection', { sent: false });
      if (step === 2 && fault === 'rate-limited-second') throw new UpstreamError('rate_limited', 'too many');
      if (step === 2 && fault === 'bad-key-second') throw new UpstreamError('bad_key', 'bad key');
      // NerdGraph's own words quoting a key-shaped text (the client redacts its errors[], not every detail).
      if (step === 2 && fault === 'key-in-refusal-second') throw new UpstreamError('invalid_input', `refused for NRAK-${'A'.repeat(27)}`);
      return { step, refused: (step === 1 && fault === 'payload-refusal-first') || (step === 2 && fault === 'payload-refusal-second') } as T;
    },
  };
}

const refusedIn = (payload: unknown): boolean => (payload as { refused: boolean }).refused;

const chained: Mapping = defineWriteMapping({
  kind: 'write',
  id: 'test.chain',
  method: 'PUT',
  route: '/v2/chain_test.{format}',
  operation: 'DeploymentCreate',
  stepOperations: ['ApplicationDelete'],
  summary: 'a test write in three steps',
  fidelity: 'approximate',
  successStatus: 200,
  unconfirmedTitle: UNCONFIRMED,
  parameters: NO_PARAMS,
  fields: [],
  knownGaps: [],
  assumptions: [],
  async plan() {
    const refusal = (payload: unknown): void => {
      if (refusedIn(payload)) throw new V2Error(422, 'refused in the payload', { kind: WRITE_REFUSED });
    };
    return {
      variables: { step: 1 },
      next(first: unknown) {
        refusal(first);
        return {
          variables: null,
          next(nothing: unknown) {
            expect(nothing).toBeNull();
            return {
              operation: 'ApplicationDelete',
              variables: { step: 3 },
              answer(last: unknown) {
                refusal(last);
                return { chain: { steps: (last as { step: number }).step } };
              },
            };
          },
        };
      },
    };
  },
});

/** A plan whose second step names a mutation the mapping did not declare (a programming error). */
const undeclared: Mapping = defineWriteMapping({
  ...(chained as Extract<Mapping, { kind: 'write' }>),
  id: 'test.undeclared',
  route: '/v2/chain_undeclared.{format}',
  stepOperations: [],
  async plan() {
    return { variables: { step: 1 }, next: () => ({ operation: 'ApplicationDelete', variables: { step: 2 }, answer: () => ({}) }) };
  },
});

const PARTIAL = 'Partly changed: the first step was applied, a later one refused; list before retrying';

/** The same chain declaring a partialTitle: a later step known not applied answers 409 (not retried by clients). */
const partialChain: Mapping = defineWriteMapping({
  ...(chained as Extract<Mapping, { kind: 'write' }>),
  id: 'test.partial',
  route: '/v2/chain_partial.{format}',
  partialTitle: PARTIAL,
});

async function put(fault: Fault, path = '/v2/chain_test.json'): Promise<{ status: number; body: unknown; sent: UpstreamCall[] }> {
  const nerdgraph = fakeNerdGraph(fault);
  const app = createApp({
    config: {
      defaultAccountId: undefined,
      publicBaseUrl: undefined,
      cursorCacheTtlMs: 1000,
      accountsCacheTtlMs: 1000,
      metricNamesLookbackMs: 1000,
      requestDeadlineMs: 5000,
    },
    nerdgraph,
    nerdgraphUrl: 'http://127.0.0.1:9/graphql',
    mappings: [chained, undeclared, partialChain],
    metrics: createMetrics(),
    logger: createLogger('silent', new Writable({ write: (_c, _e, done) => done() })),
    now: () => 0,
  });
  const response = await app.request(path, { method: 'PUT', headers: { 'x-api-key': KEY, 'content-type': 'application/json' }, body: '{}' });
  return { status: response.status, body: await response.json(), sent: nerdgraph.sent };
}

describe('chained writes', () => {
  it('sends every step once, in order, with its own operation, and answers from the last', async () => {
    const { status, body, sent } = await put('none');
    expect(status).toBe(200);
    expect(body).toEqual({ chain: { steps: 2 } });
    expect(sent.map((c) => [c.operation, c.variables])).toEqual([
      ['DeploymentCreate', { step: 1 }],
      ['ApplicationDelete', { step: 3 }],
    ]);
  });

  it('a refusal of the first step is a refusal: nothing was changed, nothing more is sent', async () => {
    for (const fault of ['refused-first', 'payload-refusal-first'] as const) {
      const { status, body, sent } = await put(fault);
      expect(status, fault).toBe(422);
      expect(JSON.stringify(body), fault).not.toContain(UNCONFIRMED);
      expect(sent, fault).toHaveLength(1);
    }
  });

  it('any failure after a step went out says the outcome is unknown, and resends nothing', async () => {
    for (const fault of ['refused-second', 'unavailable-second', 'not-sent-second', 'payload-refusal-second'] as const) {
      const { status, body, sent } = await put(fault);
      expect(status, fault).toBe(502);
      expect(body, fault).toEqual({ error: { title: UNCONFIRMED } });
      expect(sent, fault).toHaveLength(2);
    }
  });

  it('with a partialTitle, a later step refused or never sent answers 409 (a known partial outcome clients do not retry); an unknown one stays 502', async () => {
    for (const fault of ['refused-second', 'not-sent-second', 'payload-refusal-second', 'rate-limited-second', 'bad-key-second', 'key-in-refusal-second'] as const) {
      const { status, body, sent } = await put(fault, '/v2/chain_partial.json');
      expect(status, fault).toBe(409);
      const title = (body as { error: { title: string } }).error.title;
      expect(title.startsWith(`${PARTIAL}: `), fault).toBe(true);
      expect(title.toLowerCase(), fault).not.toContain('nothing was changed');
      expect(title, fault).not.toContain(`NRAK-${'A'.repeat(27)}`);
      expect(sent, fault).toHaveLength(2);
    }
    const unknown = await put('unavailable-second', '/v2/chain_partial.json');
    expect(unknown.status).toBe(502);
    expect(unknown.body).toEqual({ error: { title: UNCONFIRMED } });
    // The first step's refusal is still "not written".
    const first = await put('payload-refusal-first', '/v2/chain_partial.json');
    expect(first.status).toBe(422);
    expect(first.sent).toHaveLength(1);
  });

  it('never sends a step whose mutation the mapping did not declare', async () => {
    const { status, body, sent } = await put('none', '/v2/chain_undeclared.json');
    expect(sent.map((c) => c.operation)).toEqual(['DeploymentCreate']);
    // After the first step, still an unknown outcome for the caller, never a success.
    expect(status).toBe(502);
    expect(body).toEqual({ error: { title: UNCONFIRMED } });
  });
});
