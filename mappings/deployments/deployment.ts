import { z } from 'zod';
import { checkedParse, V2Error, type OperationContext, type WritePlan, type RememberedDeployment, entityQuery, NrqlResults, parseAnswer, UpstreamError, type V2Body, type BodyObject, type BodyValue, isoSeconds, parseV2Time } from '../../src/mapping-api.ts';
import { EntityTitles } from '../common/entity-titles.ts';
import { deploymentV2Id } from '../common/deployment-id.ts';
import { deploymentEventsQuery } from '../common/deployment-queries.ts';
import { DEPLOYMENT_TITLES } from '../../facts/v2-titles.ts';
import { DEPLOYMENT_LINKS } from '../../facts/v2-values.ts';
import { DEPLOYMENT_RULE_TITLES } from '../../facts/rule-titles.ts';

/**
 * Deployments, shared by the v2 list and create routes and the v0 `deployments.xml`
 * (docs/write-rules.md §4-5): v2's validation rules, the NRQL read of an app's markers, the
 * change-tracking mutation input, and the v2 deployment object.
 */
const HOUR_MS = 3_600_000;
/** Change tracking keeps events for 13 months; v2 listings reach that far back. */
export const DEPLOYMENT_WINDOW_MS = 395 * 24 * HOUR_MS;
/** NerdGraph refuses change-tracking timestamps further than this from now. */
const CHANGE_TRACKING_SKEW_MS = 24 * HOUR_MS;

/**
 * The change-tracking version sent for a v0 deployment without a revision: v0's documented
 * example sends none, and ChangeTrackingDeploymentFieldsInput.version is non-null. Fixed and
 * recognisable, so a listing that reads it back (it is what NerdGraph stores) says no revision
 * was given rather than inventing one.
 */
export const NO_REVISION_VERSION = 'unspecified (v0 deployment without a revision)';

export const DeploymentTitles = {
  missingWrapper: DEPLOYMENT_TITLES.missingWrapper,
  revisionRequired: DEPLOYMENT_TITLES.revisionRequired,
  tooLong: DEPLOYMENT_RULE_TITLES.tooLong,
  fourByte: DEPLOYMENT_RULE_TITLES.fourByte,
  notText: DEPLOYMENT_RULE_TITLES.notText,
  badTimestamp: DEPLOYMENT_RULE_TITLES.badTimestamp,
  future: DEPLOYMENT_RULE_TITLES.future,
  notLatest: DEPLOYMENT_RULE_TITLES.notLatest,
  tooOld: 'Invalid deployment: timestamp can not be more than 24 hours in the past (New Relic change tracking)',
  unconfirmed: 'The deployment may have been recorded, but New Relic did not confirm it: list the deployments before retrying',
} as const;

export interface DeploymentFields {
  /** null: none given, which only the v0 form allows. */
  revision: string | null;
  changelog: string | null;
  description: string | null;
  user: string | null;
  /** Epoch ms, whole seconds. */
  timestamp: number;
  /** Whether the client gave the timestamp (v2 defaulted to the arrival time). */
  explicitTimestamp: boolean;
}

const LIMITS: ReadonlyArray<readonly [keyof DeploymentFields, number]> = [
  ['revision', 127],
  ['changelog', 65_535],
  ['description', 65_535],
  ['user', 31],
];

const codePoints = (value: string): number => [...value].length;

// A code point outside the Basic Multilingual Plane needs 4 bytes in UTF-8 (v2 stored utf8mb3).
const FOUR_BYTE = /[\u{10000}-\u{10FFFF}]/u;

const invalid = (title: string): V2Error => new V2Error(422, title, { kind: 'invalid_deployment' });

/** Text as v2 read it: a string, or a finite number's text; undefined for anything else. */
function textOf(value: BodyValue | undefined): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

/** An optional text field: null when absent or null, 422 when not text. */
function text(fields: BodyObject, key: string): string | null {
  const value: BodyValue | undefined = Object.hasOwn(fields, key) ? fields[key] : undefined;
  if (value === undefined || value === null) return null;
  const found = textOf(value);
  if (found === undefined) throw invalid(DeploymentTitles.notText(key));
  return found;
}

/**
 * v2's rules in v2's order, except "later than the most recent", which needs a read. With
 * `revisionOptional` (the v0 form only), an absent, null or blank revision is none (null).
 */
