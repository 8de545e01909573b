import type { ComparisonRecord } from '../compare/types.ts';
import { OUTCOMES, type ParityReport, type PatternExample, type RouteParity } from '../compare/parity-store.ts';
import type { ProbeReport } from '../probe/report.ts';
import { trendSection } from './page-chart.ts';
import { headSection } from './page-head.ts';
import { attr, badge, e, foldedSection } from './page-html.ts';
import { integrationsSection } from './page-integrations.ts';
import { STYLE } from './page-style.ts';

export { escapeHtml } from './page-html.ts';

/**
 * The /bridge/ page: the parity report as one server-rendered HTML document, complete without
 * JavaScript, with no external asset (inline CSS and SVG; the only script, nonce'd, refreshes
 * it). What a migration lead reads first comes first: the head (page-head.ts: routes in use safe
 * to translate, days left), the trend (page-chart.ts), the integrations (page-integrations.ts);
 * then the detail tables, each folded in a <details>. Every text from the report is HTML-escaped:
 * request paths, answer values and User-Agents are caller data. Rows carry stable data
 * attributes (data-route, data-method, data-verdict, data-pattern, data-outcome, data-count) for
 * tests and for anyone scraping the page.
 */
export const REFRESH_SECONDS = 15;
const RECENT_SHOWN = 20;
const VALUE_CHARS = 400;

/** A value as JSON text (cut when long); `(absent)` when that side lacks the field. */
export function showValue(value: unknown): string {
  if (value === undefined) return '(absent)';
  const text = JSON.stringify(value) ?? String(value);
  return text.length > VALUE_CHARS ? `${text.slice(0, VALUE_CHARS)}…` : text;
}


function verdictBadge(parity: Pick<RouteParity, 'readiness' | 'verdict'>): string {
  return badge(parity.readiness, parity.verdict);
}

function outcomeCells(outcomes: RouteParity['outcomes']): string {
  return OUTCOMES.map((o) => `<td class="n"${attr('data-outcome', o)}${outcomes[o] === 0 ? ' data-zero' : ''}>${outcomes[o]}</td>`).join('');
}

const OUTCOME_HEADERS = OUTCOMES.map((o) => `<th>${e(o.replace('_', ' '))}</th>`).join('');

function routeRow(r: RouteParity): string {
  return (
    `<tr${attr('data-route', r.route)}${attr('data-method', r.method)}${attr('data-verdict', r.readiness)}${attr('data-mode', r.mode ?? '')}${attr('data-fidelity', r.fidelity)}>` +
    `<td>${e(r.method)}</td><td><code>${e(r.route)}</code><div class="summary">${e(r.summary)}</div></td>` +
    `<td>${e(r.mode ?? '—')}</td><td>${e(r.fidelity)}</td><td class="n" data-count="requests">${r.requests}</td>${outcomeCells(r.outcomes)}` +
    `<td class="verdict">${verdictBadge(r)}</td></tr>`
  );
}

function routeTable(rows: readonly RouteParity[]): string {
  return (
    `<table><thead><tr><th>Method</th><th>Route</th><th>Mode</th><th>Fidelity</th><th>Requests</th>${OUTCOME_HEADERS}<th>Readiness</th></tr></thead>` +
    `<tbody>${rows.map(routeRow).join('')}</tbody></table>`
  );
}

function readinessSection(report: ParityReport): string {
  const active = report.routes.filter((r) => r.requests > 0 || OUTCOMES.some((o) => r.outcomes[o] > 0));
  const idle = report.routes.filter((r) => !active.includes(r));
  const activePart = active.length > 0 ? routeTable(active) : '<p class="empty">No request seen yet.</p>';
  const idlePart =
    idle.length > 0 ? `<details id="idle-routes" data-fold="idle-routes"><summary>${idle.length} routes not requested yet</summary>${routeTable(idle)}</details>` : '';
  return foldedSection('readiness', 'Readiness by route', activePart + idlePart, { note: `${active.length} in use, ${idle.length} not requested yet` });
}

