/**
 * The entity of an alert condition, for behaviour `conditionEntities` (behaviours.ts). By default
 * the sandbox models none: `actor.entity` of a condition's GUID answers null. The test-only
 * `family-tagged` world answers a GenericEntity (domain AIOPS, type CONDITION: the GUID's own
 * parts, alerts.ts conditionEntityGuid) tagged with its family, so `npm run probe`'s
 * condition-entity-names-family can be seen refuting.
 */
import { conditionEntityGuid } from './alerts.ts';
import type { EntityOutlineSource } from './entities/index.ts';
import type { SandboxData } from './model.ts';

/** The `|`-separated parts of an entity GUID (base64, padding optional), or null when it is none. */
function guidParts(guid: string): string[] | null {
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(guid)) return null;
  return Buffer.from(guid, 'base64').toString('utf8').split('|');
}

export function conditionEntity(data: SandboxData, guid: string, visible: ReadonlySet<number>): EntityOutlineSource | null {
  if (data.behaviours.conditionEntities !== 'family-tagged') return null;
  const parts = guidParts(guid);
  if (parts === null || parts.length !== 4 || parts[1] !== 'AIOPS' || parts[2] !== 'CONDITION') return null;
  const accountId = Number(parts[0]);
  const condition = data.alerts.conditions.find((item) => item.accountId === accountId && String(item.id) === parts[3]);
  const account = data.accounts.find((item) => item.id === accountId);
  if (condition === undefined || account === undefined || !visible.has(accountId) || conditionEntityGuid(condition) !== guid.replace(/=+$/, '')) return null;
  const policy = data.alerts.policies.find((item) => item.id === condition.policyId);
  const at = policy?.updatedAt ?? 0;
  return {
    __typename: 'GenericEntity',
    guid: conditionEntityGuid(condition),
    name: typeof condition.fields.name === 'string' ? condition.fields.name : String(condition.id),
    accountId,
    account: { id: account.id, name: account.name },
    domain: 'AIOPS',
    type: 'CONDITION',
    entityType: 'GENERIC_ENTITY',
    reporting: true,
    alertSeverity: 'NOT_CONFIGURED',
    permalink: `https://one.newrelic.com/redirect/entity/${conditionEntityGuid(condition)}`,
    tags: [
      { key: 'conditionFamily', values: [condition.family] },
      { key: 'account', values: [account.name] },
    ],
    firstIndexedAt: at,
    indexedAt: at,
    lastReportingChangeAt: at,
  };
}
