/**
 * The legacy face's writes, by docs/write-rules.md: application settings and delete,
 * deployments (list, create, delete, and the v0 `POST /deployments.xml`), and mobile and
 * browser application create. Like metrics.ts this is part of the reference the gateway
 * is compared against, so it reads request bodies and applies the rules on its own; the change
 * itself goes through writes.ts, so both sandbox faces see it.
 *
 * routes.ts routes here with the account resolved and, for application routes, the
 * application already found in that account.
 */
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { V2Error, notFound, MAX_BODY_BYTES, CONTENT_TYPES, serialise, type V2Body, type V2Format, isoSeconds, escapeXmlText, type JsonValue } from './wire.ts';
import { V2Titles } from './titles.ts';
import { parseTime } from './metrics.ts';
import type { SandboxApp, SandboxData, SandboxDeployment } from '../model.ts';
import {
  createBrowserApplication,
  createMobileApplication,
  deploymentsOf,
  recordDeployment,
  removeApplication,
  removeDeployment,
  updateApplication,
  type ApplicationChanges,
  type DeploymentFields,
} from '../writes.ts';

export interface WriteRequest {
  data: SandboxData;
  /** The caller's account, from the key (and X-Account-Id). */
  accountId: number;
  format: V2Format;
  /** The request clock, epoch ms. */
  now: number;
  /** The raw request, whose body is read here (bounded). */
  request: Request;
  /** The query string (the v0 route takes its fields from there too). */
  query: URLSearchParams;
  /** What GET /v2/applications/{id} answers for the app: `{application, links}`. */
  shown(app: SandboxApp): V2Body;
}

export interface DeploymentsRequest extends WriteRequest {
  app: SandboxApp;
  /** The requested page, already validated as for the applications list. */
  page: number;
  /** v2's Link header for this request at `page` of `lastPage`. */
  link(page: number, lastPage: number): string | undefined;
}

const PAGE_SIZE = 200;
const MAX_NESTING = 32;

export const WriteTitles = {
  updateInvalid: 'Validation error occurred when updating the application',
  stillReporting: 'Cannot delete an application that is still reporting data.',
  missingDeployment: 'missing parameter: deployment',
  revisionRequired: 'Revision parameter required',
  tooLong: (field: string, limit: number): string => `Invalid deployment: ${field} is longer than ${limit} characters`,
  notText: (field: string): string => `Invalid deployment: ${field} must be text`,
  fourByte: (field: string): string => `Invalid deployment: ${field} contains a 4-byte UTF-8 character`,
  badTimestamp: 'Invalid deployment: timestamp must be an ISO 8601 time',
  futureTimestamp: 'Invalid deployment: timestamp must not be in the future',
  staleTimestamp: 'Invalid deployment: timestamp must be later than the most recent deployment',
  deploymentNotFound: 'No Deployment found with the given ID',
  appFieldRequired: 'Validation error: an application_id or app_name is required',
  appNameNotFound: 'No Application found with the given name',
  nameBlank: "Validation error: name can't be blank",
  nameTooLong: 'Validation error: name is too long (maximum is 255 characters)',
} as const;

export type Params = { [key: string]: JsonValue };

function reply(format: V2Format, status: number, body: V2Body): Response {
  return new Response(serialise(body, format), { status, headers: { 'content-type': CONTENT_TYPES[format] } });
}

const isObject = (value: JsonValue | undefined): value is Params => typeof value === 'object' && value !== null && !Array.isArray(value);

/** An own key only: a body's keys never reach Object.prototype. */
function field(holder: JsonValue | undefined, key: string): JsonValue | undefined {
  return isObject(holder) && Object.hasOwn(holder, key) ? holder[key] : undefined;
}

/** A string, or a number read as its text; anything else is undefined. */
function textOf(value: JsonValue | undefined): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

const SURROGATE_PAIR = /[\uD800-\uDBFF][\uDC00-\uDFFF]/g;
const OUTSIDE_BMP = /[\u{10000}-\u{10FFFF}]/u;

/** Characters (code points). */
const characters = (text: string): number => text.length - (text.match(SURROGATE_PAIR)?.length ?? 0);

// ---------------------------------------------------------------------------------------------
// Request bodies (rules §1)

type BodyKind = 'json' | 'xml' | 'form';

