/**
 * What every part of the /bridge/ page (page.ts and its page-*.ts sections) writes HTML with:
 * the escaping every recorded string goes through (request paths, answer values and User-Agents
 * are caller data), attributes, and the readiness badge.
 */
export function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[ch] ?? ch);
}

export const e = escapeHtml;

/** ` name="value"`, the value escaped. */
export const attr = (name: string, value: string | number): string => ` ${name}="${e(String(value))}"`;

/** A readiness as a badge, coloured by its class (`v-safe-to-translate`...). */
export function badge(readiness: string, text: string = readiness): string {
  return `<span class="badge v-${e(readiness.replace(/ /g, '-'))}">${e(text)}</span>`;
}

/**
 * A collapsible section: its heading is the summary; `open` shows it unfolded. `data-fold` names
 * it, so the page's refresh keeps it open once the reader opened it.
 */
export function foldedSection(id: string, heading: string, body: string, options: { open?: boolean; note?: string } = {}): string {
  const note = options.note === undefined ? '' : ` <span class="muted">${e(options.note)}</span>`;
  return `<section${attr('id', id)}><details${attr('data-fold', id)}${options.open ? ' open' : ''}><summary><h2>${e(heading)}</h2>${note}</summary>${body}</details></section>`;
}
