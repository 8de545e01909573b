import { z } from 'zod';
import { defineWriteMapping, NO_PARAMS, notFound, parseAnswer, UpstreamError, type KnownGap, type V2Body, type WriteMapping, type WriteSampleValue } from '../../src/mapping-api.ts';
import { ALERTS_KEPT_ALIVE } from '../common/alerts.ts';
import { NrqlConditionTitles, conditionIdOf, readNrqlCondition } from './nrql-conditions.ts';

/**
 * DELETE of a condition of any family through alertsConditionDelete (NerdGraph deletes a
 * condition of any type by id). NerdGraph can read only NRQL conditions, so for the other
 * families the gateway cannot show v2's deleted condition: it answers its id, every other v2 key
 * null (each a known gap), and what to use instead of the family is said in its passthrough module.
 *
 * The family check. v2 answered 404 for another family's id on a family's route, deleting nothing.
 * NerdGraph tells only NRQL conditions from the rest: nrqlCondition(id) (here, and the NRQL
 * route's own read). Neither schema file has a read of an APM, external service, synthetics or
 * location failure condition: AlertsAccountStitchedFields holds nrqlCondition(s), policies and
 * muting rules only; a condition's entity (GUID account|AIOPS|CONDITION|id) has no typed entity
 * (Entity's implementations have none for conditions), only a GenericEntity's type and tags,
 * which no New Relic document says name the family. So among those four families the gateway
 * cannot answer v2's 404: that is a known gap of each of their DELETEs.
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
  /** The sample value of a condition of this family to delete (`npm run compat -- --costs`). */
  sampleId: WriteSampleValue;
}

/**
 * Whether `id` is an NRQL condition of the account. The sandbox answers nrqlCondition null for
 * another family's id; real NerdGraph may answer a NOT_FOUND error instead, which means the same
 * here (UNCONFIRMED; probe: nrql-condition-of-other-family-is-absent), so such a DELETE still
 * deletes rather than answering 404.
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
    sample: { path: { condition_id: `{${family.sampleId}}` } },
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
          "An NRQL condition's id is v2's 404, nothing deleted (nrqlCondition finds it). But NerdGraph has no read that tells the other four families apart (APM, external service, synthetics, location failure), and alertsConditionDelete deletes a condition of any family by id: an id of another of those four (e.g. an APM condition's id sent to alerts_synthetics_conditions) is deleted where v2 answered 404. Passthrough (the default for this route) keeps v2's check. An unknown id is 404 with the gateway's title 'Resource not found'.",
      },
    ],
    assumptions: [
      'A condition id is the same number in REST v2 and NerdGraph (NerdGraph ids are v2 ids, as text).',
      "nrqlCondition(id) for another family's id answers null or a NOT_FOUND error; both mean 'not an NRQL condition' and the delete goes on (UNCONFIRMED: the sandbox answers null; probe: nrql-condition-of-other-family-is-absent, nrqlCondition of an APM condition's id listed by the legacy API, read-only).",
      "No NerdGraph read names a non-NRQL condition's family (UNCONFIRMED for the condition's entity; probe: condition-entity-names-family, actor.entity of account|AIOPS|CONDITION|id for conditions of each family the legacy API lists, read-only, shows whether its type or tags name the family; if one does, the four families can be told apart).",
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