function exampleCells(example: PatternExample): string {
  return (
    `<td><code class="request">${e(example.request)}</code><div class="muted">at <code class="path">${e(example.path || '(body)')}</code>, ${e(example.kind)}, ${e(example.verdict)}</div></td>` +
    `<td><pre class="legacy" data-side="legacy">${e(showValue(example.legacy))}</pre></td>` +
    `<td><pre class="translated" data-side="translated">${e(showValue(example.translated))}</pre></td>`
  );
}

function patternsSection(report: ParityReport): string {
  if (report.worstPatterns.length === 0) {
    return foldedSection('worst-patterns', 'Worst field paths', '<p class="empty">No difference recorded yet.</p>', { note: 'none yet' });
  }
  const rows = report.worstPatterns.map((p) => {
    const kinds = Object.entries(p.kinds)
      .map(([kind, n]) => `${kind} ${n}`)
      .join(', ');
    return (
      `<tr${attr('data-route', p.route)}${attr('data-method', p.method)}${attr('data-pattern', p.pattern)}${attr('data-reportable', String(p.reportable))}>` +
      `<td>${e(p.method)} <code>${e(p.route)}</code></td><td><code class="pattern">${e(p.pattern || '(body)')}</code>` +
      `<div class="muted">${e(kinds)}${p.mismatch > 0 && !p.reportable ? '; within the legacy API\'s own noise' : ''}</div></td>` +
      `<td class="n" data-count="mismatch">${p.mismatch}</td><td class="n" data-count="noise">${p.noise}</td>` +
      `<td class="n" data-count="gap">${p.gap}</td><td class="n" data-count="tolerated">${p.tolerated}</td>${exampleCells(p.example)}</tr>`
    );
  });
  return foldedSection(
    'worst-patterns',
    'Worst field paths',
    '<p class="muted">By mismatches. Noise: the two legacy answers differed there too. Gap: a mapping documents it. Tolerated: inside the path\'s threshold. ' +
    'A field counts as differing only when its mismatches outnumber its noise by more than 20 % (Diffy\'s rule).</p>' +
      '<table><thead><tr><th>Route</th><th>Field pattern</th><th>Mismatch</th><th>Noise</th><th>Gap</th><th>Tolerated</th><th>Example request</th><th>Legacy</th><th>Translated</th></tr></thead>' +
      `<tbody>${rows.join('')}</tbody></table>`,
    { note: `${report.worstPatterns.filter((p) => p.reportable).length} differing` },
  );
}

function gapList(gaps: readonly string[], fold: string): string {
  if (gaps.length === 0) return '';
  return `<details class="gaps"${attr('data-fold', fold)}><summary>the ${gaps.length} known gap${gaps.length === 1 ? '' : 's'}</summary><ul>${gaps.map((gap) => `<li>${e(gap)}</li>`).join('')}</ul></details>`;
}

function usageSection(report: ParityReport): string {
  if (report.usage.length === 0) return foldedSection('usage', 'What callers use', '<p class="empty">No request seen yet.</p>', { note: 'nothing yet' });
  const rows = report.usage.map((u) => {
    const modes = Object.entries(u.byMode)
      .map(([mode, n]) => `${mode} ${n}`)
      .join(', ');
    return (
      `<tr${attr('data-route', u.route)}${attr('data-method', u.method)}${attr('data-fidelity', u.fidelity)}${attr('data-verdict', u.readiness)}>` +
      `<td>${e(u.method)}</td><td><code>${e(u.route)}</code></td><td class="n" data-count="requests">${u.requests}</td>` +
      `<td>${e(modes)}</td><td>${e(u.fidelity)}</td><td><div class="if-switched">${e(u.ifSwitched)}</div>${gapList(u.knownGaps, `gaps ${u.method} ${u.route}`)}</td></tr>`
    );
  });
  return foldedSection(
    'usage',
    'What callers use',
    '<p class="muted">Routes by requests, with what a switch to the translation would change now.</p>' +
      '<table><thead><tr><th>Method</th><th>Route</th><th>Requests</th><th>Modes</th><th>Fidelity</th><th>If switched now</th></tr></thead>' +
      `<tbody>${rows.join('')}</tbody></table>`,
    { note: `${report.usage.length} routes` },
  );
}

