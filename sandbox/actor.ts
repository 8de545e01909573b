/**
 * Resolvers for `actor`: everything a request sees is limited to the accounts its API key
 * can see, the way NerdGraph scopes a user key.
 */
import { GraphQLError } from 'graphql';
import { forbidden, invalidInput } from './nerdgraph-errors.ts';
import { aiIssuesFields, alertsFields } from './ai-issues-fields.ts';
import { evaluate, parseEntitySearchQuery } from './entity-search.ts';
import { settleIngest } from './ingest.ts';
import { conditionEntity } from './condition-entities.ts';
import { ENTITY_KINDS, type EntityKind, type EntityOutlineSource, type EntitySearchFields, type EntityViewContext } from './entities/index.ts';
import type { SandboxAccount, SandboxApp, SandboxData } from './model.ts';
import { NrqlError, runNrql, type NrqlMetadata } from './nrql/engine.ts';
import { NrqlSyntaxError } from './nrql/parser.ts';
// Query cost and NerdGraph's TIMEOUT (nrql/cost.ts).
import { afterQueryCost, answerWidth } from './nrql/cost.ts';
import { MAX_PAGE_SIZE, decodeCursor, hashText, normaliseSort, pageOf, sortEntities, type SortArguments } from './search-paging.ts';
// Users.
import { keyUserOf, organizationOf } from './users.ts';
// alerts_channels: aiNotifications, aiWorkflows, alerts.policy (notifications/fields.ts).
import { notificationAccountFields } from './notifications/fields.ts';

/** NerdGraph's documented limit for actor.entities. */
export const MAX_ENTITIES_GUIDS = 25;
/** NerdGraph's documented limit for actor.nrql(accounts). */
export const MAX_NRQL_ACCOUNTS = 5;

/**
 * Lookups over the sandbox data, so requests never scan or sort the whole data set twice.
 * Writes (writes.ts) bump `data.writes.version`; the lookups are rebuilt on the first read
 * after a write, so renamed apps re-sort and deleted apps vanish from every read.
 */
export interface SandboxIndex {
  readonly data: SandboxData;
  readonly accountsById: Map<number, SandboxAccount>;
  readonly appsById: Map<number, SandboxApp>;
  readonly appsByGuid: Map<string, SandboxApp>;
  /** Every app in ascending name order (ties, possible after a rename, by id: the order stays total). */
  readonly appsByName: SandboxApp[];
  /** Entities of every kind (entities/index.ts) by GUID. */
  readonly entitiesByGuid: Map<string, IndexedEntity>;
  /** Entities of every kind in ascending name order; ties (an APM app and its browser app share a name) by GUID. */
  readonly entitiesByName: IndexedEntity[];
}

/** One entity of any kind, with the values search filters and sorts on. */
export interface IndexedEntity {
  kind: EntityKind<unknown>;
  item: unknown;
  fields: EntitySearchFields;
}

interface IndexSnapshot {
  version: number;
  accountsById: Map<number, SandboxAccount>;
  appsById: Map<number, SandboxApp>;
  appsByGuid: Map<string, SandboxApp>;
  appsByName: SandboxApp[];
  entitiesByGuid: Map<string, IndexedEntity>;
  entitiesByName: IndexedEntity[];
}

function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function snapshotOf(data: SandboxData): IndexSnapshot {
  const entities = ENTITY_KINDS.flatMap((kind) => kind.list(data).map((item) => ({ kind, item, fields: kind.searchFields(item) })));
  return {
    version: data.writes.version,
    accountsById: new Map(data.accounts.map((account) => [account.id, account])),
    appsById: new Map(data.apps.map((app) => [app.id, app])),
    appsByGuid: new Map(data.apps.map((app) => [app.guid, app])),
    appsByName: [...data.apps].sort((a, b) => compareText(a.name, b.name) || a.id - b.id),
    entitiesByGuid: new Map(entities.map((entity) => [entity.fields.guid, entity])),
    entitiesByName: entities.sort((a, b) => compareText(a.fields.name, b.fields.name) || compareText(a.fields.guid, b.fields.guid)),
  };
}

class LiveSandboxIndex implements SandboxIndex {
  private snapshot: IndexSnapshot;

  readonly data: SandboxData;

  constructor(data: SandboxData) {
    this.data = data;
    this.snapshot = snapshotOf(data);
  }

  get accountsById(): Map<number, SandboxAccount> {
    return this.current().accountsById;
  }

  get appsById(): Map<number, SandboxApp> {
    return this.current().appsById;
  }

  get entitiesByGuid(): Map<string, IndexedEntity> {
    return this.current().entitiesByGuid;
  }

  get entitiesByName(): IndexedEntity[] {
    return this.current().entitiesByName;
  }

