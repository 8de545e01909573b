/**
 * The legacy face's labels (REST v2 `/v2/labels`, retired June 30, 2022): list, PUT (create
 * and apply) and DELETE, from the user tags the NerdGraph face serves (tagging.ts): a label
 * `Category:Name` is the tag key `Category` with the value `Name` (routes-next.md §6).
 *
 * From New Relic's v2 swagger (routes-next.md §6, rest-v2-shapes.md §10):
 * - PUT body `{"label": {"category", "name", "links": {"applications": [int], "servers": [int]}}}`
 *   creates the label and applies it; `links` and `servers` may be left out;
 * - DELETE `/v2/labels/{Category:Name}` takes the listed applications off the label, or the
 *   whole label when none are listed;
 * - the label object: `key`, `category`, `name`, `application_health_status` and
 *   `server_health_status` (`green`, `orange`, `red`, `gray`), `origins` (`apm`, `synthetics`,
 *   `agents`), `links` (`applications`, `servers`).
 *
 * The sandbox's own choices (v2's are UNCONFIRMED): 20 labels per page, by category then name;
 * ids as JSON numbers or their text, and in XML or form bodies also one id or a comma list;
 * unknown application ids: 422 before anything is written; servers: 422 (the Servers product is
 * gone, routes-next.md §8); a PUT without applications answers the label with empty links but
 * stores nothing (labels live on applications); an app without alert conditions counts gray.
 * v2 had no bound on applications per request, and neither has this face.
 */
import type { SandboxApp } from '../model.ts';
import { addUserTag, removeUserTagValue, userTagsOf } from '../tagging.ts';
import { MAX_TAG_KEY_LENGTH, MAX_TAG_VALUE_LENGTH, isUserTagKey } from '../tag-rules.ts';
import { pageOf, send, type LegacyRequest, type LegacyRoute } from './common.ts';
import { V2Error, notFound, type JsonValue, type V2Body } from './wire.ts';
import { bodyParams } from './bodies.ts';
import { missingParameter } from '../../facts/v2-titles.ts';
import { LABEL_RULE_TITLES } from '../../facts/rule-titles.ts';

const PAGE_SIZE = 20;

/** The titles the label rules answer (v2's own are UNCONFIRMED; the differential compares them). */
const Titles = {
  missingWrapper: missingParameter('label'),
  blank: LABEL_RULE_TITLES.blank,
  notText: LABEL_RULE_TITLES.notText,
  colon: LABEL_RULE_TITLES.categoryColon,
  tooLong: LABEL_RULE_TITLES.tooLong,
  reserved: LABEL_RULE_TITLES.reserved,
  badApplications: LABEL_RULE_TITLES.badApplications,
  servers: LABEL_RULE_TITLES.servers,
  unknownApplication: LABEL_RULE_TITLES.unknownApplication,
  notFound: LABEL_RULE_TITLES.notFound,
} as const;

const invalid = (title: string): V2Error => new V2Error(422, title);

interface Label {
  category: string;
  name: string;
}

type BodyKind = 'json' | 'xml' | 'form';

const isHash = (value: unknown): value is { [key: string]: JsonValue } => typeof value === 'object' && value !== null && !Array.isArray(value);
const member = (holder: unknown, key: string): JsonValue | undefined => (isHash(holder) && Object.hasOwn(holder, key) ? holder[key] : undefined);

