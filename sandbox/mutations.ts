/**
 * The sandbox's NerdGraph mutations: NerdGraph's validation and answers, applied through the
 * shared write operations (writes.ts), so the legacy face sees every write too.
 *
 * Account scoping is that of reads: a key writes only to the accounts it sees.
 * - agentApplicationSettingsUpdate reports problems in the payload's `errors` (NOT_FOUND,
 *   ACCESS_DENIED, INVALID_INPUT with `field`), never as GraphQL errors; nothing is applied
 *   when any is reported.
 * - The other mutations answer problems as GraphQL errors with `extensions.errorClass`.
 * changeTrackingCreateEvent's shapes and kinds are change-tracking.ts's.
 */
import { GraphQLError } from 'graphql';
import { issueAction } from './ai-issues-fields.ts';
import { guidParts } from './ids.ts';
import type { SandboxIndex, SandboxRequestContext } from './actor.ts';
import { forbidden, invalidInput } from './nerdgraph-errors.ts';
import { evaluate, parseEntitySearchQuery } from './entity-search.ts';
import { mobileApplicationKind, type EntityOutlineSource } from './entities/index.ts';
import { apmSearchFields, toEntityOutline } from './entities/apm-application.ts';
import type { SandboxAccount, SandboxApp } from './model.ts';
import { browserLoaderOf } from './browser-loader.ts';
import { nerdgraphApp } from './divergence.ts';
import { recordChangeTrackingDetails } from './nrql/engine.ts';
import { TaggingResolver, taggingMutationRoot } from './tagging.ts';
import { CHANGE_TRACKING_MAX_TEXT, deploymentKind, type CreateEventArguments, type DeploymentEventSource } from './change-tracking.ts';
import { createBrowserApplication, createMobileApplication, recordDeployment, removeApplication, updateApplication, type ApplicationChanges } from './writes.ts';

const DAY_MS = 24 * 60 * 60 * 1000;

export const MUTATION_MESSAGES = {
  entityNotFound: 'Entity not found',
  activelyReporting: 'Cannot delete an application that is actively reporting data',
  timestampRange: 'timestamp can not be more than 24 hours in the past or future. Make sure to use epoch milliseconds for timestamp.',
  versionRequired: 'categoryFields.deployment.version is required for the Deployment category',
  nameBlank: 'name must not be blank',
} as const;

function notFound(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { errorClass: 'NOT_FOUND' } });
}

// ---------------------------------------------------------------- argument shapes

type Loader = 'LITE' | 'NONE' | 'PRO' | 'SPA';

interface SettingsUpdateArguments {
  guid: string;
  settings: {
    alias?: string | null;
    apmConfig?: { apdexTarget?: number | null; useServerSideConfig?: boolean | null } | null;
    browserConfig?: { apdexTarget?: number | null } | null;
    browserMonitoring?: { loader?: Loader | null } | null;
  };
}

interface SettingsUpdateError {
  description: string;
  errorClass: 'ACCESS_DENIED' | 'INVALID_INPUT' | 'NOT_FOUND';
  field: string | null;
}

interface SettingsUpdateResult {
  guid: string;
  alias: string | null;
  apmSettings: { alias: string; apmConfig: { apdexTarget: number; useServerSideConfig: boolean } } | null;
  browserSettings: {
    browserConfig: { apdexTarget: number | null };
    browserMonitoring: { loader: Loader };
  } | null;
  errors: SettingsUpdateError[];
}

interface BrowserSettingsInput {
  cookiesEnabled?: boolean | null;
  distributedTracingEnabled?: boolean | null;
  loaderType?: Loader | null;
}

// ---------------------------------------------------------------- resolver

/** The mutation fields of one request (graphql-js calls them with the field arguments). */
export class MutationResolver {
  private readonly visible: Set<number>;

  private readonly index: SandboxIndex;
  /** The sandbox clock: the default event timestamp and the ±24 h window around it. */
  private readonly now: () => number;

