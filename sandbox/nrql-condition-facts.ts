/**
 * How the NerdGraph face answers where the gateway's NRQL condition mappings take a fact as
 * UNCONFIRMED (behaviours.ts: nrqlConditionOfOtherFamily, nrqlOffsetReadsAsCadenceDelay). With
 * the defaults nothing changes; the other settings let a test show `npm run probe` (src/probe/)
 * refuting the fact. Only the NerdGraph face reads these; the store is not changed.
 */
import { GraphQLError } from 'graphql';
import type { AlertCondition } from './alerts.ts';
import type { SandboxBehaviours } from './behaviours.ts';

/** The message of the (test-only) error answered for another family's id. */
export const OTHER_FAMILY_ERROR = 'An error occurred resolving this field';

/**
 * `nrqlCondition(id)` when `id` is no NRQL condition of the account: null, unless the id is
 * another family's condition and the behaviour says NerdGraph answers that with an error.
 */
export function absentNrqlCondition(conditions: readonly AlertCondition[], accountId: number, id: number, behaviours: Pick<SandboxBehaviours, 'nrqlConditionOfOtherFamily'>): null {
  const other = conditions.some((condition) => condition.accountId === accountId && condition.id === id && condition.family !== 'alerts_nrql_conditions');
  // Data made by hand without the behaviour follows the default (null).
  const answer = behaviours.nrqlConditionOfOtherFamily ?? 'null';
  if (!other || answer === 'null') return null;
  if (answer === 'not-found') throw new GraphQLError('Not Found', { extensions: { errorClass: 'NOT_FOUND' } });
  throw new GraphQLError(OTHER_FAMILY_ERROR, { extensions: { errorClass: 'INTERNAL_SERVER_ERROR' } });
}

/** The delay NerdGraph shows an EVENT_FLOW condition with when the behaviour is off. */
export const EVENT_FLOW_DELAY_SECONDS = 120;

/** A condition's NerdGraph view as the behaviour `nrqlOffsetReadsAsCadenceDelay` has it shown. */
export function shownNrqlCondition<T extends Record<string, unknown>>(view: T, behaviours: Pick<SandboxBehaviours, 'nrqlOffsetReadsAsCadenceDelay'>): T {
  if (behaviours.nrqlOffsetReadsAsCadenceDelay !== false) return view;
  const signal = typeof view.signal === 'object' && view.signal !== null ? view.signal : {};
  const nrql = typeof view.nrql === 'object' && view.nrql !== null ? view.nrql : {};
  return {
    ...view,
    signal: { ...signal, aggregationMethod: 'EVENT_FLOW', aggregationDelay: EVENT_FLOW_DELAY_SECONDS },
    nrql: { ...nrql, ...('evaluationOffset' in nrql && { evaluationOffset: null }) },
  };
}