const NOT_VALID: Record<BodyKind, string> = {
  json: 'The request body is not valid JSON',
  xml: 'The request body is not valid XML',
  form: 'The request body is not valid form data',
};

function kindOf(contentType: string | null, bytes: Uint8Array): BodyKind | undefined {
  const media = (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
  if (media === 'application/json' || media.endsWith('+json')) return 'json';
  if (media === 'application/xml' || media === 'text/xml' || media.endsWith('+xml')) return 'xml';
  if (media === 'application/x-www-form-urlencoded') return 'form';
  if (media === '') {
    // No type: JSON when the body starts with `{` (after any BOM or white space).
    for (const byte of bytes) {
      if (byte === 0x7b) return 'json';
      if (![0x20, 0x09, 0x0a, 0x0d, 0xef, 0xbb, 0xbf].includes(byte)) return undefined;
    }
  }
  // Any other type carries no parameters (as Rails ignores bodies it cannot parse).
  return undefined;
}

async function readBytes(request: Request): Promise<Uint8Array> {
  const tooLarge = (): V2Error =>
    new V2Error(413, `Request body larger than ${MAX_BODY_BYTES} bytes`, { headers: { connection: 'close' } });
  const declared = request.headers.get('content-length');
  if (declared !== null && /^\d+$/.test(declared.trim()) && Number(declared) > MAX_BODY_BYTES) throw tooLarge();
  if (request.body === null) return new Uint8Array(0);
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.byteLength;
      if (size > MAX_BODY_BYTES) {
        await reader.cancel().catch(() => undefined);
        throw tooLarge();
      }
      chunks.push(value);
    }
  } catch (error) {
    if (error instanceof V2Error) throw error;
    throw new V2Error(400, 'The request body could not be read');
  }
  return Buffer.concat(chunks);
}

/** The body's parameters as one tree; a body without parameters gives `{}`. */
export async function bodyParams(request: Request): Promise<Params> {
  const bytes = await readBytes(request);
  const kind = kindOf(request.headers.get('content-type'), bytes);
  if (kind === undefined) return {};
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw new V2Error(400, NOT_VALID[kind]);
  }
  // A blank body carries no parameters, whatever its type says.
  if (text.trim() === '') return {};
  try {
    if (kind === 'json') {
      const value = JSON.parse(text) as JsonValue;
      return isObject(value) ? value : {};
    }
    if (kind === 'xml') return xmlParams(text);
    return formParams(formPairs(text));
  } catch {
    throw new V2Error(400, NOT_VALID[kind]);
  }
}

/** `a=1&b=2`, with `+` as a space; a broken escape or invalid UTF-8 throws. */
function formPairs(text: string): Array<[string, string]> {
  const decode = (part: string): string => decodeURIComponent(part.replace(/\+/g, ' '));
  return text
    .split('&')
    .filter((piece) => piece !== '')
    .map((piece) => {
      const at = piece.indexOf('=');
      return at === -1 ? [decode(piece), ''] : [decode(piece.slice(0, at)), decode(piece.slice(at + 1))];
    });
}

/**
 * Rack-style nesting: `deployment[revision]=x` is `{deployment: {revision: "x"}}`, `a[]=x`
 * appends. Keys of another shape are ignored; a key that is both a value and a hash throws.
 */
function formParams(pairs: Array<[string, string]>): Params {
  const root: Params = Object.create(null) as Params;
  for (const [key, value] of pairs) {
    const match = /^([^[\]]+)((?:\[[^[\]]*\])*)$/.exec(key);
    if (!match) continue;
    const path = [match[1] as string, ...[...(match[2] ?? '').matchAll(/\[([^[\]]*)\]/g)].map((m) => m[1] as string)];
    if (path.length > MAX_NESTING) throw new Error('nested too deeply');
    const appends = path.at(-1) === '';
    if (path.slice(0, -1).includes('')) continue;
    const keys = appends ? path.slice(0, -1) : path;
    let holder = root;
    for (const step of keys.slice(0, -1)) {
      const next = Object.hasOwn(holder, step) ? holder[step] : undefined;
      if (next === undefined) holder = holder[step] = Object.create(null) as Params;
      else if (isObject(next)) holder = next;
      else throw new Error(`parameter ${step} is both a value and a hash`);
    }
    const last = keys.at(-1) as string;
    const existing = Object.hasOwn(holder, last) ? holder[last] : undefined;
    if (appends) {
      if (existing === undefined) holder[last] = [value];
      else if (Array.isArray(existing)) existing.push(value);
      else throw new Error(`parameter ${last} is both a list and another value`);
    } else if (existing !== undefined && typeof existing !== 'string') {
      throw new Error(`parameter ${last} is both a value and a hash`);
    } else {
      holder[last] = value;
    }
  }
  return root;
}