  constructor(
    index: SandboxIndex,
    context: SandboxRequestContext,
    now: () => number = Date.now,
  ) {
    this.index = index;
    this.now = now;
    this.visible = new Set(context.accountIds);
  }

  /** aiIssuesAckIssue / aiIssuesResolveIssue (ai-issues-fields.ts): a key acts only on the accounts it sees. */
  aiIssueAction({ accountId, issueId }: { accountId: number; issueId: string }, action: 'ACK' | 'RESOLVE') {
    if (!this.visible.has(accountId)) throw forbidden(`You are not authorized to act on account ${accountId}`);
    return issueAction(this.index.data, accountId, issueId, action, this.now());
  }

  agentApplicationSettingsUpdate({ guid, settings }: SettingsUpdateArguments): SettingsUpdateResult {
    const refused = (error: SettingsUpdateError): SettingsUpdateResult => ({ guid, alias: null, apmSettings: null, browserSettings: null, errors: [error] });
    // The account is read from the GUID first, so a foreign GUID is ACCESS_DENIED whether or
    // not the entity exists (a key cannot probe other accounts' entities).
    const decoded = guidParts(guid);
    if (decoded && !this.visible.has(decoded.accountId)) {
      return refused({ errorClass: 'ACCESS_DENIED', field: 'guid', description: `You do not have access to entities of account ${decoded.accountId}` });
    }
    const app = this.visibleApp(guid);
    if (!app) return refused({ errorClass: 'NOT_FOUND', field: 'guid', description: `${MUTATION_MESSAGES.entityNotFound}: ${guid}` });

    const errors: SettingsUpdateError[] = [];
    const invalid = (field: string, description: string): void => {
      errors.push({ errorClass: 'INVALID_INPUT', field, description });
    };
    const alias = settings.alias ?? undefined;
    if (alias !== undefined && alias.trim() === '') invalid('alias', 'alias must not be blank');
    const apdexTarget = settings.apmConfig?.apdexTarget ?? undefined;
    if (apdexTarget !== undefined && !validApdex(apdexTarget)) invalid('apmConfig.apdexTarget', 'apdexTarget must be greater than 0 and at most 100');
    const browserApdexTarget = settings.browserConfig?.apdexTarget ?? undefined;
    if (browserApdexTarget !== undefined && !validApdex(browserApdexTarget)) {
      invalid('browserConfig.apdexTarget', 'apdexTarget must be greater than 0 and at most 100');
    }
    if (errors.length > 0) return { guid, alias: null, apmSettings: null, browserSettings: null, errors };

    const loader = settings.browserMonitoring?.loader ?? undefined;
    const changes: ApplicationChanges = {
      ...(alias !== undefined && { name: alias }),
      ...(apdexTarget !== undefined && { apdexTarget }),
      ...(browserApdexTarget !== undefined && { endUserApdexTarget: browserApdexTarget }),
      // The loader as given (browser-loader.ts): PRO stays PRO, the same loader again changes nothing.
      ...(loader !== undefined && { browserLoader: loader }),
      ...(settings.apmConfig?.useServerSideConfig != null && { serverSideConfig: settings.apmConfig.useServerSideConfig }),
    };
    if (Object.keys(changes).length > 0) updateApplication(this.index.data, app, changes);
    return {
      guid,
      alias: app.name,
      apmSettings: { alias: app.name, apmConfig: { apdexTarget: app.apdexTarget, useServerSideConfig: app.serverSideConfig } },
      browserSettings: {
        browserConfig: { apdexTarget: app.browser?.apdexTarget ?? null },
        browserMonitoring: { loader: browserLoaderOf(app) },
      },
      errors: [],
    };
  }

  agentApplicationDelete({ guid }: { guid: string }): { success: boolean } {
    const app = this.visibleApp(guid);
    if (!app) throw notFound(MUTATION_MESSAGES.entityNotFound);
    if (app.reporting) throw invalidInput(MUTATION_MESSAGES.activelyReporting);
    removeApplication(this.index.data, app);
    return { success: true };
  }

