/**
 * Every entity kind the sandbox's NerdGraph face serves. To add a kind: write its declaration
 * (an EntityKind, see kind.ts), list it here, and add its types to schema.graphql.
 */
import { apmApplicationKind } from './apm-application.ts';
import { browserApplicationKind } from './browser-application.ts';
import { keyTransactionKind } from './key-transaction.ts';
import type { EntityKind } from './kind.ts';
import { mobileApplicationKind } from './mobile-application.ts';

export const ENTITY_KINDS: ReadonlyArray<EntityKind<unknown>> = [
  apmApplicationKind,
  keyTransactionKind,
  mobileApplicationKind,
  browserApplicationKind,
];

export type { EntityKind, EntitySearchFields, EntityViewContext, EntityOutlineSource } from './kind.ts';
export { apmApplicationKind, browserApplicationKind, keyTransactionKind, mobileApplicationKind };
