/**
 * Labels (REST v2 `/v2/labels`, retired June 30, 2022) as entity tags: label `Category:Name` is
 * the tag key `Category` with the value `Name` on each APM application that carries it
 * (routes-next.md §6). The v2 rules of the label mappings (mappings/labels.*; the sandbox's
 * legacy face keeps its own copy, sandbox/legacy/labels.ts):
 * - which tag keys are labels (one deny rule for system tags),
 * - the `{key}` of `DELETE /v2/labels/{key}`, the PUT/DELETE bodies, and their titles,
 * - the v2 label object from the applications that carry the tag.
 */
import { z } from 'zod';
import { ID_PATTERN, type V2Body, V2Error } from '../../src/mapping-api.ts';
import { missingParameter } from '../../facts/v2-titles.ts';
import { LABEL_RULE_TITLES } from '../../facts/rule-titles.ts';

/** Labels per page of `GET /v2/labels` (v2's own size is UNCONFIRMED; chosen, documented in the mapping; no probe: a page size shows only on an account with more than a page of items, where the route comparison of npm run probe finds the route disagreeing). */
export const LABELS_PAGE_SIZE = 20;

/**
 * At most this many applications in one PUT or DELETE: one tagging mutation each, sent one
 * after the other, and all of them must fit the request's deadline (REQUEST_DEADLINE_MS, 10 s
 * by default). Beyond it the gateway answers 422 and says how to proceed (batches); v2 had no
 * such limit (a documented gap).
 */
export const MAX_LABEL_APPLICATIONS = 25;

/** How a write body arrived: the Rails XML list rule applies to XML only. */
export type LabelBodyKind = 'json' | 'xml' | 'form';

/** NerdGraph's tag limits: a key of at most 128 characters, values of at most 256. */
export const MAX_CATEGORY_LENGTH = 128;
export const MAX_NAME_LENGTH = 256;

/**
 * The one rule for which tags are labels: every tag except the tags New Relic itself puts on
 * entities (account, language, guid, ...), matched exactly (tag keys are case-sensitive, so the
 * label `Language:Java` of v2's own example is a user tag, `language` the agent's).
 */
export const SYSTEM_TAG_KEYS: ReadonlySet<string> = new Set([
  'account',
  'accountId',
  'trustedAccountId',
  'guid',
  'language',
  'agentVersion',
  'host',
  'hostname',
  'entity.guid',
  'entityGuid',
  'instrumentation.provider',
  'instrumentation.name',
  'newrelic.agentVersion',
  'provider',
  'appId',
  'applicationId',
]);

export const isLabelTagKey = (key: string): boolean => !SYSTEM_TAG_KEYS.has(key) && !key.startsWith('nr.') && !key.startsWith('newrelic.');

export const LabelTitles = {
  missingWrapper: missingParameter('label'),
  categoryBlank: LABEL_RULE_TITLES.blank('category'),
  nameBlank: LABEL_RULE_TITLES.blank('name'),
  notText: LABEL_RULE_TITLES.notText,
  categoryColon: LABEL_RULE_TITLES.categoryColon,
  tooLong: LABEL_RULE_TITLES.tooLong,
  reserved: LABEL_RULE_TITLES.reserved,
  badApplications: LABEL_RULE_TITLES.badApplications,
  tooManyApplications: `Invalid label: at most ${MAX_LABEL_APPLICATIONS} applications per request: send the others in further requests of up to ${MAX_LABEL_APPLICATIONS} each`,
  tooManyCarrying: (count: number): string =>
    `The label is on ${count} applications, more than the ${MAX_LABEL_APPLICATIONS} one request can remove it from: name the applications in the body (label.links.applications), up to ${MAX_LABEL_APPLICATIONS} per request, until it is gone`,
  servers: LABEL_RULE_TITLES.servers,
  noApplications: 'Invalid label: at least one application is required (labels are kept as tags on applications)',
  unknownApplication: LABEL_RULE_TITLES.unknownApplication,
  notFound: LABEL_RULE_TITLES.notFound,
  putUnconfirmed:
    'The label may have been applied to some or all of the applications in links.applications, but New Relic did not confirm it: list the labels before retrying',
  deleteUnconfirmed:
    'The label may have been removed from some or all of its applications, but New Relic did not confirm it: list the labels before retrying',
  refused: (detail: string): string => `New Relic refused the label: ${detail.slice(0, 200)}`,
} as const;

const invalid = (title: string): V2Error => new V2Error(422, title, { kind: 'invalid_label' });

/** A parsed `Category:Name`. */
export interface LabelKey {
  category: string;
  name: string;
}

