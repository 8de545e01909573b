import { describe, expect, it } from 'vitest';
import { readsOf, type RouteDeps } from '../../src/routes/types.ts';

/** Reads beside a route's main request go through one function, which never sends a mutation. */
describe('readsOf', () => {
  const sent: string[] = [];
  const deps = {
    mutations: new Set(['DeploymentCreate']),
    nerdgraph: { call: async ({ operation, apiKey }: { operation: string; apiKey: string }) => void sent.push(`${operation}:${apiKey}`) },
  } as unknown as RouteDeps; // only the two members readsOf uses
  const read = readsOf(deps, { apiKey: 'NRAK-X', identity: 'id' }, new AbortController().signal);

  it('sends queries with the caller key', async () => {
    await read('ApplicationsSearch', {});
    expect(sent).toEqual(['ApplicationsSearch:NRAK-X']);
  });

  it('refuses a mutation, so only a write runner can send one', () => {
    expect(() => read('DeploymentCreate', {})).toThrow(/query operations only/);
    expect(sent).toEqual(['ApplicationsSearch:NRAK-X']);
  });

  it('sends nothing once the request is gone (deadline or disconnect)', async () => {
    const gone = new AbortController();
    gone.abort(new Error('gone'));
    await expect(readsOf(deps, { apiKey: 'NRAK-X', identity: 'id' }, gone.signal)('ApplicationsSearch', {})).rejects.toThrow('gone');
    expect(sent).toEqual(['ApplicationsSearch:NRAK-X']);
  });
});
