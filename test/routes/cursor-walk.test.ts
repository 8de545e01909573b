import { describe, expect, it } from 'vitest';
import { walkCursors } from '../../src/routes/cursor-walk.ts';
import { V2Error } from '../../src/v2/errors.ts';

/** The one cursor walk the whole-list mappings share (alerts lists, labels). */
function pagesOf(cursors: Array<string | null>) {
  const sent: Array<unknown> = [];
  const ctx = {
    read: async (_operation: string, variables: Record<string, unknown>) => {
      sent.push(variables.cursor);
      const index = sent.length - 1;
      return { items: [index], nextCursor: cursors[index] ?? null };
    },
  };
  const pageOf = (answer: unknown) => answer as { items: number[]; nextCursor: string | null };
  return { ctx, pageOf, sent };
}

describe('walkCursors', () => {
  it('follows each cursor once, with the caller variables, to the end of the list', async () => {
    const { ctx, pageOf, sent } = pagesOf(['a', 'b', null]);
    const walked = await walkCursors(ctx, 'Op', { x: 1 }, pageOf, { enough: Infinity, maxPages: 10 });
    expect(walked).toEqual({ items: [0, 1, 2], complete: true, truncated: false });
    expect(sent).toEqual([null, 'a', 'b']);
  });

  it('stops at its page bound and says the list was cut', async () => {
    const { ctx, pageOf, sent } = pagesOf(['a', 'b', 'c', 'd']);
    expect(await walkCursors(ctx, 'Op', {}, pageOf, { enough: Infinity, maxPages: 2 })).toEqual({ items: [0, 1], complete: false, truncated: true });
    expect(sent).toHaveLength(2);
  });

  it('stops once it has enough, or at the item sought', async () => {
    const enough = pagesOf(['a', 'b', 'c']);
    expect(await walkCursors(enough.ctx, 'Op', {}, enough.pageOf, { enough: 2, maxPages: 10 })).toMatchObject({ items: [0, 1], complete: false });
    const sought = pagesOf(['a', 'b', 'c']);
    expect(await walkCursors(sought.ctx, 'Op', {}, sought.pageOf, { enough: Infinity, maxPages: 10, stopAt: (i) => i === 1 })).toMatchObject({ items: [0, 1] });
    expect(sought.sent).toHaveLength(2);
  });

  it('refuses a cursor NerdGraph already gave: a 502, never repeated rows', async () => {
    const { ctx, pageOf, sent } = pagesOf(['a', 'b', 'a', 'b']);
    const error = await walkCursors(ctx, 'Op', {}, pageOf, { enough: Infinity, maxPages: 10 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(V2Error);
    expect((error as V2Error).status).toBe(502);
    expect(sent).toHaveLength(3);
  });
});
