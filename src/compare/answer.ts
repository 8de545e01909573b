import { redactKeys } from '../ops/redact.ts';
import type { JsonValue } from '../v2/xml.ts';
import { decodeRailsXml } from './rails-xml.ts';

/**
 * One side's v2 answer, read for comparison: the body decoded from JSON or Rails XML (by content
 * type) and the Link header reduced to what clients act on. Reasons for failure are fixed short
 * texts: a parser's message can quote the body, and bodies are not ours to log.
 */

export type DecodedBody = { ok: true; value: JsonValue } | { ok: false; reason: string };

/** `application/json; charset=utf-8` -> `application/json`. */
export function mediaType(contentType: string): string {
  return (contentType.split(';')[0] ?? '').trim().toLowerCase();
}

function isJsonType(type: string): boolean {
  return type === 'application/json' || type.endsWith('+json');
}

function isXmlType(type: string): boolean {
  return type === 'application/xml' || type === 'text/xml' || type.endsWith('+xml');
}

function decodeJson(body: string): DecodedBody {
  try {
    return { ok: true, value: JSON.parse(body) as JsonValue };
  } catch {
    return { ok: false, reason: 'body is not valid JSON' };
  }
}

function decodeXml(body: string): DecodedBody {
  try {
    return { ok: true, value: decodeRailsXml(body).value };
  } catch {
    return { ok: false, reason: 'body is not valid v2 XML' };
  }
}

/**
 * Decodes a v2 body. An empty body (a 204, a HEAD) is `null`. Without a content type the first
 * character decides; any other content type (an HTML error page from a proxy) cannot be compared.
 */
export function decodeAnswerBody(contentType: string, body: string): DecodedBody {
  if (body.trim() === '') return { ok: true, value: null };
  const type = mediaType(contentType);
  if (isJsonType(type)) return decodeJson(body);
  if (isXmlType(type)) return decodeXml(body);
  if (type === '') return body.trimStart().startsWith('<') ? decodeXml(body) : decodeJson(body);
  return { ok: false, reason: `content type ${redactKeys(type).slice(0, 60)} is neither JSON nor XML` };
}

// Parameters that may carry a key (link.ts never echoes them; a legacy Link might): never kept.
const KEY_PARAMS = new Set(['api_key', 'api-key', 'x-api-key', 'apikey']);

function decoded(text: string): string {
  try {
    return decodeURIComponent(text.replace(/\+/g, ' '));
  } catch {
    return text;
  }
}

/**
 * A Link header as clients use it, per relation: the path and the decoded parameters, sorted,
 * with the origin ignored (the gateway and the legacy host differ there by design). Two
 * spellings of the same URL give the same text; a lost or changed parameter does not.
 * An entry that does not parse is kept under the relation `unparsable` as its redacted text.
 */
export function semanticLinks(header: string | null): Map<string, string> {
  const relations = new Map<string, string>();
  if (header === null || header.trim() === '') return relations;
  for (const entry of header.split(/,\s*(?=<)/)) {
    const match = /^\s*<([^>]*)>\s*;\s*rel="?([A-Za-z]+)"?\s*$/.exec(entry);
    if (!match) {
      relations.set('unparsable', redactKeys(entry.trim()).slice(0, 200));
      continue;
    }
    const url = match[1] ?? '';
    const queryStart = url.indexOf('?');
    const withoutQuery = queryStart === -1 ? url : url.slice(0, queryStart);
    // Origin ignored: keep the path only, whether the URL is absolute or not.
    const path = withoutQuery.replace(/^[a-z][a-z0-9+.-]*:\/\/[^/]*/i, '') || '/';
    const params = (queryStart === -1 ? '' : url.slice(queryStart + 1))
      .split('&')
      .filter((p) => p !== '')
      .map((p) => {
        const equals = p.indexOf('=');
        const key = decoded(equals === -1 ? p : p.slice(0, equals));
        const value = equals === -1 ? '' : decoded(p.slice(equals + 1));
        return { key, value };
      })
      .filter(({ key }) => !KEY_PARAMS.has(key.trim().toLowerCase().replace(/\[\d*\]$/, '')))
      .map(({ key, value }) => `${key}=${value}`)
      .sort();
    relations.set((match[2] ?? '').toLowerCase(), redactKeys(`${decoded(path)}${params.length ? `?${params.join('&')}` : ''}`));
  }
  return relations;
}
