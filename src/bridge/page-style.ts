/**
 * The /bridge/ page's one stylesheet (inline, under the page's CSP nonce). Laid out for a
 * 1280 px screen and narrower without a horizontal scroll: tables take the page's width, and
 * long values (route templates, field paths, answers, User-Agents) wrap anywhere rather than
 * widen them (test/compare/bridge-browser.test.ts measures it).
 */
export const STYLE = `
:root{color-scheme:light dark;--bad:#c62828;--good:#2e7d32;--warn:#b26a00;--muted:#6b7280;--line:#d1d5db;--noise:#9ca3af}
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,sans-serif;margin:0 auto;padding:0 1.5rem 2rem;max-width:90rem}
h1{font-size:1.4rem;margin:1rem 0 .25rem}h2{font-size:1.1rem;margin:0 0 .5rem}summary h2{display:inline;margin:0}#probe h2{display:inline}
section{margin:1.25rem 0}summary{cursor:pointer;padding:.25rem 0}details>summary~*{margin-top:.5rem}
table{border-collapse:collapse;width:100%}th,td{border-bottom:1px solid var(--line);padding:.3rem .5rem;text-align:left;vertical-align:top;overflow-wrap:anywhere}
th{font-weight:600}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums;overflow-wrap:normal;white-space:nowrap}
code,pre{font:12px/1.4 ui-monospace,monospace;overflow-wrap:anywhere}pre{margin:0;white-space:pre-wrap;max-width:32rem}
.gaps{font-size:12px}.gaps ul{margin:.25rem 0;padding-left:1.2rem}
.summary,.muted{color:var(--muted);font-size:12px}.badge{display:inline-block;padding:0 .45rem;border-radius:.6rem;border:1px solid currentColor;overflow-wrap:anywhere}
.v-differs,.v-comparison-errors{color:var(--bad)}.v-safe-to-translate{color:var(--good)}.v-dry-runs-only,.v-not-compared-yet{color:var(--warn)}
.v-unsupported,.v-passthrough-only,.v-unknown{color:var(--muted)}.v-confirmed{color:var(--good)}.v-refuted{color:var(--bad)}td[data-outcome=mismatch]:not(:empty):not([data-zero]){color:var(--bad);font-weight:600}
pre.legacy{border-left:3px solid var(--good);padding-left:.4rem}pre.translated{border-left:3px solid var(--bad);padding-left:.4rem}
#refresh{display:none}.empty{color:var(--muted)}
#head .figures{display:flex;flex-wrap:wrap;gap:1rem 3rem;margin:.75rem 0}#head .figure{margin:0;font-size:1.05rem;max-width:36rem}
#head .big{display:block;font-size:2.4rem;line-height:1.1;font-variant-numeric:tabular-nums}
#trend svg{width:100%;max-width:60rem;height:auto;display:block}.s-match{fill:var(--good)}.s-mismatch{fill:var(--bad)}.s-noise{fill:var(--noise)}
#trend .axis{stroke:var(--line)}#trend text{font:11px system-ui,sans-serif;fill:var(--muted)}
.legend{display:flex;gap:1rem;list-style:none;padding:0;margin:.25rem 0;font-size:12px}.legend i{display:inline-block;width:.8rem;height:.8rem;margin-right:.3rem;vertical-align:-1px}
.legend .k-match{background:var(--good)}.legend .k-mismatch{background:var(--bad)}.legend .k-noise{background:var(--noise)}
#integrations col.who{width:30%}#integrations col.what{width:55%}ul.calls{margin:0;padding-left:1.1rem}ul.calls li{margin:.1rem 0}
`;
