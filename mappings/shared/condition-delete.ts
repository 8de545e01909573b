import { z } from 'zod';
import { defineWriteMapping, NO_PARAMS, notFound, parseAnswer, UpstreamError, type KnownGap, type V2Body, type WriteMapping } from '../../src/mapping-api.ts';
import { ALERTS_KEPT_ALIVE } from './alerts.ts';
import { NrqlConditionTitles, conditionIdOf, readNrqlCondition } from './nrql-conditions.ts';

/**
 * DELETE of a condition of any family through alertsConditionDelete (NerdGraph deletes a
 * condition of any type by id). NerdGraph can read only NRQL conditions, so for the other
 * families the gateway cannot show v2's deleted condition: it answers its id, every other v2 key
 * null (each a known gap), and what to use instead of the family is said in its passthrough module.
 */
const Deleted = z.object({ alertsConditionDelete: z.object({ id: z.string() }).nullable() });

/** The delete was confirmed for `id`; otherwise whether it happened is unknown (the runner answers the unconfirmed title). */
export function confirmedDelete(payload: unknown, id: number): void {
  const deleted = parseAnswer(Deleted, payload, 'AlertConditionDelete').alertsConditionDelete;
  if (deleted?.id !== String(id)) throw new UpstreamError('upstream_failure', 'alertsConditionDelete confirmed no id');
}

export interface ConditionFamily {
  /** v2's namespace, e.g. alerts_conditions; the mapping id is `<namespace>.delete`. */
  namespace: string;
  /** The answer's wrapper, e.g. condition. */
  singular: string;
  /** v2's keys of the family's condition besides id, in v2's order. */
  keys: readonly string[];
  /** What the family is, for the summary. */
  what: string;
}

/**
 * Whether `id` is an NRQL condition of the account. The sandbox answers nrqlCondition null for
 * another family's id; real NerdGraph may answer a NOT_FOUND error instead, which means the same
 * here (UNCONFIRMED), so such a DELETE still deletes rather than answering 404.
 */
async function isNrqlCondition(ctx: Parameters<typeof readNrqlCondition>[0], id: number): Promise<boolean> {
  try {
    return (await readNrqlCondition(ctx, id)) !== null;
  } catch (error) {
    if (error instanceof UpstreamError && error.errorClass === 'not_found') return false;
    throw error;
  }
}

/** The write mapping of DELETE /v2/<namespace>/{condition_id} for a family NerdGraph cannot read. */
export function conditionDeleteMapping(family: ConditionFamily): WriteMapping {
  const gaps: KnownGap[] = family.keys.map((key) => ({
    path: `${family.singular}.${key}`,
    description: `${key}: null. NerdGraph cannot read ${family.what}, so the deleted condition's ${key} is not known (v2 answered the whole deleted condition).`,
  }));
  return defineWriteMapping({
    kind: 'write',
    id: `${family.namespace}.delete`,
    method: 'DELETE',
    route: `/v2/${family.namespace}/{condition_id}.{format}`,
    operation: 'AlertConditionDelete',
    summary: `Delete one ${family.what}: nrqlCondition read (an id of a NRQL condition is not one of this family: 404), then one alertsConditionDelete; the answer holds the id only`,
    fidelity: 'approximate',
    passthroughByDefault: ALERTS_KEPT_ALIVE,
    successStatus: 200,
    unconfirmedTitle: 'The condition may have been deleted, but New Relic did not confirm it: list the policy\'s conditions before retrying',
    parameters: NO_PARAMS,
    fields: [{ field: `${family.singular}.id`, fidelity: 'exact', source: 'the path id, as alertsConditionDelete confirmed it' }],
    knownGaps: [
      ...gaps,
      {
        description:
          "alertsConditionDelete deletes a condition of any family by id: an id of another non-NRQL family (e.g. an APM condition's id sent to alerts_synthetics_conditions) is deleted where v2 answered 404. An unknown id is 404 with the gateway's title 'Resource not found'.",
      },
    ],
    assumptions: [
      'A condition id is the same number in REST v2 and NerdGraph (NerdGraph ids are v2 ids, as text).',
      "nrqlCondition(id) for another family's id answers null or a NOT_FOUND error; both mean 'not an NRQL condition' and the delete goes on (UNCONFIRMED: which one real NerdGraph answers is untested; the sandbox answers null).",
    ],
    async plan(ctx) {
      const id = conditionIdOf(ctx.pathParams.condition_id);
      if (await isNrqlCondition(ctx, id)) throw notFound(NrqlConditionTitles.conditionNotFound);
      const shown: V2Body = { id, ...Object.fromEntries(family.keys.map((key) => [key, null])) };
      return {
        variables: { accountId: ctx.accountId, id: String(id) },
        answer: (payload) => (confirmedDelete(payload, id), { [family.singular]: shown }),
      };
    },
  });
}