const xmlParser = new XMLParser({
  preserveOrder: true,
  ignoreAttributes: false,
  attributeNamePrefix: '',
  parseTagValue: false,
  parseAttributeValue: false,
  trimValues: false,
  // Entities are decoded below (the five XML ones and character references only): nothing a
  // document declares is ever expanded.
  processEntities: false,
  ignoreDeclaration: true,
  ignorePiTags: true,
  cdataPropName: '#cdata',
  commentPropName: '#comment',
});

type XmlNode = { [key: string]: XmlNode[] | string | Record<string, string> | undefined } & { ':@'?: Record<string, string> };

const XML_ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function decodeXmlText(text: string): string {
  return text.replace(/&([^;&\s]*);?/g, (whole, name: string) => {
    if (!whole.endsWith(';')) throw new Error('bare &');
    const named = XML_ENTITIES[name];
    if (named !== undefined) return named;
    const numeric = /^#(?:x([0-9a-f]{1,6})|([0-9]{1,7}))$/i.exec(name);
    if (!numeric) throw new Error(`undeclared entity &${name};`);
    const code = numeric[1] !== undefined ? parseInt(numeric[1], 16) : Number(numeric[2]);
    const allowed = code === 0x9 || code === 0xa || code === 0xd || (code >= 0x20 && code <= 0xd7ff) || (code >= 0xe000 && code <= 0xfffd) || (code >= 0x10000 && code <= 0x10ffff);
    if (!allowed) throw new Error(`character reference &${name}; is not an XML character`);
    return String.fromCodePoint(code);
  });
}

const tagOf = (node: XmlNode): string | undefined => Object.keys(node).find((key) => key !== ':@');

/**
 * Rails' `Hash.from_xml`: the root element is the wrapper, an element holding elements is a
 * hash, one holding text is a string, repeated elements are a list, `nil="true"` is null, and
 * dashes in names read as underscores. Other attributes are ignored.
 */
function xmlParams(text: string): Params {
  if (/<!DOCTYPE/i.test(text)) throw new Error('DOCTYPE is not accepted');
  if (XMLValidator.validate(text) !== true) throw new Error('not well-formed');
  if (!text.trimEnd().endsWith('>')) throw new Error('text after the root element');
  const nodes = xmlParser.parse(text) as XmlNode[];
  const roots = nodes.filter((node) => tagOf(node) !== '#comment');
  if (roots.length !== 1) throw new Error('exactly one root element is expected');
  const root = roots[0] as XmlNode;
  const tag = tagOf(root) as string;
  const result: Params = Object.create(null) as Params;
  result[tag.replace(/-/g, '_')] = xmlValue(root, 1);
  return result;
}

function xmlValue(node: XmlNode, depth: number): JsonValue {
  if (depth > MAX_NESTING) throw new Error('nested too deeply');
  const tag = tagOf(node) as string;
  if (node[':@']?.nil === 'true') return null;
  const children = (node[tag] as XmlNode[] | undefined) ?? [];
  const elements = children.filter((child) => !['#text', '#cdata', '#comment'].includes(tagOf(child) ?? ''));
  if (elements.length === 0) {
    return children
      .map((child) => {
        if (typeof child['#text'] === 'string') return decodeXmlText(child['#text']);
        const cdata = child['#cdata'];
        if (Array.isArray(cdata)) return cdata.map((part) => String(part['#text'] ?? '')).join('');
        return '';
      })
      .join('');
  }
  const hash: Params = Object.create(null) as Params;
  const repeated = new Set<string>();
  for (const element of elements) {
    const name = (tagOf(element) as string).replace(/-/g, '_');
    const value = xmlValue(element, depth + 1);
    const existing = hash[name];
    if (!Object.hasOwn(hash, name)) hash[name] = value;
    else if (repeated.has(name)) (existing as JsonValue[]).push(value);
    else {
      hash[name] = [existing as JsonValue, value];
      repeated.add(name);
    }
  }
  return hash;
}

