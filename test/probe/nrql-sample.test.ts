import { describe, expect, it } from 'vitest';
import { policyWithNrqlConditions } from '../../src/probe/routes.ts';

/**
 * The NRQL condition ids the probe fills its samples with ({nrql_policy_id},
 * {nrql_condition_id}), found in the legacy API's answers: here a stand-in for it, answering
 * each path from a table (404 otherwise), with the paths it was asked kept.
 */
function legacyOf(answers: Record<string, unknown>): { legacy: (path: string) => Promise<Response>; asked: string[] } {
  const asked: string[] = [];
  const legacy = async (path: string): Promise<Response> => {
    asked.push(path);
    return path in answers ? Response.json(answers[path]) : new Response('{}', { status: 404 });
  };
  return { legacy, asked };
}

const POLICIES = '/v2/alerts_policies.json';
const conditionsOf = (policy: number): string => `/v2/alerts_nrql_conditions.json?policy_id=${policy}`;

describe('the probe\'s NRQL condition sample', () => {
  it('takes the first condition that has an id, past items without one', async () => {
    const { legacy } = legacyOf({
      [POLICIES]: { policies: [{ id: 7 }] },
      [conditionsOf(7)]: { nrql_conditions: [{ name: 'no id' }, null, { id: 'x1', name: 'string id' }, { id: 12 }] },
    });
    expect(await policyWithNrqlConditions(legacy)).toEqual({ policy: '7', condition: 'x1' });
  });

  it('goes on to a later policy when no condition of a policy has an id, and keeps the first such policy when none has one', async () => {
    const { legacy, asked } = legacyOf({
      [POLICIES]: { policies: [{ id: 1 }, { name: 'no id' }, { id: 2 }, { id: 3 }, { id: 4 }] },
      [conditionsOf(1)]: { nrql_conditions: [{ name: 'no id' }] },
      [conditionsOf(2)]: { nrql_conditions: [] },
      [conditionsOf(3)]: { nrql_conditions: [{ id: 30 }] },
    });
    expect(await policyWithNrqlConditions(legacy)).toEqual({ policy: '3', condition: '30' });
    expect(asked).toEqual([POLICIES, conditionsOf(1), conditionsOf(2), conditionsOf(3)]);

    const idless = legacyOf({
      [POLICIES]: { policies: [{ id: 1 }, { id: 2 }] },
      [conditionsOf(1)]: { nrql_conditions: [{ name: 'no id' }] },
      [conditionsOf(2)]: { nrql_conditions: [{ name: 'no id either' }] },
    });
    expect(await policyWithNrqlConditions(idless.legacy)).toEqual({ policy: '1', condition: undefined });
  });

  it('finds nothing when no policy of the first page has NRQL conditions', async () => {
    const { legacy } = legacyOf({ [POLICIES]: { policies: [{ id: 1 }] }, [conditionsOf(1)]: { nrql_conditions: [] } });
    expect(await policyWithNrqlConditions(legacy)).toBeUndefined();
  });
});
