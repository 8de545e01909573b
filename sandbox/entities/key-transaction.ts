/** Key transactions (`APM` / `KEY_TRANSACTION`): one transaction of an APM app, watched on its own. */
import { entityGuid } from '../ids.ts';
import type { SandboxKeyTransaction } from '../model.ts';
import { toEntityOutline, type ApmEntityOutlineSource } from './apm-application.ts';
import { commonOutline, type EntityKind, type EntityOutlineSource, type EntitySearchFields, searchFieldsOf } from './kind.ts';

export interface KeyTransactionEntitySource extends EntityOutlineSource {
  __typename: 'KeyTransactionEntity';
  apdexTarget: number;
  browserApdexTarget: number | null;
  metricName: string;
  /** `entity` is null once the parent app is gone (deleted), as a dangling relationship would be. */
  application: { guid: string; entity: ApmEntityOutlineSource | null };
}

function searchFields(keyTransaction: SandboxKeyTransaction): EntitySearchFields {
  return searchFieldsOf('APM', 'KEY_TRANSACTION', keyTransaction);
}

export const keyTransactionKind: EntityKind<SandboxKeyTransaction> = {
  domain: 'APM',
  type: 'KEY_TRANSACTION',
  list: (data) => data.keyTransactions,
  searchFields,
  outline: (keyTransaction, { account }) =>
    commonOutline(searchFields(keyTransaction), account, { __typename: 'KeyTransactionEntityOutline', entityType: 'KEY_TRANSACTION_ENTITY' }, keyTransaction.lastReportingChangeAt),
  entity: (keyTransaction, { account, visibleApp }): KeyTransactionEntitySource => {
    const app = visibleApp(keyTransaction.appId);
    return {
      ...commonOutline(searchFields(keyTransaction), account, { __typename: 'KeyTransactionEntity', entityType: 'KEY_TRANSACTION_ENTITY' }, keyTransaction.lastReportingChangeAt),
      __typename: 'KeyTransactionEntity',
      apdexTarget: keyTransaction.apdexTarget,
      browserApdexTarget: keyTransaction.browserApdexTarget,
      metricName: keyTransaction.metricName,
      application: {
        guid: entityGuid(keyTransaction.accountId, 'APM', 'APPLICATION', keyTransaction.appId),
        // A key transaction lives in its app's account, so the app's account is this one.
        entity: app ? toEntityOutline(app, account) : null,
      },
    };
  },
};