export const labelKeyText = (label: LabelKey): string => `${label.category}:${label.name}`;

/**
 * The `{key}` path segment (raw, percent-encoded as sent): `Category:Name`, split at the first
 * colon. Undefined (a 404: no such label) when it cannot name one.
 */
export function parseLabelKey(raw: string | undefined): LabelKey | undefined {
  if (raw === undefined) return undefined;
  let key: string;
  try {
    key = decodeURIComponent(raw);
  } catch {
    return undefined;
  }
  const colon = key.indexOf(':');
  if (colon <= 0 || colon === key.length - 1) return undefined;
  return { category: key.slice(0, colon), name: key.slice(colon + 1) };
}

const hasOwn = (holder: unknown, key: string): boolean => typeof holder === 'object' && holder !== null && !Array.isArray(holder) && Object.hasOwn(holder, key);
const at = (holder: unknown, key: string): unknown => (hasOwn(holder, key) ? (holder as Record<string, unknown>)[key] : undefined);
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** Text as v2 read it: a string, or a finite number's text; undefined when absent or null. */
function textField(holder: unknown, field: string): string | undefined {
  const value = at(holder, field);
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  throw invalid(LabelTitles.notText(field));
}

/**
 * An id list, deduplicated in the order given: a JSON array; in XML and forms also a single id
 * or a comma-separated text, and in XML Rails' list element. Throws `tooMany` as soon as more
 * than `limit` distinct ids were read (the rest of the list is never looked at).
 */
function idList(raw: unknown, kind: LabelBodyKind, title: string, limit: number, tooMany: string): number[] | undefined {
  let value = raw;
  // Rails' XML list, `<applications type="array"><application>1</application>...`, read as
  // an element holding one kind of element: its items. XML only: a JSON object is no list.
  if (kind === 'xml' && isObject(raw)) {
    const inner = Object.values(raw);
    value = inner.length === 1 ? inner[0] : inner.length === 0 ? [] : raw;
  }
  if (value === undefined || value === null) return undefined;
  if (kind === 'json' && !Array.isArray(value)) throw invalid(title);
  if (value === '') return undefined;
  const ids = new Set<number>();
  const add = (item: unknown): void => {
    const text = typeof item === 'number' && Number.isSafeInteger(item) ? String(item) : typeof item === 'string' ? item.trim() : undefined;
    if (text === undefined || !ID_PATTERN.test(text)) throw invalid(title);
    ids.add(Number(text));
    if (ids.size > limit) throw invalid(tooMany);
  };
  if (Array.isArray(value)) for (const item of value) add(item);
  else if (typeof value === 'string') {
    // Piece by piece: a long text stops at the first id past the limit.
    let from = 0;
    for (;;) {
      const comma = value.indexOf(',', from);
      add(value.slice(from, comma === -1 ? undefined : comma));
      if (comma === -1) break;
      from = comma + 1;
    }
  } else add(value);
  return [...ids];
}

/** `label.links`: the applications (deduplicated, in the order given); servers are refused. */
function linksOf(label: unknown, kind: LabelBodyKind): { applications: number[] | undefined } {
  const links = at(label, 'links');
  if (links === undefined || links === null) return { applications: undefined };
  if (!isObject(links)) throw invalid(LabelTitles.badApplications);
  // Any server at all is refused: the first one read stops the list.
  const servers = idList(at(links, 'servers'), kind, LabelTitles.servers, 0, LabelTitles.servers);
  if (servers !== undefined && servers.length > 0) throw invalid(LabelTitles.servers);
  const applications = idList(at(links, 'applications'), kind, LabelTitles.badApplications, MAX_LABEL_APPLICATIONS, LabelTitles.tooManyApplications);
  return { applications };
}

export interface LabelCreate extends LabelKey {
  /** Deduplicated, in the order given; empty when none were given. */
  applications: number[];
}

/** `PUT /v2/labels` body, checked in v2's order (a missing wrapper first, then each field). */
export function parseLabelCreate(body: unknown, kind: LabelBodyKind = 'json'): LabelCreate {
  const label = at(body, 'label');
  if (!isObject(label)) throw new V2Error(400, LabelTitles.missingWrapper, { kind: 'invalid_label' });
  const category = textField(label, 'category')?.trim();
  if (category === undefined || category === '') throw invalid(LabelTitles.categoryBlank);
  const name = textField(label, 'name')?.trim();
  if (name === undefined || name === '') throw invalid(LabelTitles.nameBlank);
  if (category.includes(':')) throw invalid(LabelTitles.categoryColon);
  if ([...category].length > MAX_CATEGORY_LENGTH) throw invalid(LabelTitles.tooLong('category', MAX_CATEGORY_LENGTH));
  if ([...name].length > MAX_NAME_LENGTH) throw invalid(LabelTitles.tooLong('name', MAX_NAME_LENGTH));
  if (!isLabelTagKey(category)) throw invalid(LabelTitles.reserved(category));
  const { applications } = linksOf(label, kind);
  return { category, name, applications: applications ?? [] };
}

