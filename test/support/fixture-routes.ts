import { createServer, type IncomingMessage } from 'node:http';
import { fileURLToPath } from 'node:url';
import type { Sandbox } from '../../sandbox/server.ts';
import { accountFor, legacyLink, pageOf, text, type Pairs } from '../../sandbox/legacy/common.ts';
import { CONTENT_TYPES, errorBody, serialise, V2Error, type V2Body, type V2Format } from '../../sandbox/legacy/wire.ts';
import type { Mapping } from '../../src/routes/mapping.ts';
import { loadMappings, MAPPINGS_DIR } from '../../src/routes/mappings-loader.ts';
import { DOCUMENT_ROOTS, loadDocuments, type OperationDocuments } from '../../src/upstream/documents.ts';
import { listenOnLoopback } from './http.ts';

/**
 * The stage tests' own routes (modes, compare, /bridge/, explain, reports): mappings written with
 * the public mapping API in test/support/fixture-mappings/<resource>/, their documents beside
 * them, and a legacy face that answers them. A real route's change never touches a stage test.
 * The gateway, the compatibility report and the tools never load them (the loaders' default
 * roots are mappings/ and queries/ only).
 *
 * - widgets: translated. A widget is an APM application of the caller's account, `{id, name}`.
 *   List (10 per page, by id, filter[name]; a form POST reads it too), show, a write (a note, as a tag the sandbox's
 *   NerdGraph face writes) and an unsupported DELETE.
 * - gadgets: passthrough only (NerdGraph cannot serve them).
 * - sprockets: GET translated but passed through by default (only a rule naming it translates
 *   it); POST passthrough only.
 */
export const FIXTURE_MAPPINGS_DIR = fileURLToPath(new URL('./fixture-mappings/', import.meta.url));
export const FIXTURE_DOCUMENT_ROOTS: readonly string[] = [...DOCUMENT_ROOTS, FIXTURE_MAPPINGS_DIR];

/** The fixture route templates, as the mapping table, modes and parity records name them. */
export const WIDGETS = '/v2/fixture_widgets.{format}';
export const WIDGET = '/v2/fixture_widgets/{id}.{format}';
export const WIDGET_NOTES = '/v2/fixture_widgets/{id}/notes.{format}';
export const WIDGET_NOTE = '/v2/fixture_widgets/{id}/notes/{note_id}.{format}';
export const GADGETS = '/v2/fixture_gadgets.{format}';
export const GADGET = '/v2/fixture_gadgets/{gadget_id}.{format}';
export const SPROCKETS = '/v2/fixture_sprockets.{format}';
/** The NerdGraph operations of the fixture routes. */
export const FIXTURE_OPERATIONS = { widgetsSearch: 'FixtureWidgetsSearch', widget: 'FixtureWidget', widgetNote: 'FixtureWidgetNote', sprockets: 'FixtureSprockets' } as const;
/** The gadgets the fixture legacy face holds before any write. */
export const GADGET_ROWS: readonly V2Body[] = [
  { id: 1, name: 'gadget one' },
  { id: 2, name: 'gadget two' },
  { id: 3, name: 'gadget three' },
];

/** Which mappings a test gateway serves: the fixtures alone (stage tests), the real table, or both. */
export type TestRoutes = 'fixtures' | 'real' | 'both';

export async function loadTestMappings(routes: TestRoutes): Promise<Mapping[]> {
  const roots = { fixtures: [FIXTURE_MAPPINGS_DIR], real: [MAPPINGS_DIR], both: [MAPPINGS_DIR, FIXTURE_MAPPINGS_DIR] }[routes];
  return loadMappings(roots);
}

/** The documents of the real table and of the fixtures (their names are distinct). */
export function loadTestDocuments(): OperationDocuments {
  return loadDocuments(FIXTURE_DOCUMENT_ROOTS);
}

/** What the fixture legacy face received for a fixture route. */
export interface FixtureLegacyRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

