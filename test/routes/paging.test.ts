import { describe, expect, it } from 'vitest';
import { pageOfHeld, pageOfList, pageOfPrefix, pageOfWalk, requireWalkable, searchPageLink, withLink } from '../../src/routes/paging.ts';
import { V2Error } from '../../src/v2/errors.ts';

/**
 * The one paging module (src/routes/paging.ts): every list, held whole, searched over cursors or
 * walked from its start, gets its page and Link header here. The routes' own tests check the
 * answers end to end; these pin the rules each kind follows.
 */
const URL_BASE = 'http://gw/v2/things.json?filter[name]=a';
const rels = (link: string | undefined): string[] => [...(link ?? '').matchAll(/page=(\d+)>; rel="(\w+)"/g)].map((match) => `${match[2]}=${match[1]}`);
const items = (count: number): number[] => Array.from({ length: count }, (_, index) => index + 1);

describe('a list held whole', () => {
  it('slices page N and announces first, prev, next and last', () => {
    const page = pageOfHeld(items(5), 2, 2, URL_BASE);
    expect(page.items).toEqual([3, 4]);
    expect(rels(page.link)).toEqual(['first=1', 'prev=1', 'next=3', 'last=3']);
  });

  it('has no Link on a single page, and a page past the end points back at the last', () => {
    expect(pageOfHeld(items(2), 1, 2, URL_BASE).link).toBeUndefined();
    const past = pageOfHeld(items(3), 5, 2, URL_BASE);
    expect(past.items).toEqual([]);
    expect(rels(past.link)).toEqual(['first=1', 'prev=2']);
  });

  it('answers a read plan with its wrapper, top links and Link header (none when single)', () => {
    const answer = pageOfList([{ id: 1 }, { id: 2 }, { id: 3 }], { page: 1, pageSize: 2, wrapperKey: 'things', publicUrl: URL_BASE, topLinks: { 'thing.app': '/v2/applications/{id}' } });
    expect(answer.body).toEqual({ things: [{ id: 1 }, { id: 2 }], links: { 'thing.app': '/v2/applications/{id}' } });
    expect(rels(answer.headers?.link)).toEqual(['next=2', 'last=2']);
    expect(withLink({ things: [] }, undefined)).toEqual({ body: { things: [] } });
  });
});

describe('an entity search over cursors', () => {
  it('announces the last page by the count, and at least the next while a cursor says so', () => {
    expect(rels(searchPageLink(URL_BASE, 1, 200, { count: 450, nextCursor: 'c' }))).toEqual(['next=2', 'last=3']);
    expect(rels(searchPageLink(URL_BASE, 3, 200, { count: 450, nextCursor: 'c' }))).toEqual(['first=1', 'prev=2', 'next=4', 'last=4']);
  });

  it('follows the cursor alone without a count', () => {
    expect(rels(searchPageLink(URL_BASE, 2, 200, { count: null, nextCursor: 'c' }))).toEqual(['first=1', 'prev=1', 'next=3', 'last=3']);
    expect(rels(searchPageLink(URL_BASE, 2, 200, { count: null, nextCursor: null }))).toEqual(['first=1', 'prev=1']);
  });

  it('refuses a page too far past the nearest known one', () => {
    expect(() => requireWalkable(250, 1, 250)).not.toThrow();
    expect(() => requireWalkable(251, 1, 250)).toThrow(V2Error);
  });
});

describe('a list walked from its start', () => {
  const options = { withLast: true, beyondTitle: 'too far' };

  it('sends rel="last" only when the walk reached the end, and only when asked to', () => {
    expect(rels(pageOfWalk(items(5), 1, 2, URL_BASE, { complete: true, truncated: false }, options).link)).toEqual(['next=2', 'last=3']);
    expect(rels(pageOfWalk(items(5), 1, 2, URL_BASE, { complete: true, truncated: false }, { ...options, withLast: false }).link)).toEqual(['next=2']);
    expect(rels(pageOfWalk(items(5), 1, 2, URL_BASE, { complete: false, truncated: false }, options).link)).toEqual(['next=2']);
  });

  it('ends a walk cut at its bound at the last reachable page, and refuses a page beyond it', () => {
    const cut = { complete: false, truncated: true };
    expect(rels(pageOfWalk(items(4), 2, 2, URL_BASE, cut, options).link)).toEqual(['first=1', 'prev=1']);
    expect(() => pageOfWalk(items(4), 3, 2, URL_BASE, cut, options)).toThrow('too far');
    expect(pageOfWalk([], 1, 2, URL_BASE, cut, options).items).toEqual([]);
  });
});

describe('a list read from its start as far as the page needs, with NerdGraph\'s count', () => {
  it('announces the last page by its length once read whole', () => {
    const page = pageOfPrefix(items(5), 2, 2, URL_BASE, { complete: true, count: 40 });
    expect(page.items).toEqual([3, 4]);
    expect(rels(page.link)).toEqual(['first=1', 'prev=1', 'next=3', 'last=3']);
  });

  it('before that, by the count, and at least the page after those read full', () => {
    expect(rels(pageOfPrefix(items(4), 1, 2, URL_BASE, { complete: false, count: 9 }).link)).toEqual(['next=2', 'last=5']);
    // A count short of what was read (users added since), or none: the page after the full ones.
    expect(rels(pageOfPrefix(items(4), 2, 2, URL_BASE, { complete: false, count: 1 }).link)).toEqual(['first=1', 'prev=1', 'next=3', 'last=3']);
    expect(rels(pageOfPrefix(items(5), 2, 2, URL_BASE, { complete: false, count: null }).link)).toEqual(['first=1', 'prev=1', 'next=3', 'last=3']);
  });
});
