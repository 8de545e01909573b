import fc from 'fast-check';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxApp } from '../../sandbox/model.ts';
import { deploymentsOf } from '../../sandbox/writes.ts';
import { DEMO_KEY, FIXED_NOW, PRIMARY_ACCOUNT, createTestGateway, startSandbox, type TestGateway } from '../../test/support/harness.ts';
import { isoSeconds } from '../../src/v2/time.ts';

/**
 * The v0 answer (POST /deployments.xml) over the sandbox: Rails' record XML, written by the one
 * XML writer, for any text a client may put in a deployment's fields. Either the text is
 * refused as v2 refuses it (an XML error body), or the answer is well-formed XML 1.0 that reads
 * back to the text sent, as XML can carry it: the characters XML 1.0 cannot hold at all read
 * U+FFFD (as in every XML answer; the JSON answer and the recorded deployment keep them), and
 * line ends read as XML readers read them (\r\n and \r as \n).
 */
let sandbox: Awaited<ReturnType<typeof startSandbox>>;
let gateway: TestGateway;
let app: SandboxApp;

beforeAll(async () => {
  sandbox = await startSandbox({ apmApps: 20 });
  gateway = await createTestGateway({ nerdgraphUrl: sandbox.graphqlUrl });
  app = sandbox.sandbox.data.apps.find((a) => a.accountId === PRIMARY_ACCOUNT && a.reporting) as SandboxApp;
});
afterAll(async () => {
  await sandbox.close();
});

const TEXT_FIELDS = ['revision', 'changelog', 'description', 'user'] as const;
type TextField = (typeof TEXT_FIELDS)[number];
type Fields = Partial<Record<TextField, string>>;

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g;
// eslint-disable-next-line no-control-regex -- the characters XML 1.0 cannot hold are the point
const NOT_XML_CHAR = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g;
/** Any code point outside XML 1.0's Char production (a lone surrogate included). */
const OUTSIDE_XML = /[^\t\n\r\u0020-\ud7ff\ue000-\ufffd\u{10000}-\u{10ffff}]/u;

/** The text as UTF-8 carries it: a lone surrogate becomes U+FFFD. */
const wellFormed = (text: string): string => text.replace(LONE_SURROGATE, '\ufffd');
/** The text as an XML reader reads it back from the answer. */
const asXmlReadsIt = (text: string): string => wellFormed(text).replace(NOT_XML_CHAR, '\ufffd').replace(/\r\n?/g, '\n');

const parser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '', parseTagValue: false, trimValues: false, processEntities: true });

type Transport = 'form' | 'json';

/** Percent-encoded UTF-8, as a client's form encoder sends it (a lone surrogate as U+FFFD). */
const formValue = (text: string): string => [...Buffer.from(wellFormed(text), 'utf8')].map((byte) => `%${byte.toString(16).padStart(2, '0')}`).join('');

async function post(fields: Fields, transport: Transport): Promise<Response> {
  const pairs: Array<[string, string]> = [['application_id', String(app.id)], ...TEXT_FIELDS.flatMap((field): Array<[string, string]> => (fields[field] === undefined ? [] : [[field, fields[field]]]))];
  const body = transport === 'json' ? JSON.stringify({ deployment: { application_id: app.id, ...fields } }) : pairs.map(([key, value]) => `deployment[${key}]=${formValue(value)}`).join('&');
  const contentType = transport === 'json' ? 'application/json' : 'application/x-www-form-urlencoded';
  return gateway.app.request('/deployments.xml', { method: 'POST', headers: { 'X-Api-Key': DEMO_KEY, 'content-type': contentType }, body });
}

/** A parsed element: its text, or `{ nil: 'true' }` (attributes as parsed). */
type Element = string | { '#text'?: string; nil?: string; type?: string };

const textOf = (element: Element | undefined): string | null => {
  if (element === undefined) throw new Error('element missing');
  if (typeof element === 'string') return element;
  if (element.nil === 'true') return null;
  return element['#text'] ?? '';
};

// Text with the characters an XML writer gets wrong: markup, entities, CDATA's end, control
// characters, XML's non-characters, line ends, lone surrogates, combining marks.
const TRICKY = ['\u001b', '\u0000', '\u0008', '\u000b', '\u007f', ']]>', '<![CDATA[', '&', '&amp;', '<', '>', '"', "'", '\r', '\r\n', '\n', '\t', ' ', '\u00a0', '\ufffe', '\uffff', '\ud800', '\udc00', 'é', 'e\u0301', '\u2028', '-->'];
// Any UTF-16 unit of the BMP, lone surrogates included.
const bmpUnit = fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code));
const unit = fc.oneof(
  { arbitrary: fc.constantFrom(...TRICKY), weight: 3 },
  { arbitrary: fc.string({ unit: 'binary-ascii', minLength: 1, maxLength: 1 }), weight: 4 },
  { arbitrary: bmpUnit, weight: 3 },
);
// Mostly short; sometimes past the 31 characters a user may have, or past the BMP (refused: v2 stored utf8mb3).
const fieldText = fc.oneof(
  { arbitrary: fc.string({ unit, maxLength: 12 }), weight: 6 },
  { arbitrary: fc.string({ unit, minLength: 20, maxLength: 40 }), weight: 1 },
  { arbitrary: fc.string({ unit: fc.oneof(unit, fc.constant('😀'), fc.string({ unit: 'grapheme', minLength: 1, maxLength: 1 })), maxLength: 8 }), weight: 1 },
);
const fieldsArb: fc.Arbitrary<Fields> = fc.record({ revision: fieldText, changelog: fieldText, description: fieldText, user: fieldText }, { requiredKeys: [] });