/**
 * `DELETE /v2/labels/{key}` body: `{"label": {"links": {"applications": [...]}}}` names the
 * applications to take the label from; no body (or no applications) removes the whole label.
 */
export function parseLabelDelete(body: unknown, kind: LabelBodyKind = 'json'): { applications: number[] | undefined } {
  const label = at(body, 'label');
  if (label === undefined || label === null) return { applications: undefined };
  if (!isObject(label)) throw invalid(LabelTitles.badApplications);
  const { applications } = linksOf(label, kind);
  return { applications: applications !== undefined && applications.length > 0 ? applications : undefined };
}

export type HealthBucket = 'green' | 'orange' | 'red' | 'gray';

/**
 * An application's bucket in `application_health_status`: its alert severity while it
 * reports, gray when it does not. An app without alert conditions (v2 health `unknown`) has no
 * bucket of its own in the label object and is counted gray (UNCONFIRMED; no probe: the
 * route comparison of /v2/labels shows it where a labelled app has no alert condition).
 */
export function healthBucket(reporting: boolean, alertSeverity: string): HealthBucket {
  if (!reporting) return 'gray';
  switch (alertSeverity) {
    case 'CRITICAL':
      return 'red';
    case 'WARNING':
      return 'orange';
    case 'NOT_ALERTING':
      return 'green';
    default:
      return 'gray';
  }
}

/** One application as the label aggregation sees it. */
export interface LabelledApplication {
  id: number;
  health: HealthBucket;
  /** All its tags (system tags included: the rule above drops them). */
  tags: ReadonlyArray<{ key: string; values: readonly string[] }>;
}

const compareText = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The v2 label object for the applications that carry it. */
export function v2Label(label: LabelKey, applications: ReadonlyArray<Pick<LabelledApplication, 'id' | 'health'>>): V2Body {
  const ids = [...new Set(applications.map((app) => app.id))].sort((a, b) => a - b);
  const health: Record<HealthBucket, number[]> = { green: [], orange: [], red: [], gray: [] };
  const seen = new Set<number>();
  for (const app of [...applications].sort((a, b) => a.id - b.id)) {
    if (seen.has(app.id)) continue;
    seen.add(app.id);
    health[app.health].push(app.id);
  }
  return {
    key: labelKeyText(label),
    category: label.category,
    name: label.name,
    application_health_status: health,
    server_health_status: { green: [], orange: [], red: [], gray: [] },
    origins: { apm: ids, synthetics: [], agents: [] },
    links: { applications: ids, servers: [] },
  };
}

/** Whether the application carries the label (exact key and value). */
export const carries = (app: Pick<LabelledApplication, 'tags'>, label: LabelKey): boolean =>
  app.tags.some((tag) => tag.key === label.category && tag.values.includes(label.name));

/** Every label of these applications, ordered by category then name (code-unit order). */
export function aggregateLabels(applications: Iterable<LabelledApplication>): V2Body[] {
  const byKey = new Map<string, { label: LabelKey; apps: LabelledApplication[] }>();
  for (const app of applications) {
    for (const tag of app.tags) {
      if (!isLabelTagKey(tag.key)) continue;
      for (const value of new Set(tag.values)) {
        if (value === '') continue;
        const label = { category: tag.key, name: value };
        const key = JSON.stringify([label.category, label.name]);
        let entry = byKey.get(key);
        if (!entry) byKey.set(key, (entry = { label, apps: [] }));
        entry.apps.push(app);
      }
    }
  }
  return [...byKey.values()]
    .sort((a, b) => compareText(a.label.category, b.label.category) || compareText(a.label.name, b.label.name))
    .map(({ label, apps }) => v2Label(label, apps));
}

/** The upstream tag list as zod reads it (keys or values may be null in NerdGraph's schema). */
export const UpstreamTags = z
  .array(z.object({ key: z.string().nullable(), values: z.array(z.string().nullable()).nullable() }).nullable())
  .nullable()
  .optional()
  .transform((tags) =>
    (tags ?? []).flatMap((tag) => (tag && tag.key !== null ? [{ key: tag.key, values: (tag.values ?? []).filter((v): v is string => v !== null) }] : [])),
  );