// ---------------------------------------------------------------------------------------------
// PUT /v2/applications/{id} (rules §2)

/** A finite number, or a numeric string read as one. */
function numberOf(value: JsonValue | undefined): number | undefined {
  if (typeof value === 'number') return Number.isFinite(value) ? value : undefined;
  if (typeof value !== 'string') return undefined;
  const text = value.trim();
  if (!/^[+-]?(?:\d+\.?\d*|\.\d+)(?:e[+-]?\d+)?$/i.test(text)) return undefined;
  const number = Number(text);
  return Number.isFinite(number) ? number : undefined;
}

function booleanOf(value: JsonValue | undefined): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (typeof value !== 'string') return undefined;
  const text = value.trim().toLowerCase();
  return text === 'true' ? true : text === 'false' ? false : undefined;
}

/** Absent and null both mean "not given". */
const given = (value: JsonValue | undefined): value is Exclude<JsonValue, null> => value !== undefined && value !== null;

function apdexRule(settings: Params, key: string, messages: string[]): number | undefined {
  const raw = field(settings, key);
  if (!given(raw)) return undefined;
  const number = numberOf(raw);
  if (number === undefined || number <= 0) messages.push(`settings.${key} must be a number greater than 0`);
  else if (number > 100) messages.push(`settings.${key} must be a number less than or equal to 100`);
  else return number;
  return undefined;
}

export async function legacyUpdateApplication(req: WriteRequest, app: SandboxApp): Promise<Response> {
  const params = await bodyParams(req.request);
  const application = field(params, 'application');
  const messages: string[] = [];
  const changes: ApplicationChanges = {};
  if (!isObject(application)) {
    messages.push('application must be an object');
  } else {
    const name = field(application, 'name');
    if (given(name)) {
      if (typeof name !== 'string') messages.push('name must be a string');
      else if (name.trim() === '') messages.push("name can't be blank");
      else if (characters(name.trim()) > 255) messages.push('name is too long (maximum is 255 characters)');
      else changes.name = name.trim();
    }
    const settings = field(application, 'settings');
    if (given(settings) && !isObject(settings)) messages.push('settings must be an object');
    if (isObject(settings)) {
      const apdex = apdexRule(settings, 'app_apdex_threshold', messages);
      if (apdex !== undefined) changes.apdexTarget = apdex;
      const endUser = apdexRule(settings, 'end_user_apdex_threshold', messages);
      if (endUser !== undefined) changes.endUserApdexTarget = endUser;
      const rum = field(settings, 'enable_real_user_monitoring');
      if (given(rum)) {
        const flag = booleanOf(rum);
        if (flag === undefined) messages.push('settings.enable_real_user_monitoring must be true or false');
        else changes.browserMonitoring = flag;
      }
      // use_server_side_config is read-only in v2: ignored.
    }
  }
  if (messages.length > 0) return reply(req.format, 422, { error: { title: WriteTitles.updateInvalid, messages } });
  if (Object.keys(changes).length > 0) updateApplication(req.data, app, changes);
  return reply(req.format, 200, req.shown(app));
}

// ---------------------------------------------------------------------------------------------
// DELETE /v2/applications/{id} (rules §3)

export function legacyDeleteApplication(req: WriteRequest, app: SandboxApp): Response {
  if (app.reporting) throw new V2Error(409, WriteTitles.stillReporting);
  const before = req.shown(app);
  removeApplication(req.data, app);
  return reply(req.format, 200, before);
}

// ---------------------------------------------------------------------------------------------
// Deployments (rules §4)

function deploymentBody(deployment: SandboxDeployment): V2Body {
  return {
    id: deployment.id,
    revision: deployment.revision,
    changelog: deployment.changelog,
    description: deployment.description,
    user: deployment.user,
    timestamp: isoSeconds(deployment.timestamp),
    links: { application: deployment.appId },
  };
}

/** Change tracking's retention: 13 calendar months back from now. */
function retentionStart(now: number): number {
  const date = new Date(now);
  date.setUTCMonth(date.getUTCMonth() - 13);
  return date.getTime();
}

