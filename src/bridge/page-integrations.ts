import type { IntegrationReport, IntegrationRoute, ParityReport } from '../compare/parity-store.ts';
import { attr, badge, e } from './page-html.ts';

/**
 * The /bridge/ page's integrations: callers grouped by User-Agent and key fingerprint (an HMAC of
 * the key, shortened; never the key), the one with most calls to routes not safe to translate
 * first, with those routes listed and the ready ones one click away. What a lead needs to know
 * which script to fix first. The User-Agent is the caller's text: escaped like everything else.
 */

function routeItem(r: IntegrationRoute): string {
  const readiness = r.readiness === null ? '<span class="muted">routes past the bound, counted together</span>' : badge(r.readiness);
  return (
    `<li${attr('data-route', r.route)}${attr('data-method', r.method)}${attr('data-ready', String(r.ready))}${attr('data-calls', r.calls)}>` +
    `${e(r.method)} <code>${e(r.route)}</code> <span class="muted">${r.calls} call${r.calls === 1 ? '' : 's'}</span> ${readiness}</li>`
  );
}

function routesCell(routes: readonly IntegrationRoute[], fold: string): string {
  const waiting = routes.filter((r) => !r.ready);
  const ready = routes.filter((r) => r.ready);
  const waitingList = waiting.length > 0 ? `<ul class="calls">${waiting.map(routeItem).join('')}</ul>` : '<span class="v-safe-to-translate">every route it calls is safe to translate</span>';
  const readyList =
    ready.length > 0 ? `<details class="ready-routes"${attr('data-fold', fold)}><summary>${ready.length} ready route${ready.length === 1 ? '' : 's'}</summary><ul class="calls">${ready.map(routeItem).join('')}</ul></details>` : '';
  return waitingList + readyList;
}

function integrationRow(integration: IntegrationReport): string {
  return (
    `<tr class="integration"${attr('data-fingerprint', integration.fingerprint)}${attr('data-calls', integration.calls)}${attr('data-not-ready-calls', integration.notReadyCalls)}>` +
    `<td><div class="agent">${e(integration.agent)}</div><div class="muted">key <code class="fingerprint">${e(integration.fingerprint)}</code></div></td>` +
    `<td class="n" data-count="calls">${integration.calls}</td><td class="n" data-count="not-ready">${integration.notReadyCalls}</td>` +
    `<td>${routesCell(integration.routes, `ready ${integration.fingerprint} ${integration.agent}`)}</td></tr>`
  );
}

export function integrationsSection(report: ParityReport): string {
  const intro =
    '<p class="muted">Callers by User-Agent and key fingerprint (an HMAC of the key under the gateway\'s secret, shortened: it tells keys apart, and gives nothing of a key away). ' +
    `The one with most calls to routes not safe to translate comes first. At most ${report.integrationsMax} integrations are kept; later ones are counted together as (others).</p>`;
  if (report.integrations.length === 0) return `<section id="integrations"><h2>Integrations</h2>${intro}<p class="empty">No caller seen yet.</p></section>`;
  return (
    `<section id="integrations"><h2>Integrations</h2>${intro}` +
    '<table><colgroup><col class="who"><col><col><col class="what"></colgroup>' +
    '<thead><tr><th>Integration (User-Agent, key fingerprint)</th><th class="n">Calls</th><th class="n">Not ready</th><th>Routes not safe to translate yet</th></tr></thead>' +
    `<tbody>${report.integrations.map(integrationRow).join('')}</tbody></table></section>`
  );
}