const WIDGETS_PER_PAGE = 10;
const FIXTURE_PATH = /^\/v2\/fixture_(widgets|gadgets|sprockets)(?:\/([^/.]+))?(?:\/(notes)(?:\/([^/.]+))?)?\.(json|xml)$/;

/**
 * A legacy REST API for the fixture routes over a sandbox's data: what v2 would have answered
 * for that data, computed here from the sandbox's model (not by the fixture mappings' reshape),
 * in JSON or the sandbox's Rails-style XML. Every other request (the sandbox's /graphql and
 * real /v2 routes) is forwarded to `upstream`, the sandbox's URL, so one origin serves as both
 * the gateway's NerdGraph and its legacy API. Writes change nothing in the sandbox: a note is
 * kept in `notes`, a gadget in `gadgets`.
 */
export async function startFixtureLegacy(sandbox: Pick<Sandbox, 'data'>, upstream: string) {
  const received: FixtureLegacyRequest[] = [];
  const notes: Array<{ widgetId: number; text: string }> = [];
  const gadgets: V2Body[] = GADGET_ROWS.map((row) => ({ ...row }));
  const { data } = sandbox;

  function answer(req: FixtureLegacyRequest, origin: string): { status: number; body?: V2Body; headers?: Record<string, string> } {
    const url = new URL(req.url, origin);
    const [, resource, id, sub, subId] = FIXTURE_PATH.exec(url.pathname) ?? [];
    const form = req.method === 'POST' && /x-www-form-urlencoded/.test(String(req.headers['content-type'])) ? [...new URLSearchParams(req.body).entries()] : [];
    const pairs: Pairs = [...url.searchParams.entries(), ...form];
    const headers = new Headers();
    for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string') headers.set(name, value);
    const accountId = accountFor(headers, data);
    const json = (): Record<string, unknown> => {
      try {
        return req.body === '' ? {} : (JSON.parse(req.body) as Record<string, unknown>);
      } catch {
        throw new V2Error(400, 'The request body is not valid JSON');
      }
    };
    if (resource === 'widgets') {
      const apps = data.apps.filter((app) => app.accountId === accountId);
      if (id === undefined && (req.method === 'GET' || req.method === 'HEAD' || req.method === 'POST')) {
        const name = text(pairs, 'filter[name]')?.toLowerCase();
        const page = pageOf(pairs);
        const rows = apps.filter((app) => name === undefined || app.name.toLowerCase().includes(name)).sort((a, b) => a.id - b.id);
        const lastPage = Math.max(1, Math.ceil(rows.length / WIDGETS_PER_PAGE));
        const link = legacyLink(`${origin}${url.pathname}`, pairs, page, lastPage);
        const widgets = rows.slice((page - 1) * WIDGETS_PER_PAGE, page * WIDGETS_PER_PAGE).map((app) => ({ id: app.id, name: app.name }));
        return { status: 200, body: { widgets }, ...(link ? { headers: { link } } : {}) };
      }
      if (id === undefined || !/^[1-9]\d{0,14}$/.test(id)) throw new V2Error(404, 'Fixture widget not found');
      const widget = () => {
        const found = apps.find((candidate) => candidate.id === Number(id));
        if (!found) throw new V2Error(404, 'Fixture widget not found');
        return found;
      };
      if (sub === undefined && (req.method === 'GET' || req.method === 'HEAD')) {
        const app = widget();
        return { status: 200, body: { widget: { id: app.id, name: app.name } } };
      }
      if (sub === 'notes' && subId === undefined && req.method === 'POST') {
        const note = json().note as { text?: unknown } | undefined;
        const written = note?.text;
        if (typeof written !== 'string' || written.trim() === '') throw new V2Error(422, 'Invalid parameter note.text: required');
        if (written.length > 64) throw new V2Error(422, 'Invalid parameter note.text: at most 64 characters');
        const app = widget();
        notes.push({ widgetId: app.id, text: written });
        return { status: 201, body: { note: { widget_id: app.id, text: written } } };
      }
      if (sub === 'notes' && subId !== undefined && req.method === 'DELETE') return { status: 204 };
    }
    if (resource === 'gadgets' && sub === undefined) {
      if (id === undefined && (req.method === 'GET' || req.method === 'HEAD')) return { status: 200, body: { gadgets } };
      if (id === undefined && req.method === 'POST') {
        const gadget = { id: gadgets.length + 1, name: String((json().gadget as { name?: unknown } | undefined)?.name ?? '') };
        gadgets.push(gadget);
        return { status: 201, body: { gadget } };
      }
      const gadget = gadgets.find((row) => String(row.id) === id);
      if (!gadget) throw new V2Error(404, 'Fixture gadget not found');
      if (req.method === 'GET' || req.method === 'HEAD') return { status: 200, body: { gadget } };
      if (req.method === 'PUT') {
        gadget.name = String((json().gadget as { name?: unknown } | undefined)?.name ?? gadget.name);
        return { status: 200, body: { gadget } };
      }
      if (req.method === 'DELETE') {
        gadgets.splice(gadgets.indexOf(gadget), 1);
        return { status: 200, body: { gadget } };
      }
    }
    if (resource === 'sprockets' && id === undefined && sub === undefined) {
      const visible = data.keys.get((headers.get('x-api-key') ?? headers.get('api-key') ?? '').trim()) ?? [];
      const sprockets = data.accounts.filter((account) => visible.includes(account.id)).map((account) => ({ id: account.id, name: account.name })).sort((a, b) => a.id - b.id);
      if (req.method === 'GET' || req.method === 'HEAD') return { status: 200, body: { sprockets } };
      if (req.method === 'POST') return { status: 201, body: { sprocket: { id: 1, name: String((json().sprocket as { name?: unknown } | undefined)?.name ?? '') } } };
    }
    throw new V2Error(404, 'Resource not found');
  }

  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const url = req.url ?? '';
      const format = /\.(json|xml)(?:\?|$)/.exec(url)?.[1] as V2Format | undefined;
      if (format === undefined || !/^\/v2\/fixture_/.test(url)) {
        void forward(req, body, `${upstream}${url}`)
          .then(({ status, headers, payload }) => {
            res.writeHead(status, headers);
            res.end(payload);
          })
          .catch(() => res.destroy());
        return;
      }
      const entry = { method: req.method ?? '', url, headers: req.headers, body: body.toString('utf8') };
      received.push(entry);
      let status: number;
      let out: V2Body | undefined;
      let extra: Record<string, string> = {};
      try {
        ({ status, body: out, headers: extra = {} } = answer(entry, origin));
      } catch (error) {
        if (!(error instanceof V2Error)) throw error;
        status = error.status;
        out = errorBody(error.title, error.messages);
        extra = error.headers;
      }
      if (out === undefined) {
        res.writeHead(status, extra);
        res.end();
        return;
      }
      const text = serialise(out, format);
      res.writeHead(status, { 'content-type': CONTENT_TYPES[format], 'content-length': Buffer.byteLength(text), ...extra });
      res.end(text);
    });
  });
  const { origin, close } = await listenOnLoopback(server);
  return { origin, close, received, notes, gadgets };
}

async function forward(req: IncomingMessage, body: Buffer, target: string): Promise<{ status: number; headers: Record<string, string>; payload: Buffer }> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(req.headers)) if (typeof value === 'string' && name !== 'host' && name !== 'content-length') headers[name] = value;
  const response = await fetch(target, { method: req.method ?? 'GET', headers, ...(body.length > 0 ? { body } : {}) });
  const out: Record<string, string> = {};
  response.headers.forEach((value, name) => {
    if (name !== 'content-encoding' && name !== 'content-length' && name !== 'transfer-encoding') out[name] = value;
  });
  return { status: response.status, headers: out, payload: Buffer.from(await response.arrayBuffer()) };
}
