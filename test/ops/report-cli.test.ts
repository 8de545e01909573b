import { execFile } from 'node:child_process';
import { createServer } from 'node:http';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReportMessages, formatReport, parseBaseUrl, reportSchema } from '../../scripts/report.ts';
import { listenOnLoopback, serveOnLoopback } from '../support/http.ts';
import { LIST, PARITY_SENTINEL_KEY, PASSTHROUGH_ONLY, createBridgeGateway, fillStore } from '../support/parity-fixture.ts';

/** `npm run report`: the table (pure, from a real store's report), and the CLI against a loopback gateway. */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const TOKEN = 'report-cli-token';
/** A token the tests try to make the CLI print. */
const SECRET = 'leaky-bridge-token-5ec7e7';

function runReport(args: string[], env: Record<string, string> = {}): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      ['--import', 'tsx', 'scripts/report.ts', ...args],
      { cwd: ROOT, env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env } },
      (error, stdout, stderr) => resolve({ code: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe('formatReport', async () => {
  const { store } = await createBridgeGateway();
  fillStore(store);
  const text = formatReport(reportSchema.parse(store.report()));
  const lines = text.split('\n');

  it('prints one row per route used: mode, requests, outcomes and verdict', () => {
    expect(lines[0]).toBe('v2-bridge parity, 2026-11-22T12:00:30.000Z: 19 requests; 3 match, 2 mismatch, 3 noise, 0 error, 1 dropped, 0 dry run');
    const header = lines.find((l) => l.startsWith('ROUTE  '));
    expect(header).toMatch(/^ROUTE\s+MODE\s+REQUESTS\s+MATCH\s+MISMATCH\s+NOISE\s+ERROR\s+DROPPED\s+DRY RUN\s+VERDICT$/);
    const apps = lines.find((l) => l.startsWith(`GET ${LIST} `));
    expect(apps?.split(/\s{2,}/)).toEqual([`GET ${LIST}`, 'compare', '6', '0', '2', '1', '0', '1', '0', 'differs in widgets[].name, widgets[].health_status']);
    expect(lines.find((l) => l.startsWith(`GET ${PASSTHROUGH_ONLY} `))?.split(/\s{2,}/)).toEqual([`GET ${PASSTHROUGH_ONLY}`, 'passthrough', '7', '0', '0', '0', '0', '0', '0', 'passthrough only']);
    expect(text).toMatch(/\(\d+ declared routes not requested yet\)/);
  });

  it('then the worst field patterns, each with its example', () => {
    const start = lines.indexOf('Worst field patterns');
    expect(start).toBeGreaterThan(0);
    const name = lines.slice(start).find((l) => l.includes(' widgets[].name '));
    expect(name?.split(/\s{2,}/).slice(0, 6)).toEqual([`GET ${LIST}`, 'widgets[].name', '2', '0', '0', '0']);
    expect(name).toContain('-> "checkout" at widgets[id=7].name in /v2/fixture_widgets.json?filter[name]=Checkout&api_key=[redacted]');
    expect(text.toLowerCase()).not.toContain(PARITY_SENTINEL_KEY.toLowerCase());
  });

  it('shows control characters of caller data instead of sending them to the terminal', async () => {
    const { store: hostile } = await createBridgeGateway();
    hostile.record({
      id: 'x',
      at: 0,
      route: LIST,
      method: 'GET',
      mode: 'compare',
      request: '/v2/fixture_widgets.json?filter[name]=\u001b]0;pwned\u0007\u009b2J',
      outcome: 'mismatch',
      status: { legacy: 200, translated: 200 },
      differences: [{ path: 'widgets[id=1].name\u001b[2J', pattern: 'widgets[].name\r', kind: 'value', verdict: 'mismatch', legacy: '\u009b31m', translated: 'b' }],
      ms: { legacy: 1, translated: 1 },
    });
    const printed = formatReport(reportSchema.parse(hostile.report()));
    // eslint-disable-next-line no-control-regex
    expect(printed.replace(/\n/g, '')).not.toMatch(/[\u0000-\u001f\u007f-\u009f]/);
    expect(printed).toContain('widgets[].name\\u000d');
    expect(printed).toContain('"\\u009b31m" -> "b"');
  });

  it('says so when nothing was seen', async () => {
    const { store: empty } = await createBridgeGateway();
    const printed = formatReport(reportSchema.parse(empty.report()));
    expect(printed).toContain('No request seen yet.');
    expect(printed).toContain('No difference recorded yet.');
  });
});

describe('npm run report against a gateway', async () => {
  const { gateway, store } = await createBridgeGateway({ bridgeToken: TOKEN });
  fillStore(store);
  let served: { url: string; close: () => Promise<void> };
  beforeAll(async () => {
    served = await serveOnLoopback(gateway.app.fetch);
  });
  afterAll(() => served.close());

  it('fetches parity.json with BRIDGE_TOKEN as a Bearer token and prints the table', async () => {
    const run = await runReport(['--url', served.url], { BRIDGE_TOKEN: TOKEN });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('differs in widgets[].name, widgets[].health_status');
    expect(run.stdout).not.toContain(TOKEN);
  });

  it('fails with a clear message, and no token, when refused or unreachable', async () => {
    const refused = await runReport(['--url', served.url]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toBe(`report: ${served.url}/bridge/parity.json answered 401: Bridge pages require the BRIDGE_TOKEN: send Authorization: Bearer <token>, or Basic with the token as password (set BRIDGE_TOKEN)\n`);
    const wrong = await runReport([`--url=${served.url}`], { BRIDGE_TOKEN: 'not-it' });
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).not.toContain('not-it');
    const badUrl = await runReport(['--url', 'ftp://x']);
    expect(badUrl.stderr).toBe('report: --url must be an http(s) URL, e.g. http://127.0.0.1:8080\n');
    // Port 9 (discard) on loopback: nothing listens there.
    const unreachable = await runReport(['--url', 'http://127.0.0.1:9']);
    expect(unreachable.code).toBe(1);
    expect(unreachable.stderr).toMatch(/^report: cannot reach the gateway at http:\/\/127\.0\.0\.1:9: /);
  });
});

describe('npm run report never prints the token', () => {
  /**
   * A server that answers with what it was sent: the Authorization header inside a 401 title
   * (with terminal escapes), or, for a token starting `report-me`, inside a parity report's
   * route name. Counts what reached it.
   */
  let echo: { origin: string; close: () => Promise<void> };
  let received = 0;
  beforeAll(async () => {
    const { store } = await createBridgeGateway();
    fillStore(store);
    const server = createServer((req, res) => {
      received += 1;
      const authorization = req.headers.authorization ?? '';
      res.setHeader('content-type', 'application/json');
      if (authorization.startsWith('Bearer report-me')) {
        const report = store.report();
        const [first] = report.routes;
        if (first) first.route = `/v2/${authorization}.json`;
        res.end(JSON.stringify(report));
        return;
      }
      res.statusCode = 401;
      res.end(JSON.stringify({ error: { title: `refused ${authorization} \u001b[2J\u001b]0;owned\u0007` } }));
    });
    echo = await listenOnLoopback(server);
  });
  afterAll(() => echo.close());

  it('refuses a --url with user:password (or a user name) in it, without echoing it or calling anyone', async () => {
    const port = new URL(echo.origin).port;
    for (const url of [`http://me:${SECRET}@127.0.0.1:${port}`, `http://${SECRET}@127.0.0.1:${port}`, `http://:${SECRET}@127.0.0.1:${port}/`]) {
      const run = await runReport(['--url', url]);
      expect(run.code, url).toBe(1);
      expect(run.stderr).toBe(`report: ${ReportMessages.credentials}\n`);
      expect(`${run.stdout}${run.stderr}`).not.toContain(SECRET);
    }
    expect(received).toBe(0);
    expect(() => parseBaseUrl(`https://u:${SECRET}@example.com`)).toThrow(ReportMessages.credentials);
    expect(parseBaseUrl('https://example.com:8443')).toBe('https://example.com:8443/');
  });

  it('answers a stray argument (a URL with a token, say) with its usage, not the argument', async () => {
    const run = await runReport([`http://me:${SECRET}@127.0.0.1:1`]);
    expect(run.code).toBe(1);
    expect(run.stderr).toBe(`report: ${ReportMessages.usage}\n`);
    const unknown = await runReport([`--token=${SECRET}`]);
    expect(unknown.stderr).toBe(`report: ${ReportMessages.usage}\n`);
  });

  it('masks the token in an error title a server echoes it in, and shows its control characters', async () => {
    const run = await runReport(['--url', echo.origin], { BRIDGE_TOKEN: SECRET });
    expect(run.code).toBe(1);
    expect(run.stderr).not.toContain(SECRET);
    expect(run.stderr).toBe(`report: ${echo.origin}/bridge/parity.json answered 401: refused Bearer [redacted] \\u001b[2J\\u001b]0;owned\\u0007\n`);
    // A short wrong token: refused, and not printed either.
    const wrong = await runReport(['--url', echo.origin], { BRIDGE_TOKEN: 'not-it' });
    expect(wrong.stderr).toContain('refused Bearer [redacted]');
    expect(wrong.stderr).not.toContain('not-it');
  });

  it('masks it in a report that quotes it', async () => {
    const token = `report-me-${SECRET}`;
    const run = await runReport(['--url', echo.origin], { BRIDGE_TOKEN: token });
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toContain('GET /v2/Bearer [redacted].json');
    expect(run.stdout).not.toContain(SECRET);
  });
});