describe('POST /deployments.xml: the v0 answer for any deployment text', () => {
  it('is either a v2 refusal in XML or well-formed XML reading back the text sent (the deployment recorded as sent)', async () => {
    let answered = 0;
    let refused = 0;
    await fc.assert(
      fc.asyncProperty(fieldsArb, fc.constantFrom<Transport>('form', 'json'), async (fields, transport) => {
        const before = new Set(deploymentsOf(sandbox.sandbox.data, app));
        const response = await post(fields, transport);
        const text = await response.text();
        expect(response.headers.get('content-type')).toBe('application/xml; charset=utf-8');
        expect(text, 'XML 1.0 characters only').not.toMatch(OUTSIDE_XML);
        expect(XMLValidator.validate(text), text).toBe(true);
        const parsed = parser.parse(text) as { response?: { error?: { title?: unknown } }; deployment?: Record<string, Element> };
        if (response.status !== 201) {
          // Refused as v2 refuses: a 4xx with v2's error body, and nothing recorded.
          expect([400, 422], text).toContain(response.status);
          expect(typeof parsed.response?.error?.title, text).toBe('string');
          expect(deploymentsOf(sandbox.sandbox.data, app)).toHaveLength(before.size);
          refused += 1;
          return;
        }
        answered += 1;
        const deployment = parsed.deployment;
        if (deployment === undefined) throw new Error(`no <deployment> root: ${text}`);
        const sent = (field: TextField): string | undefined => (transport === 'form' && fields[field] !== undefined ? wellFormed(fields[field]) : fields[field]);
        for (const field of TEXT_FIELDS) {
          const value = sent(field);
          // A blank revision is none (v0 only); an absent field is nil.
          const none = value === undefined || (field === 'revision' && value.trim() === '');
          expect(textOf(deployment[field]), `${field} in ${text}`).toBe(none ? null : asXmlReadsIt(value));
        }
        expect(textOf(deployment['agent-id'])).toBe(String(app.id));
        // The recorded deployment holds the text itself: only the XML answer replaces what XML cannot hold.
        const recorded = deploymentsOf(sandbox.sandbox.data, app).filter((d) => !before.has(d));
        expect(recorded).toHaveLength(1);
        expect({ changelog: recorded[0]?.changelog, description: recorded[0]?.description, user: recorded[0]?.user }).toEqual({
          changelog: sent('changelog') ?? null,
          description: sent('description') ?? null,
          user: sent('user') ?? null,
        });
      }),
      { numRuns: 100 },
    );
    // Both outcomes were seen, so neither half of the property is vacuous.
    expect(answered).toBeGreaterThan(20);
    expect(refused).toBeGreaterThan(5);
  }, 120_000);

  it('answers a changelog holding ESC with U+FFFD in the XML and the ESC itself in the JSON', async () => {
    const form = (format: string) =>
      gateway.app.request(`/deployments.${format}`, {
        method: 'POST',
        headers: { 'X-Api-Key': DEMO_KEY, 'content-type': 'application/x-www-form-urlencoded' },
        body: `deployment[application_id]=${app.id}&deployment[revision]=r&deployment[changelog]=%1B%5B31mred%1B%5B0m%20%5D%5D%3E%20%26`,
      });
    const xml = await form('xml');
    expect(xml.status).toBe(201);
    expect(await xml.text()).toContain('<changelog>\ufffd[31mred\ufffd[0m ]]&gt; &amp;</changelog>');
    const json = await form('json');
    expect(json.status).toBe(201);
    expect(((await json.json()) as { deployment: { changelog: string } }).deployment.changelog).toBe('\u001b[31mred\u001b[0m ]]> &');
  });

  it('answers the documented example (app_name and description only) in v0 XML byte for byte', async () => {
    const response = await gateway.app.request('/deployments.xml', {
      method: 'POST',
      headers: { 'X-Api-Key': DEMO_KEY, 'content-type': 'application/x-www-form-urlencoded' },
      body: `deployment[app_name]=${encodeURIComponent(app.name)}&deployment[description]=${encodeURIComponent('This is an app id deployment')}`,
    });
    const text = await response.text();
    expect(response.status, text).toBe(201);
    const id = /<id type="integer">(\d+)<\/id>/.exec(text)?.[1];
    expect(text).toBe(
      [
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<deployment>',
        `  <account-id type="integer">${PRIMARY_ACCOUNT}</account-id>`,
        `  <agent-id type="integer">${app.id}</agent-id>`,
        '  <changelog nil="true"/>',
        '  <description>This is an app id deployment</description>',
        `  <id type="integer">${id}</id>`,
        '  <revision nil="true"/>',
        `  <timestamp type="datetime">${isoSeconds(FIXED_NOW)}</timestamp>`,
        '  <user nil="true"/>',
        '</deployment>',
        '',
      ].join('\n'),
    );
  });
});