  get appsByGuid(): Map<string, SandboxApp> {
    return this.current().appsByGuid;
  }

  get appsByName(): SandboxApp[] {
    return this.current().appsByName;
  }

  private current(): IndexSnapshot {
    // Tag writes the ingest lag held back and has now let through count as writes (ingest.ts).
    settleIngest(this.data);
    if (this.snapshot.version !== this.data.writes.version) this.snapshot = snapshotOf(this.data);
    return this.snapshot;
  }
}

export function indexSandboxData(data: SandboxData): SandboxIndex {
  return new LiveSandboxIndex(data);
}

/** Per-request GraphQL context, built after the API key has been checked. */
export interface SandboxRequestContext {
  apiKey: string;
  /** Accounts the key can see, home account first. */
  accountIds: number[];
}

interface EntitySearchArguments extends SortArguments {
  query?: string | null;
  options?: { caseSensitiveTagMatching?: boolean | null; limit?: number | null; tagFilter?: string[] | null } | null;
}

interface EntitySearchSource {
  count: number;
  query: string | null;
  results(args: { cursor?: string | null }): { entities: EntityOutlineSource[]; nextCursor: string | null };
}

/**
 * Arguments of Account.nrql and Actor.nrql. async and options are accepted and ignored: the
 * sandbox never answers queryProgress. `timeout` bounds the query's simulated cost when the
 * `nrqlTimeouts` behaviour is on (nrql/cost.ts).
 */
interface NrqlArguments {
  query: string;
  async?: boolean | null;
  timeout?: number | null;
  options?: { eventNamespaces?: string[] | null } | null;
}

/** NrdbResultContainer and CrossAccountNrdbResultContainer: the fields the sandbox models. */
interface NrdbResultContainerSource {
  results: unknown[];
  metadata: NrqlMetadata;
  nrql: string;
}

/** An Account: its outline plus the NRQL it can run (graphql-js calls `nrql` with the field's args). */
interface AccountSource extends SandboxAccount {
  nrql(args: NrqlArguments): NrdbResultContainerSource | Promise<NrdbResultContainerSource>;
  aiIssues(): ReturnType<typeof aiIssuesFields>;
  alerts(): ReturnType<typeof alertsFields>;
}

/**
 * The `actor` object of one request. graphql-js's default resolver calls these methods
 * with (args, context, info), so the class needs no resolver map.
 */
export class ActorResolver {
  private readonly visible: Set<number>;

  private readonly index: SandboxIndex;
  private readonly context: SandboxRequestContext;
  /** The sandbox clock: NRQL's default time window and which timeslices exist yet. */
  private readonly now: () => number;

  constructor(
    index: SandboxIndex,
    context: SandboxRequestContext,
    now: () => number = Date.now,
  ) {
    this.index = index;
    this.context = context;
    this.now = now;
    this.visible = new Set(context.accountIds);
  }

  account({ id }: { id: number }): AccountSource {
    const account = this.visibleAccount(id);
    return {
      id: account.id,
      name: account.name,
      nrql: ({ query, timeout }) => this.nrqlOver(query, [account.id], timeout),
      // alerts_channels (notifications/fields.ts)
      ...notificationAccountFields(this.index.data, account.id),
      // Alert issues and incidents, policies and NRQL conditions (ai-issues-fields.ts).
      aiIssues: () => aiIssuesFields(this.index.data, account.id, this.now()),
      alerts: () => alertsFields(this.index.data, account.id),
    };
  }

  /** Cross-account NRQL: every account must be visible to the key, as for account(). */
  nrql({ accounts, query, timeout }: NrqlArguments & { accounts: readonly number[] }): NrdbResultContainerSource | Promise<NrdbResultContainerSource> {
    const ids = [...new Set(accounts)];
    if (ids.length === 0 || ids.length > MAX_NRQL_ACCOUNTS) {
      throw invalidInput(`accounts must list 1 to ${MAX_NRQL_ACCOUNTS} accounts, got ${ids.length}`);
    }
    for (const id of ids) this.visibleAccount(id);
    return this.nrqlOver(query, ids, timeout);
  }

  accounts(): SandboxAccount[] {
    return this.context.accountIds.flatMap((id) => {
      const account = this.index.accountsById.get(id);
      return account ? [{ id: account.id, name: account.name }] : [];
    });
  }

  /** Any kind's full entity; null for unknown GUIDs and other accounts' entities alike. */
  entity({ guid }: { guid: string }): EntityOutlineSource | null {
    const entity = this.index.entitiesByGuid.get(String(guid));
    if (!entity) return conditionEntity(this.index.data, String(guid), this.visible);
    if (!this.visible.has(entity.fields.accountId)) return null;
    return entity.kind.entity(entity.item, this.viewContext(entity));
  }