  changeTrackingCreateEvent({ changeTrackingEvent: event, dataHandlingRules }: CreateEventArguments): {
    changeTrackingEvent: DeploymentEventSource;
    messages: string[];
  } {
    const flags = new Set(dataHandlingRules?.validationFlags ?? []);
    const kind = deploymentKind(event.categoryAndTypeData.kind, flags.has('ALLOW_CUSTOM_CATEGORY_OR_TYPE'));
    const deployment = event.categoryAndTypeData.categoryFields?.deployment ?? null;
    if (!deployment || deployment.version.trim() === '') throw invalidInput(MUTATION_MESSAGES.versionRequired);
    const now = this.now();
    const timestamp = event.timestamp ?? now;
    if (Math.abs(timestamp - now) > DAY_MS) throw invalidInput(MUTATION_MESSAGES.timestampRange);
    const app = this.searchOne(event.entitySearch.query);

    // Text fields: refused when FAIL_ON_FIELD_LENGTH is set, otherwise trimmed with a message.
    const messages: string[] = [];
    const text = (field: string, value: string | null | undefined): string | null => {
      if (value === undefined || value === null) return null;
      if (value.length <= CHANGE_TRACKING_MAX_TEXT) return value;
      if (flags.has('FAIL_ON_FIELD_LENGTH')) {
        throw invalidInput(`${field} must be shorter than ${CHANGE_TRACKING_MAX_TEXT + 1} characters`);
      }
      messages.push(`${field} was longer than ${CHANGE_TRACKING_MAX_TEXT} characters and has been trimmed`);
      return `${value.slice(0, CHANGE_TRACKING_MAX_TEXT - 1)}…`;
    };
    const version = text('version', deployment.version) as string;
    const changelog = text('changelog', deployment.changelog);
    const commit = text('commit', deployment.commit);
    const deepLink = text('deepLink', deployment.deepLink);
    const description = text('description', event.description);
    const shortDescription = text('shortDescription', event.shortDescription);
    const user = text('user', event.user);
    const groupId = text('groupId', event.groupId);

    const recorded = recordDeployment(
      this.index.data,
      app,
      { revision: version, changelog, description, user, timestamp },
      'ChangeTrackingEvent',
    );
    recordChangeTrackingDetails(this.index.data, recorded.changeTrackingId, { type: kind.type, commit, deepLink, shortDescription, groupId });
    return {
      changeTrackingEvent: {
        __typename: 'ChangeTrackingDeploymentEvent',
        changeTrackingId: recorded.changeTrackingId,
        category: 'Deployment',
        type: kind.type,
        categoryAndType: kind.categoryAndType,
        timestamp: recorded.timestamp,
        user,
        description,
        shortDescription,
        groupId,
        customAttributes: event.customAttributes ?? null,
        entity: toEntityOutline(nerdgraphApp(app, this.index.data), this.accountOf(app)),
        version,
        changelog,
        commit,
        deepLink,
      },
      messages,
    };
  }

  agentApplicationCreateMobile({ accountId, name }: { accountId: number; name: string }): {
    accountId: number;
    applicationToken: string;
    entityOutline: EntityOutlineSource | null;
    guid: string;
    name: string;
  } {
    const account = this.writableAccount(accountId);
    if (name.trim() === '') throw invalidInput(MUTATION_MESSAGES.nameBlank);
    const created = createMobileApplication(this.index.data, accountId, name);
    const mobileApp = this.index.data.mobileApps.find((app) => app.guid === created.guid);
    return {
      accountId: created.accountId,
      applicationToken: created.applicationToken ?? '',
      // The new app in the same account: its outline needs no other lookups.
      entityOutline: mobileApp ? mobileApplicationKind.outline(mobileApp, { account, visibleApp: () => undefined }) : null,
      guid: created.guid,
      name: created.name,
    };
  }

