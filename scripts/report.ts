import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { z } from 'zod';

/**
 * `npm run report [-- --url http://127.0.0.1:8080]`: the gateway's /bridge/parity.json as tables,
 * one row per route (mode, requests, outcomes, readiness verdict), then the worst field patterns
 * with an example each. BRIDGE_TOKEN, when set, is sent as a Bearer token and never printed: a
 * URL with user:password in it is refused (without echoing it), and anything a server answers is
 * printed with the token masked and control characters shown.
 */
const DEFAULT_URL = 'http://127.0.0.1:8080';
const FETCH_TIMEOUT_MS = 10_000;
const CELL_MAX = 60;

const counts = z.object({
  match: z.number(),
  mismatch: z.number(),
  noise: z.number(),
  error: z.number(),
  dropped: z.number(),
  dry_run: z.number(),
});

const example = z.object({ request: z.string(), path: z.string(), legacy: z.unknown().optional(), translated: z.unknown().optional() });

/** The part of the parity report the CLI prints (src/compare/parity-store.ts ParityReport). */
export const reportSchema = z.object({
  generatedAt: z.string(),
  totals: z.object({ requests: z.number(), outcomes: counts }),
  routes: z.array(
    z.object({
      route: z.string(),
      method: z.string(),
      mode: z.string().nullable(),
      fidelity: z.string(),
      requests: z.number(),
      outcomes: counts,
      verdict: z.string(),
    }),
  ),
  worstPatterns: z.array(
    z.object({
      route: z.string(),
      method: z.string(),
      pattern: z.string(),
      mismatch: z.number(),
      noise: z.number(),
      gap: z.number(),
      tolerated: z.number(),
      example,
    }),
  ),
});
export type PrintedReport = z.infer<typeof reportSchema>;

// Caller data reaches a terminal: control characters (ANSI escapes, C1 CSI) are shown, not obeyed.
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/g;
const printable = (text: string): string => text.replace(CONTROL, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);
/** The token masked, should a server echo it back. */
const maskToken = (text: string, token: string | undefined): string => (token ? text.split(token).join('[redacted]') : text);
/** Text fit for the terminal: the token masked, control characters shown. */
export const printableMessage = (text: string, token: string | undefined): string => printable(maskToken(text, token));
const cut = (text: string, max = CELL_MAX): string => {
  const shown = printable(text);
  return shown.length > max ? `${shown.slice(0, max - 1)}…` : shown;
};

/** Left-aligned columns, numbers right-aligned; the last column is not padded. */
function table(header: readonly string[], rows: ReadonlyArray<ReadonlyArray<string | number>>): string {
  const cells = [header, ...rows].map((row) => row.map(String));
  const widths = header.map((_, i) => Math.max(...cells.map((row) => (row[i] ?? '').length)));
  const numeric = header.map((_, i) => rows.length > 0 && rows.every((row) => typeof row[i] === 'number'));
  return cells
    .map((row) =>
      row
        .map((cell, i) => (i === row.length - 1 ? cell : numeric[i] ? cell.padStart(widths[i] ?? 0) : cell.padEnd(widths[i] ?? 0)))
        .join('  ')
        .trimEnd(),
    )
    .join('\n');
}

const showValue = (value: unknown): string => (value === undefined ? '(absent)' : cut(JSON.stringify(value) ?? String(value), 40));