  entities({ guids }: { guids: ReadonlyArray<string | null> }): Array<EntityOutlineSource | null> {
    if (guids.length > MAX_ENTITIES_GUIDS) {
      throw invalidInput(`Too many guids: entities accepts at most ${MAX_ENTITIES_GUIDS}, got ${guids.length}`);
    }
    return guids.map((guid) => (guid === null ? null : this.entity({ guid })));
  }

  entitySearch(args: EntitySearchArguments): EntitySearchSource {
    // NerdGraph wants a query or a queryBuilder; the sandbox models only the query string.
    if (args.query === undefined || args.query === null) {
      throw new GraphQLError('Invalid query: supply query or queryBuilder', { extensions: { errorClass: 'INVALID_INPUT' } });
    }
    const queryText = args.query;
    const parsed = parseEntitySearchQuery(queryText);
    const caseSensitiveTagMatching = args.options?.caseSensitiveTagMatching === true;
    const sort = normaliseSort(args);
    const limit = args.options?.limit;
    // options.limit "can only lower the default limits".
    const pageSize = typeof limit === 'number' && limit >= 1 && limit < MAX_PAGE_SIZE ? limit : MAX_PAGE_SIZE;

    const matches = sortEntities(
      this.index.entitiesByName.filter(
        ({ fields }) =>
          this.visible.has(fields.accountId) &&
          evaluate(parsed, fields, { accountName: this.accountWithId(fields.accountId).name, caseSensitiveTagMatching }),
      ),
      sort,
      (entity) => entity.fields,
    );
    const searchHash = hashText(
      JSON.stringify([queryText, sort, [...this.visible].sort(), pageSize, caseSensitiveTagMatching]),
    );
    return {
      count: matches.length,
      query: args.query ?? null,
      results: ({ cursor }) => {
        const page = pageOf(matches, decodeCursor(cursor, searchHash, matches.length), pageSize, searchHash);
        return {
          entities: page.items.map((entity) => entity.kind.outline(entity.item, this.viewContext(entity))),
          nextCursor: page.nextCursor,
        };
      },
    };
  }

  // Users: the organization of the key's home account (users.ts).
  organization(): object | null {
    return organizationOf(this.index.data, this.context.accountIds[0]);
  }

  /** NerdGraph's `user` is whoever owns the key; several keys may share one (users.ts keyUserOf). */
  user(): { id: number; name: string; email: string; createdAt: number; timeZoneName: string } {
    return { ...keyUserOf(this.index.data, this.context.apiKey), createdAt: 1_600_000_000, timeZoneName: 'Etc/UTC' };
  }

  private visibleAccount(id: number): SandboxAccount {
    const account = this.index.accountsById.get(id);
    // Unknown and foreign accounts answer alike, so a key cannot probe which ids exist.
    if (!account || !this.visible.has(id)) throw forbidden(`You are not authorized to query account ${id}`);
    return account;
  }

  /**
   * Runs NRQL over the given accounts' data; a bad query is the nrql field's INVALID_INPUT error.
   * With `nrqlTimeouts` on, the answer comes after the query's simulated cost, or the field fails
   * with NerdGraph's TIMEOUT error past `timeout` (nrql/cost.ts); only this field fails.
   */
  private nrqlOver(query: string, accountIds: number[], timeout?: number | null): NrdbResultContainerSource | Promise<NrdbResultContainerSource> {
    try {
      const outcome = runNrql(query, { data: this.index.data, accountIds, now: this.now() });
      const answer = { results: outcome.results, metadata: outcome.metadata, nrql: query };
      const behaviours = this.index.data.behaviours;
      if (!behaviours.nrqlTimeouts) return answer;
      const { begin, end } = outcome.metadata.timeWindow;
      return afterQueryCost(answer, { windowMs: end - begin, width: answerWidth(outcome.results) }, { timeout, clockScale: behaviours.nrqlClockScale });
    } catch (error) {
      if (error instanceof NrqlSyntaxError || error instanceof NrqlError) throw invalidInput(error.message);
      throw error;
    }
  }

  private accountWithId(accountId: number): SandboxAccount {
    const account = this.index.accountsById.get(accountId);
    if (!account) throw new Error(`sandbox data is inconsistent: an entity has unknown account ${accountId}`);
    return account;
  }

  private viewContext(entity: IndexedEntity): EntityViewContext {
    return {
      account: this.accountWithId(entity.fields.accountId),
      visibleApp: (id) => {
        const app = this.index.appsById.get(id);
        return app && this.visible.has(app.accountId) ? app : undefined;
      },
      instancePageSize: this.index.data.behaviours.instancePageSize,
    };
  }
}
