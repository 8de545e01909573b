import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { linkHeader, pageRelations } from '../../src/v2/link.ts';

const URL_BASE = 'http://gw.example:8080/v2/applications.json';

/** The strictest parser among real clients (Wavefront collector): split on ", " then "; ". */
function wavefrontParse(header: string): Record<string, number> {
  return Object.fromEntries(
    header.split(', ').map((entry) => {
      const [url, rel] = entry.split('; ');
      const page = Number(new URL((url ?? '').slice(1, -1)).searchParams.get('page'));
      return [(rel ?? '').replace(/^rel="|"$/g, ''), page];
    }),
  );
}

describe('Link header', () => {
  it('is absent on a single page', () => {
    expect(linkHeader(URL_BASE, 1, 1)).toBeUndefined();
    expect(linkHeader(URL_BASE, 1, 0)).toBeUndefined();
  });

  it('page 1 of 3 has next and last, in that order, with the exact separators', () => {
    expect(linkHeader(URL_BASE, 1, 3)).toBe(
      `<${URL_BASE}?page=2>; rel="next", <${URL_BASE}?page=3>; rel="last"`,
    );
  });

  it('a middle page has first, prev, next, last (Backstage reads the first entry)', () => {
    expect(wavefrontParse(linkHeader(`${URL_BASE}?page=2`, 2, 3) ?? '')).toEqual({ first: 1, prev: 1, next: 3, last: 3 });
    expect(linkHeader(`${URL_BASE}?page=2`, 2, 3)?.startsWith(`<${URL_BASE}?page=1>; rel="first"`)).toBe(true);
  });

  it('the last page has first and prev only', () => {
    expect(wavefrontParse(linkHeader(URL_BASE, 3, 3) ?? '')).toEqual({ first: 1, prev: 2 });
  });

  it('keeps every original parameter, percent-encodes commas, replaces page, never echoes a key', () => {
    const header = linkHeader(`${URL_BASE}?filter[ids]=1,2&page=1&filter%5Bname%5D=a%20b&api_key=NRAK-X`, 1, 2) ?? '';
    expect(header).toBe(`<${URL_BASE}?filter[ids]=1%2C2&filter%5Bname%5D=a%20b&page=2>; rel="next", <${URL_BASE}?filter[ids]=1%2C2&filter%5Bname%5D=a%20b&page=2>; rel="last"`);
    // kenahrens splits on "," and then ";": every piece must still have one ";".
    expect(header.split(',').every((piece) => piece.includes(';'))).toBe(true);
  });

  it('a page past the end points back to the last page', () => {
    expect(pageRelations(9, 3)).toEqual({ first: 1, prev: 3 });
  });
});

/** tomnomnom/linkheader (newrelic-client-go): split on ",", then each piece on ";"; the URL piece must be <...>. */
function linkheaderParse(header: string): Array<{ url: string; rel: string }> {
  return header.split(',').flatMap((chunk) => {
    const pieces = chunk.split(';').map((p) => p.trim());
    const url = pieces.find((p) => p.startsWith('<') && p.endsWith('>'));
    const rel = pieces.find((p) => p.startsWith('rel='))?.slice(4).replace(/"/g, '');
    return url && rel ? [{ url: url.slice(1, -1), rel }] : [];
  });
}

describe('Link URLs survive every client parser', () => {
  it.each(['filter[name]=a;b', 'filter[name]=a<b>c', 'filter[name]=%22q%22', 'filter[name]=x"y', 'filter[ids]=1,2', 'names[]=a{b}|c^d`e\\f'])(
    '%s',
    (query) => {
      const header = linkHeader(`${URL_BASE}?${query}`, 1, 3) ?? '';
      const parsed = linkheaderParse(header);
      expect(parsed.map((p) => p.rel)).toEqual(['next', 'last']);
      const next = new URL(parsed[0]?.url ?? '');
      expect(next.searchParams.get('page')).toBe('2');
      // The parameter's value is unchanged once decoded.
      const [key, value] = query.split('=') as [string, string];
      expect(next.searchParams.get(decodeURIComponent(key))).toBe(new URLSearchParams(query).get(decodeURIComponent(key)) ?? value);
    },
  );

  it('never echoes api_key in any spelling', () => {
    const header = linkHeader(`${URL_BASE}?api_key[]=NRAK-X&API-KEY=NRAK-Y&x-api-key=NRAK-Z&a=1`, 1, 2) ?? '';
    expect(header).not.toMatch(/NRAK/);
    expect(header).toContain('a=1&page=2');
  });
});

describe('Link URLs from arbitrary client input', () => {
  const decoded = (query: string) =>
    [...new URLSearchParams(query)].filter(([k]) => !['page', 'api_key'].includes(k.replace(/\[\d*\]$/, '').toLowerCase())).map(([k, v]) => `${k}=${v}`);

  it('are ASCII, parse as URLs, and carry exactly the decoded parameters that were sent', () => {
    const segment = fc.tuple(fc.string({ unit: 'binary', maxLength: 12 }), fc.string({ unit: 'binary', maxLength: 12 })).map(([k, v]) => `${k}=${v}`);
    fc.assert(
      fc.property(fc.array(segment, { maxLength: 5 }), (segments) => {
        const query = segments.filter((s) => !s.includes('&') && !s.includes('#')).join('&');
        const header = linkHeader(`${URL_BASE}?${query}`, 1, 2) ?? '';
        expect(header).toMatch(/^[\x20-\x7e]*$/);
        const next = linkheaderParse(header).find((e) => e.rel === 'next');
        const url = new URL(next?.url ?? 'x:');
        expect(url.searchParams.get('page')).toBe('2');
        expect(decoded(url.search.slice(1))).toEqual(decoded(query.replace(/%(?![0-9A-Fa-f]{2})/g, '%25')));
      }),
      { numRuns: 500 },
    );
  });
});