export function parseDeploymentFields(fields: BodyObject, now: number, options: { revisionOptional?: boolean } = {}): DeploymentFields {
  const raw = Object.hasOwn(fields, 'revision') ? fields.revision : undefined;
  const given = textOf(raw);
  const none = raw === undefined || raw === null || (given !== undefined && given.trim() === '');
  let revision: string | null;
  if (none && options.revisionOptional === true) revision = null;
  else if (given === undefined || given.trim() === '') throw new V2Error(400, DeploymentTitles.revisionRequired, { kind: 'invalid_deployment' });
  else revision = given;
  const parsed = {
    revision,
    changelog: text(fields, 'changelog'),
    description: text(fields, 'description'),
    user: text(fields, 'user'),
  };
  for (const [field, max] of LIMITS) {
    const value = parsed[field as keyof typeof parsed];
    if (value !== null && codePoints(value) > max) throw invalid(DeploymentTitles.tooLong(field, max));
  }
  for (const [field] of LIMITS) {
    const value = parsed[field as keyof typeof parsed];
    if (value !== null && FOUR_BYTE.test(value)) throw invalid(DeploymentTitles.fourByte(field));
  }
  const rawTimestamp = text(fields, 'timestamp');
  let timestamp = Math.floor(now / 1000) * 1000;
  if (rawTimestamp !== null && rawTimestamp.trim() !== '') {
    const at = parseV2Time(rawTimestamp);
    if (at === undefined || at < 0) throw invalid(DeploymentTitles.badTimestamp);
    if (at > now) throw invalid(DeploymentTitles.future);
    timestamp = at;
  }
  return { ...parsed, timestamp, explicitTimestamp: rawTimestamp !== null && rawTimestamp.trim() !== '' };
}

/**
 * The rules that need the app's newest deployment, and NerdGraph's own 24-hour limit. Only an
 * explicit timestamp must follow the newest deployment: a defaulted one is the arrival time,
 * and two deploys in one second are both recorded.
 */
export function checkAgainstHistory(fields: DeploymentFields, latest: number | undefined, now: number): void {
  if (fields.explicitTimestamp && latest !== undefined && fields.timestamp <= latest) throw invalid(DeploymentTitles.notLatest);
  if (fields.explicitTimestamp && fields.timestamp < now - CHANGE_TRACKING_SKEW_MS) throw invalid(DeploymentTitles.tooOld);
}

const EventRow = z.object({
  timestamp: z.number(),
  changeTrackingId: z.string().nullable().optional(),
  deploymentId: z.string().nullable().optional(),
  version: z.union([z.string(), z.number()]).nullable().optional(),
  changelog: z.string().nullable().optional(),
  description: z.string().nullable().optional(),
  user: z.string().nullable().optional(),
});

const DeploymentsAnswer = z.object({
  actor: z.object({
    entity: z.object({ guid: z.string(), accountId: z.number() }).nullable(),
    account: z.object({ nrql: NrqlResults }).nullable(),
  }),
});

/** The v2 deployment object. */
export function v2Deployment(appId: number, id: number, fields: Omit<DeploymentFields, 'explicitTimestamp'>): V2Body {
  return {
    id,
    revision: fields.revision,
    changelog: fields.changelog,
    description: fields.description,
    user: fields.user,
    timestamp: isoSeconds(fields.timestamp),
    links: { application: appId },
  };
}

export const DEPLOYMENT_TOP_LINKS: V2Body = DEPLOYMENT_LINKS;

export interface AppDeployments {
  guid: string;
  /** Newest first. */
  deployments: V2Body[];
  latestTimestamp: number | undefined;
}


/**
 * A stored version as v2 lists it: the fixed version of a v0 deployment sent without a revision
 * is none (null), as v0 recorded it; NerdGraph and the recent writes keep the text itself.
 */
function listedRevision(version: string): string | null {
  return version === NO_REVISION_VERSION ? null : version;
}

/** The app's deployment markers over the retention window (404 when the app is not there). */
export async function readDeployments(ctx: OperationContext, appId: number, guid: string, limit: number | 'MAX'): Promise<AppDeployments> {
  const events = deploymentEventsQuery({ entityGuid: guid, since: ctx.now - DEPLOYMENT_WINDOW_MS, until: ctx.now + 60_000, limit });
  const answer = parseAnswer(DeploymentsAnswer, await ctx.read('ApplicationDeployments', { accountId: ctx.accountId, guid, events }), 'ApplicationDeployments');
  ctx.requireEntity(answer.actor.entity, { guid }, EntityTitles.applicationNotFound);
  const results = answer.actor.account?.nrql?.results;
  if (!results) throw new UpstreamError('upstream_failure', 'ApplicationDeployments: no NRQL results');
  const rows = results.flatMap((row) => {
    const parsed = checkedParse(EventRow, row);
    const markerId = parsed.data?.changeTrackingId ?? parsed.data?.deploymentId;
    return parsed.success && markerId ? [{ ...parsed.data, markerId }] : [];
  });
  const listed = rows.map((row) => ({
    id: deploymentV2Id(row.markerId),
    revision: row.version === null || row.version === undefined ? '' : String(row.version),
    changelog: row.changelog ?? null,
    description: row.description ?? null,
    user: row.user ?? null,
    timestamp: row.timestamp,
  }));
  // Read-your-writes: deployments written here that NRQL does not show yet (ingest lag) are
  // listed too; those it shows are forgotten (src/state/recent-writes.ts).
  const shown = new Set(listed.map((deployment) => deployment.id));
  const remembered = await ctx.recent.deployments(ctx.accountId, appId);
  await ctx.recent.forgetDeployments(ctx.accountId, remembered.filter((deployment) => shown.has(deployment.id)).map((deployment) => deployment.id));
  const merged = [...listed, ...remembered.filter((deployment) => !shown.has(deployment.id))].map((deployment) => ({ ...deployment, revision: listedRevision(deployment.revision) }));
  // NRQL lists raw events newest first already; sorting again keeps that true whatever it did.
  merged.sort((a, b) => b.timestamp - a.timestamp);
  return {
    guid,
    latestTimestamp: merged[0]?.timestamp,
    deployments: merged.map(({ id, ...fields }) => v2Deployment(appId, id, fields)),
  };
}

