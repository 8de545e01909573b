import { randomBytes } from 'node:crypto';
import type { Hono } from 'hono';
import { z } from 'zod';
import type { ParityStore } from '../compare/parity-store.ts';
import type { GatewayEnv } from '../routes/context.ts';
import { invalidParameter } from '../v2/errors.ts';
import { bridgeAccess } from './access.ts';
import { readReport } from '../probe/report.ts';
import { renderParityPage } from './page.ts';

/**
 * GET /bridge/parity.json (the parity report) and GET /bridge/ (the same as a page), both behind
 * src/bridge/access.ts. Other /bridge/ routes (explain) have their own rules: the access check
 * is per route here, not a /bridge/* middleware.
 */
export const PARITY_JSON_PATH = '/bridge/parity.json';
export const PARITY_PAGE_PATH = '/bridge/';
const RECENT_MAX = 1000;
/**
 * Longest a report waits for the other replicas' latest events (a replica started late may have
 * a whole stream to read): past it, the report shows what is read so far, and the read goes on.
 */
export const REPORT_WAIT_MS = 250;

const parityQuery = z.object({
  recent: z
    .string()
    .regex(/^\d{1,4}$/)
    .transform(Number)
    .pipe(z.number().int().min(0).max(RECENT_MAX))
    .optional(),
});

// The report holds callers' data: never cached, never framed, never sniffed.
const PRIVATE_HEADERS = {
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
} as const;

export function registerBridgeRoutes(
  app: Hono<GatewayEnv>,
  deps: { store: ParityStore; bridgeToken?: string; probeReportPath?: string; /** The server's clock (days left on the page); default Date.now. */ now?: () => number },
): void {
  const access = bridgeAccess(deps.bridgeToken);
  const now = deps.now ?? Date.now;

  app.get(PARITY_JSON_PATH, access, async (c) => {
    c.set('routeLabel', PARITY_JSON_PATH);
    const query = parityQuery.safeParse({ recent: c.req.query('recent') });
    if (!query.success) throw invalidParameter(`Invalid parameter recent: expected a whole number from 0 to ${RECENT_MAX}`);
    // Behind a load balancer: the other replicas' latest events first (shared-parity.ts).
    await deps.store.refresh?.({ maxWaitMs: REPORT_WAIT_MS });
    const report = deps.store.report(query.data.recent === undefined ? {} : { recent: query.data.recent });
    return new Response(JSON.stringify(report), {
      status: 200,
      headers: { 'content-type': 'application/json; charset=utf-8', 'x-request-id': c.get('requestId'), ...PRIVATE_HEADERS },
    });
  });

  app.get(PARITY_PAGE_PATH, access, async (c) => {
    c.set('routeLabel', PARITY_PAGE_PATH);
    await deps.store.refresh?.({ maxWaitMs: REPORT_WAIT_MS });
    const nonce = randomBytes(16).toString('base64');
    // The last `npm run probe` report, read from its file on each view (absent: no section).
    const probe = deps.probeReportPath === undefined ? undefined : await readReport(deps.probeReportPath);
    return new Response(renderParityPage(deps.store.report(), { nonce, now: now(), ...(probe && { probe }) }), {
      status: 200,
      headers: {
        'content-type': 'text/html; charset=utf-8',
        'x-request-id': c.get('requestId'),
        'content-security-policy': `default-src 'none'; style-src 'nonce-${nonce}'; script-src 'nonce-${nonce}'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'`,
        'x-frame-options': 'DENY',
        ...PRIVATE_HEADERS,
      },
    });
  });

  app.get('/bridge', (c) => {
    c.set('routeLabel', PARITY_PAGE_PATH);
    return c.redirect(PARITY_PAGE_PATH, 308);
  });
}