function recordDetail(record: ComparisonRecord): string {
  if (record.error !== undefined) return `<span class="muted">error:</span> ${e(record.error)}`;
  if (record.dryRun) {
    const calls = record.dryRun.calls.map((call) => `${call.operation} ${showValue(call.variables)}`).join('\n');
    return `<span class="muted">dry run (${e(record.dryRun.side)} would have sent):</span><pre>${e(calls)}</pre>`;
  }
  // Mismatches first, then the rest, as they came.
  const ordered = [...record.differences.filter((d) => d.verdict === 'mismatch'), ...record.differences.filter((d) => d.verdict !== 'mismatch')];
  const shown = ordered.slice(0, 3);
  const lines = shown.map((d) => `${d.path || '(body)'} ${d.kind} (${d.verdict}): ${showValue(d.legacy)} → ${showValue(d.translated)}`);
  const more = record.differences.length - shown.length;
  return `<pre>${e(lines.join('\n'))}</pre>${more > 0 ? `<span class="muted">${more} more difference${more === 1 ? '' : 's'}</span>` : ''}`;
}

function recentSection(report: ParityReport): string {
  const records = report.recent.slice(0, RECENT_SHOWN);
  if (records.length === 0) return foldedSection('recent', 'Recent records', '<p class="empty">No non-matching comparison kept yet.</p>', { note: 'none yet' });
  const rows = records.map(
    (r) =>
      `<tr${attr('data-record', r.id)}${attr('data-route', r.route)}${attr('data-outcome', r.outcome)}>` +
      `<td><time${attr('datetime', new Date(r.at).toISOString())}>${e(new Date(r.at).toISOString())}</time></td>` +
      `<td>${e(r.method)} <code>${e(r.route)}</code><div><code class="request">${e(r.request)}</code></div></td>` +
      `<td>${e(r.mode)}</td><td>${e(r.outcome)}</td><td>${e(String(r.status.legacy ?? '—'))} / ${e(String(r.status.translated ?? '—'))}</td>` +
      `<td>${recordDetail(r)}</td></tr>`,
  );
  return foldedSection(
    'recent',
    'Recent records',
    `<p class="muted">The newest ${records.length} of ${report.recordsKept} kept (at most ${report.maxRecords}).</p>` +
      '<table><thead><tr><th>At</th><th>Request</th><th>Mode</th><th>Outcome</th><th>Status legacy / translated</th><th>Detail</th></tr></thead>' +
      `<tbody>${rows.join('')}</tbody></table>`,
    { note: `${records.length} shown` },
  );
}

function totalsLine(report: ParityReport): string {
  const outcomes = OUTCOMES.map((o) => `<span${attr('data-total', o)}>${e(o.replace('_', ' '))} ${report.totals.outcomes[o]}</span>`).join(' · ');
  return `<p id="totals"><span data-total="requests">${report.totals.requests} requests</span> · ${outcomes}</p>`;
}

/**
 * The last `npm run probe` (src/probe/): each probe's verdict and evidence, and the read routes
 * it compared with the legacy API. Read from PROBE_REPORT_PATH on each view.
 */
function probeSection(probe: ProbeReport | undefined): string {
  if (probe === undefined) return '<section id="probe"><h2>Last probe</h2> <span class="empty">none yet: run <code>npm run probe</code>.</span></section>';
  const rows = probe.probes
    .map((p) => `<tr${attr('data-probe', p.name)}${attr('data-verdict', p.verdict)}><td><code>${e(p.name)}</code><div class="summary">${e(p.checks)}</div></td><td><span class="badge v-${p.verdict}">${e(p.verdict)}</span></td><td>${e(p.evidence)}</td></tr>`)
    .join('');
  let routes = '';
  if (probe.legacy !== null) {
    const routeRows = probe.legacy.routes
      .map((r) => `<tr${attr('data-probe-route', r.route)}${attr('data-result', r.result)}><td><code>${e(r.route)}</code></td><td>${e(r.result)}</td><td>${e(r.outcome)}${r.differing.length > 0 ? `: ${e(r.differing.join(', '))}` : ''}</td></tr>`)
      .join('');
    const unavailable = probe.legacy.unavailable === null ? '' : `<p class="muted">Legacy API not compared: ${e(probe.legacy.unavailable)}</p>`;
    routes = `${unavailable}<table><thead><tr><th>Route (GET)</th><th>Legacy vs translation</th><th>Outcome</th></tr></thead><tbody>${routeRows}</tbody></table>`;
  }
  const counts = probe.probes.reduce<Record<string, number>>((n, p) => ({ ...n, [p.verdict]: (n[p.verdict] ?? 0) + 1 }), {});
  return foldedSection(
    'probe',
    'Last probe',
    `<p class="muted">Account ${probe.accountId}, ${e(probe.nerdgraph)}, at <time${attr('datetime', probe.at)}>${e(probe.at)}</time>.</p>` +
      `<table><thead><tr><th>Probe</th><th>Verdict</th><th>Evidence</th></tr></thead><tbody>${rows}</tbody></table>${routes}`,
    { note: `${probe.at}: ${Object.entries(counts).map(([verdict, n]) => `${verdict} ${n}`).join(', ')}` },
  );
}