export function legacyDeployments(req: DeploymentsRequest): Response {
  const since = retentionStart(req.now);
  const visible = deploymentsOf(req.data, req.app).filter((deployment) => deployment.timestamp >= since && deployment.timestamp <= req.now);
  const page = visible.slice((req.page - 1) * PAGE_SIZE, req.page * PAGE_SIZE).map(deploymentBody);
  const link = req.link(req.page, Math.ceil(visible.length / PAGE_SIZE));
  const body: V2Body = { deployments: page, links: { 'deployment.agent': '/v2/applications/{application_id}' } };
  return new Response(serialise(body, req.format), {
    status: 200,
    headers: { 'content-type': CONTENT_TYPES[req.format], ...(link ? { link } : {}) },
  });
}

const invalid = (title: string): V2Error => new V2Error(422, title);

/** An optional text field: null when absent or null, its text when a string or number. */
function optionalText(deployment: Params, key: string): string | null {
  const value = field(deployment, key);
  if (!given(value)) return null;
  const text = textOf(value);
  if (text === undefined) throw invalid(WriteTitles.notText(key));
  return text;
}

/** The §4 rules, in their order; the fields to record. */
function deploymentFields(deployment: Params, app: SandboxApp, data: SandboxData, now: number): DeploymentFields {
  const revision = textOf(field(deployment, 'revision'));
  if (revision === undefined || revision.trim() === '') throw new V2Error(400, WriteTitles.revisionRequired);
  if (characters(revision) > 127) throw invalid(WriteTitles.tooLong('revision', 127));
  const changelog = optionalText(deployment, 'changelog');
  if (changelog !== null && characters(changelog) > 65_535) throw invalid(WriteTitles.tooLong('changelog', 65_535));
  const description = optionalText(deployment, 'description');
  if (description !== null && characters(description) > 65_535) throw invalid(WriteTitles.tooLong('description', 65_535));
  const user = optionalText(deployment, 'user');
  if (user !== null && characters(user) > 31) throw invalid(WriteTitles.tooLong('user', 31));
  const texts: Array<[string, string | null]> = [
    ['revision', revision],
    ['changelog', changelog],
    ['description', description],
    ['user', user],
  ];
  const offending = texts.find(([, text]) => text !== null && OUTSIDE_BMP.test(text));
  if (offending) throw invalid(WriteTitles.fourByte(offending[0]));
  const timestamp = explicitTimestamp(field(deployment, 'timestamp'), app, data, now) ?? Math.floor(now / 1000) * 1000;
  return { revision, changelog, description, user, timestamp };
}

/** An explicit timestamp (epoch ms) checked against the clock and the app's deployments. */
function explicitTimestamp(value: JsonValue | undefined, app: SandboxApp, data: SandboxData, now: number): number | undefined {
  if (!given(value) || value === '') return undefined;
  const seconds = typeof value === 'string' ? parseTime(value) : undefined;
  if (seconds === undefined) throw invalid(WriteTitles.badTimestamp);
  const timestamp = seconds * 1000;
  if (timestamp > now) throw invalid(WriteTitles.futureTimestamp);
  const newest = deploymentsOf(data, app)[0];
  if (newest !== undefined && timestamp <= newest.timestamp) throw invalid(WriteTitles.staleTimestamp);
  return timestamp;
}

export async function legacyCreateDeployment(req: WriteRequest, app: SandboxApp): Promise<Response> {
  const deployment = field(await bodyParams(req.request), 'deployment');
  if (!isObject(deployment)) throw new V2Error(400, WriteTitles.missingDeployment);
  const created = recordDeployment(req.data, app, deploymentFields(deployment, app, req.data, req.now), 'Deployment');
  return reply(req.format, 201, { deployment: deploymentBody(created) });
}

export function legacyDeleteDeployment(req: WriteRequest, app: SandboxApp, deploymentId: string): Response {
  const id = /^[1-9]\d{0,15}$/.test(deploymentId) ? Number(deploymentId) : undefined;
  const removed = id === undefined ? undefined : removeDeployment(req.data, app, id);
  if (!removed) throw notFound(WriteTitles.deploymentNotFound);
  return reply(req.format, 200, { deployment: deploymentBody(removed) });
}

// ---------------------------------------------------------------------------------------------
// Deployments v0: POST /deployments.xml (rules §5)

