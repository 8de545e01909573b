/**
 * The shape of one entity kind the sandbox serves through NerdGraph. Each kind is one
 * declaration (see index.ts): where its entities live in SandboxData, the values entity search
 * filters and sorts on, and the source objects graphql-js resolves its outline and full entity
 * from. Adding a kind is one declaration plus its types in schema.graphql.
 */
import type { AlertSeverity, SandboxAccount, SandboxApp, SandboxData } from '../model.ts';

const DAY_MS = 24 * 60 * 60 * 1000;

/** What entity search filters and sorts on (entity-search.ts, search-paging.ts). */
export interface EntitySearchFields {
  domain: string;
  type: string;
  accountId: number;
  /** The REST v2 id. */
  domainId: number;
  guid: string;
  name: string;
  reporting: boolean;
  alertSeverity: AlertSeverity;
  /** Tags besides `account` (which comes from the account's name). */
  tags: Record<string, string[]>;
}

/** The fields every sandbox entity model has (apps, key transactions, mobile and browser apps). */
interface ModelledEntity {
  accountId: number;
  id: number;
  guid: string;
  name: string;
  reporting: boolean;
  alertSeverity: AlertSeverity;
}

/** An entity's search fields: its domain and type, its model fields, and any tags of its own. */
export function searchFieldsOf(domain: string, type: string, item: ModelledEntity, tags: Record<string, string[]> = {}): EntitySearchFields {
  return {
    domain,
    type,
    accountId: item.accountId,
    domainId: item.id,
    guid: item.guid,
    name: item.name,
    reporting: item.reporting,
    alertSeverity: item.alertSeverity,
    tags,
  };
}

/** What views may look up besides the entity itself. */
export interface EntityViewContext {
  account: SandboxAccount;
  /** An APM app of a visible account, or undefined (deleted, unknown or foreign alike). */
  visibleApp(id: number): SandboxApp | undefined;
  /** Instances per page of `applicationInstancesV2` (behaviour `instancePageSize`); 0 or absent: one page. */
  instancePageSize?: number;
}

export interface EntityTagSource {
  key: string;
  values: string[];
}

/** The fields every EntityOutline / Entity has; `__typename` picks the concrete GraphQL type. */
export interface EntityOutlineSource {
  __typename: string;
  guid: string;
  name: string;
  accountId: number;
  account: SandboxAccount;
  domain: string;
  type: string;
  entityType: string;
  reporting: boolean;
  alertSeverity: AlertSeverity;
  permalink: string;
  tags: EntityTagSource[];
  firstIndexedAt: number;
  indexedAt: number;
  lastReportingChangeAt: number;
}

/**
 * One entity kind. Method syntax on purpose: it lets a declaration for one model type stand
 * in the registry as EntityKind<unknown> (method parameters are checked bivariantly).
 */
export interface EntityKind<T> {
  readonly domain: string;
  readonly type: string;
  /** Every entity of the kind, in all accounts. */
  list(data: SandboxData): readonly T[];
  searchFields(item: T): EntitySearchFields;
  /** What entitySearch returns. */
  outline(item: T, context: EntityViewContext): EntityOutlineSource;
  /** What actor.entity / actor.entities return. */
  entity(item: T, context: EntityViewContext): EntityOutlineSource;
}

/** The common outline fields, from the search fields and one model timestamp. */
export function commonOutline(
  fields: EntitySearchFields,
  account: SandboxAccount,
  typeNames: { __typename: string; entityType: string },
  lastReportingChangeAt: number,
): EntityOutlineSource {
  return {
    ...typeNames,
    guid: fields.guid,
    name: fields.name,
    accountId: fields.accountId,
    account: { id: account.id, name: account.name },
    domain: fields.domain,
    type: fields.type,
    reporting: fields.reporting,
    alertSeverity: fields.alertSeverity,
    permalink: `https://one.newrelic.com/redirect/entity/${fields.guid}`,
    tags: [...Object.entries(fields.tags).map(([key, values]) => ({ key, values })), { key: 'account', values: [account.name] }],
    // The model keeps one timestamp; the others are derived so they stay deterministic.
    firstIndexedAt: lastReportingChangeAt - (30 + (fields.domainId % 300)) * DAY_MS,
    indexedAt: lastReportingChangeAt,
    lastReportingChangeAt,
  };
}