/** The page's <main>: what the refresh script swaps. */
function mainContent(report: ParityReport, now: number, probe?: ProbeReport): string {
  return (
    headSection(report, now) +
    trendSection(report.series) +
    integrationsSection(report) +
    '<h2 id="details">Details</h2>' +
    `<p class="muted">Generated <time id="generated-at"${attr('datetime', report.generatedAt)}>${e(report.generatedAt)}</time>. ` +
    'Compare mode answers from the legacy API and diffs the translation off the path; candidate answers with the translation.</p>' +
    totalsLine(report) +
    readinessSection(report) +
    patternsSection(report) +
    usageSection(report) +
    recentSection(report) +
    probeSection(probe)
  );
}

// Replaces <main> with a fresh copy every REFRESH_SECONDS while the tab is visible, keeping the
// folds the reader opened open (each <details> names itself in data-fold). A 'bridge:refresh'
// event on the document refreshes at once ('bridge:refreshed' follows): what a test drives.
const REFRESH_SCRIPT = `
(() => {
  const box = document.getElementById('auto-refresh');
  document.getElementById('refresh').style.display = 'block';
  const refresh = async () => {
    try {
      const answer = await fetch(location.href, { cache: 'no-store', credentials: 'same-origin' });
      if (!answer.ok) return;
      // Only main is parsed: the fresh page's own style and script elements carry another
      // nonce, which this page's CSP would refuse (and report) even in a parsed document.
      const text = await answer.text();
      const from = text.indexOf('<main>');
      const to = text.lastIndexOf('</main>');
      if (from < 0 || to < from) return;
      const fresh = new DOMParser().parseFromString(text.slice(from, to + 7), 'text/html').querySelector('main');
      if (!fresh) return;
      const opened = new Set([...document.querySelectorAll('main details[open][data-fold]')].map((fold) => fold.dataset.fold));
      for (const fold of fresh.querySelectorAll('details[data-fold]')) if (opened.has(fold.dataset.fold)) fold.open = true;
      document.querySelector('main').replaceWith(fresh);
      document.dispatchEvent(new Event('bridge:refreshed'));
    } catch { /* the next tick tries again */ }
  };
  document.addEventListener('bridge:refresh', () => void refresh());
  setInterval(() => {
    if (box.checked && !document.hidden) void refresh();
  }, ${REFRESH_SECONDS * 1000});
})();
`;

/** `now`: the server's clock, for the days left (default: the report's time). */
export function renderParityPage(report: ParityReport, options: { nonce: string; probe?: ProbeReport; now?: number }): string {
  return (
    '<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">' +
    `<title>v2-bridge parity</title><style${attr('nonce', options.nonce)}>${STYLE}</style></head><body>` +
    '<header><h1>v2-bridge: migration readiness</h1>' +
    `<label id="refresh"><input type="checkbox" id="auto-refresh" checked> refresh every ${REFRESH_SECONDS} s</label></header>` +
    `<main>${mainContent(report, options.now ?? Date.parse(report.generatedAt), options.probe)}</main>` +
    `<script${attr('nonce', options.nonce)}>${REFRESH_SCRIPT}</script></body></html>`
  );
}