  agentApplicationCreateBrowser({ accountId, name, settings }: { accountId: number; name: string; settings?: BrowserSettingsInput | null }): {
    guid: string;
    name: string;
    settings: { cookiesEnabled: boolean; distributedTracingEnabled: boolean; loaderScript: string | null; loaderType: Loader };
  } {
    this.writableAccount(accountId);
    if (name.trim() === '') throw invalidInput(MUTATION_MESSAGES.nameBlank);
    const created = createBrowserApplication(this.index.data, accountId, name);
    // NerdGraph's defaults: cookies on, distributed tracing on, the SPA loader.
    const loaderType = settings?.loaderType ?? 'SPA';
    return {
      guid: created.guid,
      name: created.name,
      settings: {
        cookiesEnabled: settings?.cookiesEnabled ?? true,
        distributedTracingEnabled: settings?.distributedTracingEnabled ?? true,
        loaderScript: loaderType === 'NONE' ? null : (created.loaderScript ?? null),
        loaderType,
      },
    };
  }

  /** Labels: the tagging mutations (tagging.ts), scoped like the others. */
  tagging(): TaggingResolver {
    return new TaggingResolver(this.index, this.visible);
  }

  // ------------------------------------------------ helpers

  /** The APM app with this GUID in a visible account, or undefined (unknown and foreign alike). */
  private visibleApp(guid: string): SandboxApp | undefined {
    const app = this.index.appsByGuid.get(String(guid));
    return app && this.visible.has(app.accountId) ? app : undefined;
  }

  /** As for reads: unknown and foreign accounts answer alike. */
  private writableAccount(id: number): SandboxAccount {
    const account = this.index.accountsById.get(id);
    if (!account || !this.visible.has(id)) throw forbidden(`You are not authorized to query account ${id}`);
    return account;
  }

  /** changeTrackingCreateEvent's entitySearch.query: exactly one visible APM application. */
  private searchOne(queryText: string): SandboxApp {
    const parsed = parseEntitySearchQuery(queryText);
    const matches: SandboxApp[] = [];
    for (const app of this.index.appsByName) {
      if (!this.visible.has(app.accountId)) continue;
      if (evaluate(parsed, apmSearchFields(nerdgraphApp(app, this.index.data)), { accountName: this.accountOf(app).name })) matches.push(app);
      if (matches.length > 1) break;
    }
    if (matches.length === 0) throw invalidInput(`No entity found for entitySearch query: ${queryText}`);
    if (matches.length > 1) throw invalidInput(`entitySearch query must match exactly one entity, but matched more than one: ${queryText}`);
    return matches[0] as SandboxApp;
  }

  private accountOf(app: SandboxApp): SandboxAccount {
    const account = this.index.accountsById.get(app.accountId);
    if (!account) throw new Error(`sandbox data is inconsistent: app ${app.id} has unknown account ${app.accountId}`);
    return account;
  }
}

function validApdex(value: number): boolean {
  return Number.isFinite(value) && value > 0 && value <= 100;
}

/** The mutation root fields, for graphql-js's rootValue. */
export function mutationRoot(resolver: MutationResolver): Record<string, (args: never) => unknown> {
  return {
    agentApplicationSettingsUpdate: (args: SettingsUpdateArguments) => resolver.agentApplicationSettingsUpdate(args),
    agentApplicationDelete: (args: { guid: string }) => resolver.agentApplicationDelete(args),
    changeTrackingCreateEvent: (args: CreateEventArguments) => resolver.changeTrackingCreateEvent(args),
    agentApplicationCreateMobile: (args: { accountId: number; name: string }) => resolver.agentApplicationCreateMobile(args),
    agentApplicationCreateBrowser: (args: { accountId: number; name: string; settings?: BrowserSettingsInput | null }) =>
      resolver.agentApplicationCreateBrowser(args),
    // Labels (tagging.ts).
    ...taggingMutationRoot(resolver.tagging()),
    // Alert issues (ai-issues.ts).
    aiIssuesAckIssue: (args: { accountId: number; issueId: string }) => resolver.aiIssueAction(args, 'ACK'),
    aiIssuesResolveIssue: (args: { accountId: number; issueId: string }) => resolver.aiIssueAction(args, 'RESOLVE'),
  };
}