/** The change-tracking mutation input for one v2 deployment. */
export function deploymentEvent(guid: string, fields: DeploymentFields): Record<string, unknown> {
  return {
    entitySearch: { query: entityQuery([{ field: 'id', op: '=', value: guid }]) },
    categoryAndTypeData: {
      kind: { category: 'Deployment', type: 'Basic' },
      categoryFields: { deployment: { version: fields.revision ?? NO_REVISION_VERSION, ...(fields.changelog === null ? {} : { changelog: fields.changelog }) } },
    },
    ...(fields.description === null ? {} : { description: fields.description }),
    ...(fields.user === null ? {} : { user: fields.user }),
    timestamp: fields.timestamp,
  };
}

const echoed = z.string().nullable().optional();
const CreatedEvent = z.object({
  changeTrackingCreateEvent: z.object({
    changeTrackingEvent: z
      .object({ changeTrackingId: z.string(), timestamp: z.number(), version: echoed, changelog: echoed, description: echoed, user: echoed })
      .nullable(),
  }),
});

/**
 * The created deployment in v2 shape, from NerdGraph's confirmation (a 2xx needs one): what
 * NerdGraph says it stored, so the answer and later listings agree (for a deployment sent
 * without a revision, the version sent in its place).
 */
export function createdDeployment(payload: unknown, appId: number, fields: DeploymentFields): V2Body {
  const event = parseAnswer(CreatedEvent, payload, 'DeploymentCreate').changeTrackingCreateEvent.changeTrackingEvent;
  if (!event) throw new UpstreamError('upstream_failure', 'DeploymentCreate: no event in the answer');
  const stored = (value: string | null | undefined, sent: string | null): string | null => (value === undefined ? sent : value);
  const sentVersion = fields.revision ?? NO_REVISION_VERSION;
  return v2Deployment(appId, deploymentV2Id(event.changeTrackingId), {
    revision: stored(event.version, sentVersion) ?? sentVersion,
    changelog: stored(event.changelog, fields.changelog),
    description: stored(event.description, fields.description),
    user: stored(event.user, fields.user),
    timestamp: event.timestamp,
  });
}

/**
 * The created deployment (as createdDeployment shapes it) as the recent writes keep it: the
 * version NerdGraph stored, NO_REVISION_VERSION included (readDeployments lists that as none).
 */
function rememberedOf(appId: number, created: V2Body): RememberedDeployment {
  const text = (value: unknown): string | null => (typeof value === 'string' ? value : null);
  return {
    appId,
    id: Number(created.id),
    revision: text(created.revision) ?? '',
    changelog: text(created.changelog),
    description: text(created.description),
    user: text(created.user),
    timestamp: Date.parse(String(created.timestamp)),
  };
}

/** Refuse over-long text rather than let change tracking cut it silently. */
export const DEPLOYMENT_RULES = { validationFlags: ['FAIL_ON_FIELD_LENGTH'] } as const;

/**
 * The common tail of both create routes (v2 and v0): v2's rules on the fields, the read the
 * "later than the latest" rule needs (which also 404s an app that is not there), then the one
 * change-tracking mutation; `shape` wraps the created deployment as the route answers it (a
 * deployment sent without a revision, v0 only, is answered with none: the caller's revision,
 * while the recent writes keep what NerdGraph stored, as listings will read it).
 */
export async function planDeploymentCreate(
  ctx: OperationContext,
  app: { id: number; guid: string },
  raw: BodyObject,
  shape: (created: V2Body) => V2Body,
  options: { revisionOptional?: boolean } = {},
): Promise<WritePlan> {
  const fields = parseDeploymentFields(raw, ctx.now, options);
  const { latestTimestamp } = await readDeployments(ctx, app.id, app.guid, 1);
  checkAgainstHistory(fields, latestTimestamp, ctx.now);
  return {
    variables: { event: deploymentEvent(app.guid, fields), rules: DEPLOYMENT_RULES },
    answer: async (payload) => {
      const created = createdDeployment(payload, app.id, fields);
      // Listed by every replica until NRQL shows it, and seen by the next "later than the latest" check.
      await ctx.recent.rememberDeployment(ctx.accountId, rememberedOf(app.id, created));
      return shape(fields.revision === null ? { ...created, revision: null } : created);
    },
  };
}
