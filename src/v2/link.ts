/**
 * The v2 `Link` paging header, as real clients parse it (client-behaviour.md §6):
 * `<abs-url>; rel="first", <abs-url>; rel="prev", <abs-url>; rel="next", <abs-url>; rel="last"`,
 * in that order, only the relations that apply, and no header at all on a single page.
 * Every URL keeps every original parameter, as sent, with `page=N` at the end. Characters
 * that Link parsers split on (`,` `;`) or that end a URL (`<` `>` `"` spaces), non-ASCII
 * text and stray `%` are percent-encoded: tomnomnom/linkheader (newrelic-client-go) splits
 * on `;`, kenahrens on `,`, and Node refuses non-ASCII header values outright.
 */

/** Parameters never echoed into a Link URL: an API key must not end up in a URL. */
const NEVER_ECHOED = new Set(['page', 'api_key', 'api-key', 'x-api-key', 'apikey']);

// What may stay as the client sent it: unreserved and sub-delimiter characters, brackets
// (as v2 clients write `filter[ids]`), `+` and valid percent-escapes. Everything else is
// percent-encoded as UTF-8, so the header is ASCII and every client parser sees one URL.
const KEPT = /[A-Za-z0-9\-._~!$'()*+=:@/?[\]]/;

export interface PageLinks {
  first?: number;
  prev?: number;
  next?: number;
  last?: number;
}

/** Which relations a page has. A page past the end points back at the last page. */
export function pageRelations(page: number, lastPage: number): PageLinks {
  const links: PageLinks = {};
  if (page > 1 && lastPage >= 1) {
    links.first = 1;
    links.prev = Math.min(page - 1, lastPage);
  }
  if (page < lastPage) {
    links.next = page + 1;
    links.last = lastPage;
  }
  return links;
}

/** One `key=value` segment made safe for a Link URL, with its meaning unchanged. */
export function linkSafe(segment: string): string {
  let out = '';
  for (let i = 0; i < segment.length; i++) {
    const ch = segment[i] as string;
    if (ch === '%' && /^[0-9A-Fa-f]{2}$/.test(segment.slice(i + 1, i + 3))) {
      out += ch;
    } else if (KEPT.test(ch)) {
      out += ch;
    } else {
      const code = segment.codePointAt(i) as number;
      const char = String.fromCodePoint(code);
      // A lone surrogate cannot be UTF-8 encoded: it becomes U+FFFD, as a decoder would.
      out += code >= 0xd800 && code <= 0xdfff ? '%EF%BF%BD' : encodeURIComponent(char);
      i += char.length - 1;
    }
  }
  return out;
}

function keyOf(segment: string): string {
  const raw = segment.split('=', 1)[0] ?? '';
  let key: string;
  try {
    key = decodeURIComponent(raw.replace(/\+/g, ' '));
  } catch {
    key = raw;
  }
  // `api_key[]` is still an api_key.
  return key.trim().toLowerCase().replace(/\[\d*\]$/, '');
}

/** `publicUrl` is the absolute URL the client called (gateway origin, raw path and query). */
export function linkHeader(publicUrl: string, page: number, lastPage: number): string | undefined {
  const relations = pageRelations(page, lastPage);
  const entries = (['first', 'prev', 'next', 'last'] as const).filter((rel) => relations[rel] !== undefined);
  if (entries.length === 0) return undefined;

  const queryStart = publicUrl.indexOf('?');
  const base = queryStart === -1 ? publicUrl : publicUrl.slice(0, queryStart);
  const rawQuery = queryStart === -1 ? '' : publicUrl.slice(queryStart + 1);
  const kept = rawQuery
    .split('&')
    .filter((segment) => segment !== '' && !NEVER_ECHOED.has(keyOf(segment)))
    .map(linkSafe);

  const urlFor = (target: number): string => `${base}?${[...kept, `page=${target}`].join('&')}`;
  return entries.map((rel) => `<${urlFor(relations[rel] as number)}>; rel="${rel}"`).join(', ');
}