export function formatReport(report: PrintedReport): string {
  const active = report.routes.filter((r) => r.requests > 0 || Object.values(r.outcomes).some((n) => n > 0));
  const idle = report.routes.length - active.length;
  const { totals } = report;
  const lines = [
    `v2-bridge parity, ${printable(report.generatedAt)}: ${totals.requests} requests; ${totals.outcomes.match} match, ${totals.outcomes.mismatch} mismatch, ` +
      `${totals.outcomes.noise} noise, ${totals.outcomes.error} error, ${totals.outcomes.dropped} dropped, ${totals.outcomes.dry_run} dry run`,
    '',
  ];
  if (active.length === 0) lines.push('No request seen yet.');
  else {
    lines.push(
      table(
        ['ROUTE', 'MODE', 'REQUESTS', 'MATCH', 'MISMATCH', 'NOISE', 'ERROR', 'DROPPED', 'DRY RUN', 'VERDICT'],
        active.map((r) => [
          printable(`${r.method} ${r.route}`),
          printable(r.mode ?? '-'),
          r.requests,
          r.outcomes.match,
          r.outcomes.mismatch,
          r.outcomes.noise,
          r.outcomes.error,
          r.outcomes.dropped,
          r.outcomes.dry_run,
          printable(r.verdict),
        ]),
      ),
    );
  }
  if (idle > 0) lines.push(`(${idle} declared routes not requested yet)`);
  lines.push('', 'Worst field patterns');
  if (report.worstPatterns.length === 0) lines.push('No difference recorded yet.');
  else {
    lines.push(
      table(
        ['ROUTE', 'PATTERN', 'MISMATCH', 'NOISE', 'GAP', 'TOLERATED', 'EXAMPLE (legacy -> translated)'],
        report.worstPatterns.map((p) => [
          printable(`${p.method} ${p.route}`),
          cut(p.pattern || '(body)'),
          p.mismatch,
          p.noise,
          p.gap,
          p.tolerated,
          `${showValue(p.example.legacy)} -> ${showValue(p.example.translated)} at ${cut(p.example.path, 80)} in ${cut(p.example.request, 120)}`,
        ]),
      ),
    );
  }
  return lines.join('\n');
}

const errorAnswer = z.object({ error: z.object({ title: z.string() }) });

export const ReportMessages = {
  usage: `usage: npm run report [-- --url ${DEFAULT_URL}] (BRIDGE_TOKEN from the environment)`,
  notHttp: `--url must be an http(s) URL, e.g. ${DEFAULT_URL}`,
  credentials: '--url must not carry a user name or password (user:password@): put the token in BRIDGE_TOKEN instead',
} as const;

/**
 * The --url value, checked; the messages never quote it, as it may hold a secret. A user name
 * or password in it would be sent as Basic credentials nobody asked for, and end up in error
 * messages and shell history: the token belongs in BRIDGE_TOKEN.
 */
export function parseBaseUrl(text: string): string {
  const parsed = z.url({ protocol: /^https?$/ }).safeParse(text);
  if (!parsed.success) throw new Error(ReportMessages.notHttp);
  const url = new URL(parsed.data);
  if (url.username !== '' || url.password !== '') throw new Error(ReportMessages.credentials);
  return url.href;
}

/** Fetches and validates the report; throws an Error whose message is fit to print (no token in it). */
export async function fetchReport(baseUrl: string, token: string | undefined): Promise<PrintedReport> {
  const url = new URL('/bridge/parity.json', parseBaseUrl(baseUrl));
  const where = url.origin;
  let answer: Response;
  try {
    answer = await fetch(url, {
      headers: { accept: 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      signal: AbortSignal.timeout(FETCH_TIMEOUT_MS),
    });
  } catch (error) {
    const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : error instanceof Error ? error.message : String(error);
    throw new Error(`cannot reach the gateway at ${where}: ${printableMessage(cause, token)}`);
  }
  const text = await answer.text();
  if (answer.status !== 200) {
    const parsed = errorAnswer.safeParse(safeJson(text));
    const hint = answer.status === 401 && !token ? ' (set BRIDGE_TOKEN)' : '';
    const title = parsed.success ? `: ${printableMessage(parsed.data.error.title, token)}` : '';
    throw new Error(`${where}/bridge/parity.json answered ${answer.status}${title}${hint}`);
  }
  const parsed = reportSchema.safeParse(safeJson(text));
  if (!parsed.success) {
    throw new Error(`${where}/bridge/parity.json is not a parity report: ${printableMessage(parsed.error.issues[0]?.message ?? 'unexpected shape', token)}`);
  }
  return parsed.data;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

async function main(token: string | undefined): Promise<void> {
  let url: string;
  try {
    // Its own messages quote the arguments (a stray positional could be a URL with a secret).
    url = parseArgs({ options: { url: { type: 'string', default: DEFAULT_URL } }, allowPositionals: false }).values.url;
  } catch {
    throw new Error(ReportMessages.usage);
  }
  const report = await fetchReport(url, token);
  // The table's cells are printable already; a report that quotes the token is not shown it.
  process.stdout.write(`${maskToken(formatReport(report), token)}\n`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const token = process.env.BRIDGE_TOKEN || undefined;
  main(token).catch((error: unknown) => {
    process.stderr.write(`report: ${printableMessage(error instanceof Error ? error.message : String(error), token)}\n`);
    process.exitCode = 1;
  });
}