/** The v0 answer: Rails' `to_xml` of the record, dashed names, typed scalars. */
function v0DeploymentXml(deployment: SandboxDeployment): string {
  const element = (name: string, value: string | number | null, type?: string): string => {
    if (value === null) return `  <${name} nil="true"/>`;
    const text = typeof value === 'number' ? String(value) : escapeXmlText(value);
    return `  <${name}${type ? ` type="${type}"` : ''}>${text}</${name}>`;
  };
  return [
    '<?xml version="1.0" encoding="UTF-8"?>',
    '<deployment>',
    element('account-id', deployment.accountId, 'integer'),
    element('agent-id', deployment.appId, 'integer'),
    element('changelog', deployment.changelog),
    element('description', deployment.description),
    element('id', deployment.id, 'integer'),
    element('revision', deployment.revision),
    element('timestamp', isoSeconds(deployment.timestamp), 'datetime'),
    element('user', deployment.user),
    '</deployment>',
    '',
  ].join('\n');
}

function queryParams(query: URLSearchParams): Params {
  try {
    return formParams([...query]);
  } catch {
    throw new V2Error(400, 'The query string is not valid form data');
  }
}

export async function legacyDeploymentV0(req: WriteRequest): Promise<Response> {
  const fromQuery = field(queryParams(req.query), 'deployment');
  const fromBody = field(await bodyParams(req.request), 'deployment');
  if (!isObject(fromQuery) && !isObject(fromBody)) throw new V2Error(400, WriteTitles.missingDeployment);
  // Body fields win over query fields, as Rails merges them.
  const deployment: Params = { ...(isObject(fromQuery) ? fromQuery : {}), ...(isObject(fromBody) ? fromBody : {}) };
  const idText = textOf(field(deployment, 'application_id'))?.trim() ?? '';
  const name = textOf(field(deployment, 'app_name')) ?? '';
  let app: SandboxApp | undefined;
  if (idText !== '') {
    app = /^[1-9]\d{0,14}$/.test(idText) ? req.data.apps.find((a) => a.id === Number(idText) && a.accountId === req.accountId) : undefined;
    if (!app) throw notFound(V2Titles.applicationNotFound);
  } else if (name.trim() !== '') {
    app = req.data.apps.find((a) => a.name === name && a.accountId === req.accountId);
    if (!app) throw notFound(WriteTitles.appNameNotFound);
  } else {
    throw invalid(WriteTitles.appFieldRequired);
  }
  const created = recordDeployment(req.data, app, deploymentFields(deployment, app, req.data, req.now), 'Deployment');
  if (req.format === 'json') {
    // v0 was an XML API; a `.json` request gets the same fields as JSON (the gateway's choice too).
    const body = {
      deployment: {
        account_id: created.accountId,
        agent_id: created.appId,
        changelog: created.changelog,
        description: created.description,
        id: created.id,
        revision: created.revision,
        timestamp: isoSeconds(created.timestamp),
        user: created.user,
      },
    };
    return new Response(JSON.stringify(body), { status: 201, headers: { 'content-type': CONTENT_TYPES.json } });
  }
  return new Response(v0DeploymentXml(created), { status: 201, headers: { 'content-type': CONTENT_TYPES.xml } });
}

// ---------------------------------------------------------------------------------------------
// Mobile and browser application create (rules §6)

function newAppName(wrapper: JsonValue | undefined): string {
  const name = field(wrapper, 'name');
  if (typeof name !== 'string' || name.trim() === '') throw invalid(WriteTitles.nameBlank);
  if (characters(name.trim()) > 255) throw invalid(WriteTitles.nameTooLong);
  return name.trim();
}

export async function legacyCreateApplication(req: WriteRequest, kind: 'mobile' | 'browser'): Promise<Response> {
  const params = await bodyParams(req.request);
  if (kind === 'mobile') {
    const wrapper = isObject(field(params, 'mobile_application')) ? field(params, 'mobile_application') : field(params, 'application');
    const created = createMobileApplication(req.data, req.accountId, newAppName(wrapper));
    return reply(req.format, 201, { application: { id: created.id, name: created.name, health_status: 'unknown', reporting: false } });
  }
  const created = createBrowserApplication(req.data, req.accountId, newAppName(field(params, 'browser_application')));
  return reply(req.format, 201, {
    browser_application: {
      id: created.id,
      name: created.name,
      browser_monitoring_key: created.browserMonitoringKey ?? null,
      loader_script: created.loaderScript ?? null,
    },
  });
}