/** The body's kind, as bodyParams read it: Rails' XML list rule is for XML only. */
function kindOf(req: LegacyRequest): BodyKind {
  const media = (req.request.headers.get('content-type') ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (media === 'application/xml' || media === 'text/xml' || media.endsWith('+xml')) return 'xml';
  return media === 'application/x-www-form-urlencoded' ? 'form' : 'json';
}

/** A text field: a string, or a number's text (Rails reads both); absent or null is undefined. */
function textOf(label: unknown, field: 'category' | 'name'): string | undefined {
  const value = member(label, field);
  if (value === undefined || value === null) return undefined;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  if (typeof value !== 'string') throw invalid(Titles.notText(field));
  return value;
}

/** Application (or server) ids, deduplicated in the order given; undefined when none were given. */
function idsOf(raw: JsonValue | undefined, kind: BodyKind, title: string): number[] | undefined {
  let value = raw;
  // Rails' XML list: <applications type="array"><application>1</application>...</applications>.
  if (kind === 'xml' && isHash(value)) {
    const items = Object.values(value);
    value = items.length === 0 ? [] : items.length === 1 ? (items[0] as JsonValue) : value;
  }
  if (value === undefined || value === null || value === '') return undefined;
  if (kind === 'json' && !Array.isArray(value)) throw invalid(title);
  const pieces: JsonValue[] = Array.isArray(value) ? value : typeof value === 'string' ? value.split(',') : [value];
  const ids: number[] = [];
  for (const piece of pieces) {
    const text = typeof piece === 'number' ? String(piece) : typeof piece === 'string' ? piece.trim() : '';
    if (!/^[1-9][0-9]{0,14}$/.test(text)) throw invalid(title);
    if (!ids.includes(Number(text))) ids.push(Number(text));
  }
  return ids;
}

/** `label.links`: the application ids; any server is refused. */
function applicationsOf(label: unknown, kind: BodyKind): number[] | undefined {
  const links = member(label, 'links');
  if (links === undefined || links === null) return undefined;
  if (!isHash(links)) throw invalid(Titles.badApplications);
  if ((idsOf(member(links, 'servers'), kind, Titles.servers) ?? []).length > 0) throw invalid(Titles.servers);
  return idsOf(member(links, 'applications'), kind, Titles.badApplications);
}

function labelToCreate(body: unknown, kind: BodyKind): Label & { applications: number[] } {
  const label = member(body, 'label');
  if (!isHash(label)) throw new V2Error(400, Titles.missingWrapper);
  const category = textOf(label, 'category')?.trim() ?? '';
  if (category === '') throw invalid(Titles.blank('category'));
  const name = textOf(label, 'name')?.trim() ?? '';
  if (name === '') throw invalid(Titles.blank('name'));
  if (category.includes(':')) throw invalid(Titles.colon);
  if ([...category].length > MAX_TAG_KEY_LENGTH) throw invalid(Titles.tooLong('category', MAX_TAG_KEY_LENGTH));
  if ([...name].length > MAX_TAG_VALUE_LENGTH) throw invalid(Titles.tooLong('name', MAX_TAG_VALUE_LENGTH));
  if (!isUserTagKey(category)) throw invalid(Titles.reserved(category));
  return { category, name, applications: applicationsOf(label, kind) ?? [] };
}

/** `{key}`: `Category:Name`, percent-decoded, split at the first colon. */
function labelOfKey(raw: string | undefined): Label | undefined {
  let key: string;
  try {
    key = decodeURIComponent(raw ?? '');
  } catch {
    return undefined;
  }
  const colon = key.indexOf(':');
  if (colon < 1 || colon === key.length - 1) return undefined;
  return { category: key.slice(0, colon), name: key.slice(colon + 1) };
}

/** An app's bucket: its alert severity while it reports, gray otherwise. */
function bucketOf(app: SandboxApp): 'green' | 'orange' | 'red' | 'gray' {
  if (!app.reporting) return 'gray';
  return app.alertSeverity === 'CRITICAL' ? 'red' : app.alertSeverity === 'WARNING' ? 'orange' : app.alertSeverity === 'NOT_ALERTING' ? 'green' : 'gray';
}

const carries = (app: SandboxApp, label: Label): boolean => (userTagsOf(app)[label.category] ?? []).includes(label.name);

const accountApps = (req: LegacyRequest): SandboxApp[] => req.data.apps.filter((app) => app.accountId === req.accountId);

/** The v2 label object, from the applications that carry it. */
function labelObject(label: Label, apps: readonly SandboxApp[]): V2Body {
  const sorted = [...new Set(apps)].sort((a, b) => a.id - b.id);
  const health = { green: [] as number[], orange: [] as number[], red: [] as number[], gray: [] as number[] };
  for (const app of sorted) health[bucketOf(app)].push(app.id);
  const ids = sorted.map((app) => app.id);
  return {
    key: `${label.category}:${label.name}`,
    category: label.category,
    name: label.name,
    application_health_status: health,
    server_health_status: { green: [], orange: [], red: [], gray: [] },
    origins: { apm: ids, synthetics: [], agents: [] },
    links: { applications: ids, servers: [] },
  };
}

const byCodeUnits = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

function listLabels(req: LegacyRequest): Response {
  const page = pageOf(req.params);
  const found = new Map<string, { label: Label; apps: SandboxApp[] }>();
  for (const app of accountApps(req)) {
    for (const [category, values] of Object.entries(userTagsOf(app))) {
      if (!isUserTagKey(category)) continue;
      for (const name of new Set(values)) {
        if (name === '') continue;
        const key = JSON.stringify([category, name]);
        const entry = found.get(key) ?? { label: { category, name }, apps: [] };
        entry.apps.push(app);
        found.set(key, entry);
      }
    }
  }
  const labels = [...found.values()]
    .sort((a, b) => byCodeUnits(a.label.category, b.label.category) || byCodeUnits(a.label.name, b.label.name))
    .map(({ label, apps }) => labelObject(label, apps));
  const link = req.link(page, Math.ceil(labels.length / PAGE_SIZE));
  return send(req.format, 200, { labels: labels.slice((page - 1) * PAGE_SIZE, page * PAGE_SIZE) }, link ? { link } : {});
}

/** The named applications of the caller's account; 422 for the first id that is not one. */
function namedApps(req: LegacyRequest, ids: readonly number[]): SandboxApp[] {
  const apps = accountApps(req);
  return ids.map((id) => {
    const app = apps.find((candidate) => candidate.id === id);
    if (!app) throw invalid(Titles.unknownApplication(id));
    return app;
  });
}

const labelNow = (req: LegacyRequest, label: Label): V2Body =>
  labelObject(
    label,
    accountApps(req).filter((app) => carries(app, label)),
  );

async function createLabel(req: LegacyRequest): Promise<Response> {
  const input = labelToCreate(await bodyParams(req.request), kindOf(req));
  for (const app of namedApps(req, input.applications)) addUserTag(req.data, app, input.category, [input.name]);
  return send(req.format, 200, { label: labelNow(req, input) });
}

async function deleteLabel(req: LegacyRequest): Promise<Response> {
  const label = labelOfKey(req.path.key);
  // Tags New Relic sets are never labels: the list never shows them.
  if (!label || !isUserTagKey(label.category)) throw notFound(Titles.notFound);
  const body = member(await bodyParams(req.request), 'label');
  if (body !== undefined && body !== null && !isHash(body)) throw invalid(Titles.badApplications);
  const named = applicationsOf(body, kindOf(req));
  const carrying = accountApps(req).filter((app) => carries(app, label));
  if (carrying.length === 0) throw notFound(Titles.notFound);
  // Named applications that do not carry it are no error: nothing to take off.
  const targets = named === undefined || named.length === 0 ? carrying : namedApps(req, named);
  for (const app of targets) removeUserTagValue(req.data, app, label.category, label.name);
  return send(req.format, 200, { label: labelNow(req, label) });
}

export const LABEL_ROUTES: readonly LegacyRoute[] = [
  { template: '/v2/labels.{format}', methods: ['GET'], handler: listLabels },
  { template: '/v2/labels.{format}', methods: ['PUT'], body: 'own', handler: createLabel },
  { template: '/v2/labels/{key}.{format}', methods: ['DELETE'], body: 'own', handler: deleteLabel },
];
