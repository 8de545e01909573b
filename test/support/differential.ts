import { afterAll, beforeAll, describe, expect } from 'vitest';
import type { KnownGap, Mapping } from '../../src/routes/mapping.ts';
import { loadMappings } from '../../src/routes/mappings-loader.ts';
import type { JsonValue } from '../../src/v2/xml.ts';
import type { DivergenceName } from '../../sandbox/divergence.ts';
import { createSandbox, type Sandbox } from '../../sandbox/server.ts';
import { canonical, describeMismatch, exactMismatch, exchange, numericDifference, withoutGaps, type AnswerPair, type FaceAnswer, type FaceRequest } from './compare.ts';
import { idToken, worldSides, type IdKind, type IdPath, type SideIds } from './derived-ids.ts';
import { DEMO_KEY, FIXED_NOW, createTestGateway, type TestGateway } from './harness.ts';
import { serveOnLoopback } from './http.ts';

/**
 * The one harness of the differential suites (test/differential): a sandbox world (or two
 * identical ones), a gateway over one world's NerdGraph face, both served over real HTTP; every
 * case sent to the gateway and to a legacy /v2 face, each side with its own ids
 * (derived-ids.ts), and the answers compared (compare.ts) with the route's known gaps removed:
 * exactly (arrays in any order), numerically (metric values), or page by page as one listing.
 * A mismatch names the request and where the two answers first part.
 */

/** One request of a corpus and how its two answers are compared. */
export interface DifferentialCase {
  name: string;
  path: string;
  method?: string;
  /** Default: the demo key. `{}` sends no key. */
  headers?: Record<string, string>;
  /** Sent with the request (tokens resolved per side), GET included. */
  body?: string;
  /** The mapping id: its known gaps are left out (unless `gaps` is given), statuses are counted by it. */
  route?: string;
  /** The body paths left out on both sides; default the route's known gaps, or none. */
  gaps?: readonly KnownGap[];
  /** A documented Link gap: when the gateway sends no rel="last", the legacy one is not compared. */
  lastMayBeMissing?: boolean;
  /** A documented difference of status, [gateway, legacy]: only the statuses are compared. */
  statusGap?: readonly [number, number];
  /**
   * The list a page holds (`channels`): each side orders records by its own ids, so pages are
   * compared by status, type, Allow, Link and size, and records as one set over the pages of one
   * `listing` (or over the page alone when the legacy face sends no Link: the whole list).
   */
  listKey?: string;
  listing?: string;
  /** Numbers compared within this relative tolerance (metric values), not exactly. */
  tolerance?: number;
  /** With `tolerance`: arrays and object keys in order, as sent (no sorting). */
  ordered?: boolean;
  /** A comparison of its own (undefined: alike); `standard` is the one the case would get. */
  judge?: (pair: AnswerPair, standard: () => string | undefined) => string | undefined;
}

export type Sides = { gateway: SideIds; legacy: SideIds };

/** The sandbox behind the gateway (`upstream`) and the one whose legacy face answers (the same unless twin). */
export interface Worlds {
  upstream: Sandbox;
  legacy: Sandbox;
}

export interface DifferentialOptions {
  apmApps: number;
  /** Default 7. */
  seed?: number;
  /** Two identical worlds, so a write runs once on each side and the two can be compared after. */
  twin?: boolean;
  /** Each request this much later on both sides (one clock, for writes). */
  tickMs?: number;
  diverge?: readonly DivergenceName[];
  gateway?: Omit<Parameters<typeof createTestGateway>[0], 'nerdgraphUrl' | 'now'>;
  /** Changes to the worlds before they serve. */
  prepare?: (worlds: Worlds) => void;
  /** Where ids each side makes up stand in answers (default none). */
  ids?: readonly IdPath[];
  /** Each side's ids; default the sandbox worlds' hosts, deployments and alerts (derived-ids.ts). */
  sides?: (worlds: Worlds) => Sides;
  /** Characters of each answer a mismatch shows. */
  detail?: number;
}

/** What one comparison found: the legacy status (v2's), the legacy answer as compared, and any mismatch. */
export interface Outcome {
  case: DifferentialCase;
  status: number;
  legacyText: string;
  mismatch: string | undefined;
}

export class Report {
  readonly outcomes: readonly Outcome[];

  constructor(outcomes: readonly Outcome[]) {
    this.outcomes = outcomes;
  }

  get mismatches(): string[] {
    return this.outcomes.flatMap((outcome) => (outcome.mismatch === undefined ? [] : [outcome.mismatch]));
  }

  /** The legacy statuses seen (of one route), sorted. */
  statuses(route?: string): number[] {
    return [...new Set(this.of(route).map((outcome) => outcome.status))].sort();
  }

  count(status: number, route?: string): number {
    return this.of(route).filter((outcome) => outcome.status === status).length;
  }

  /** `name: status` of every comparison, in order. */
  get lines(): string[] {
    return this.outcomes.map((outcome) => `${outcome.case.name}: ${outcome.status}`);
  }

  private of(route: string | undefined): readonly Outcome[] {
    return route === undefined ? this.outcomes : this.outcomes.filter((outcome) => outcome.case.route === route);
  }
}

export interface Faces extends Worlds {
  gateway: TestGateway;
  gatewayUrl: string;
  legacyUrl: string;
  sides: Sides;
  now(): number;
  gapsOf(route: string): readonly KnownGap[];
  /** The token (derived-ids.ts) of an id the legacy face showed. */
  legacyToken(kind: IdKind, id: unknown): string;
  /** One request to both faces, each with its own ids, ids in the answers put back to tokens. */
  send(testCase: DifferentialCase): Promise<AnswerPair>;
  /** Every case compared, in order (the pages of a listing together, where its first page stands). */
  check(cases: readonly DifferentialCase[]): Promise<Report>;
  /** check, then no mismatch. */
  expectAlike(cases: readonly DifferentialCase[]): Promise<Report>;
  close(): Promise<void>;
}

/** Starts the worlds, the gateway and both servers. */
export async function openFaces(options: DifferentialOptions): Promise<Faces> {
  let clock = FIXED_NOW;
  const now = (): number => clock;
  const world = (): Sandbox => createSandbox({ seed: options.seed ?? 7, apmApps: options.apmApps, now, ...(options.diverge && { diverge: options.diverge }) });
  const upstream = world();
  const worlds: Worlds = { upstream, legacy: options.twin ? world() : upstream };
  options.prepare?.(worlds);
  const upstreamServer = await upstream.listen(0, '127.0.0.1');
  const legacyServer = options.twin ? await worlds.legacy.listen(0, '127.0.0.1') : upstreamServer;
  const gateway = await createTestGateway({ ...options.gateway, nerdgraphUrl: `${upstreamServer.url}/graphql`, now });
  const served = await serveOnLoopback(gateway.app.fetch);
  const mappings = new Map<string, Mapping>((await loadMappings()).map((mapping) => [mapping.id, mapping]));
  const sides = options.sides?.(worlds) ?? worldSides(upstream.data, worlds.legacy.data, now);
  const detail = options.detail ?? 900;

  const gapsOf = (route: string): readonly KnownGap[] => {
    const mapping = mappings.get(route);
    if (!mapping) throw new Error(`no mapping ${route}`);
    return mapping.knownGaps;
  };
  const requestOf = (testCase: DifferentialCase): FaceRequest => ({
    name: testCase.route === undefined ? testCase.name : `${testCase.route}: ${testCase.name}`,
    path: testCase.path,
    method: testCase.method ?? 'GET',
    headers: testCase.headers ?? { 'X-Api-Key': DEMO_KEY },
    gaps: testCase.gaps ?? (testCase.route === undefined ? [] : gapsOf(testCase.route)),
    ...(testCase.lastMayBeMissing && { lastMayBeMissing: true }),
    ...(testCase.body !== undefined && { form: testCase.body }),
    derived: { ...sides, paths: options.ids ?? [] },
  });
  const send = async (testCase: DifferentialCase): Promise<AnswerPair> => {
    clock += options.tickMs ?? 0;
    return exchange(served.url, legacyServer.url, requestOf(testCase));
  };

  /** One case alone: exact, numeric, by status only, or a page read alone. */
  const compareOne = async (testCase: DifferentialCase): Promise<Outcome> => {
    if (testCase.listKey !== undefined) return compareListing([testCase]);
    const request = requestOf(testCase);
    const pair = await send(testCase);
    const standard = (): string | undefined => {
      if (testCase.statusGap) {
        const statuses = [pair.gateway.status, pair.legacy.status];
        return statuses.join(' ') === testCase.statusGap.join(' ') ? undefined : `${request.name}: statuses ${statuses.join(' ')}, expected ${testCase.statusGap.join(' ')}`;
      }
      if (testCase.tolerance !== undefined) return numericMismatch(pair, request, testCase.tolerance, testCase.ordered ?? false, detail);
      return exactMismatch(pair, request, detail);
    };
    const mismatch = testCase.judge ? testCase.judge(pair, standard) : standard();
    return { case: testCase, status: pair.legacy.status, legacyText: JSON.stringify({ ...pair.legacy, text: undefined, body: canonical(withoutGaps(pair.legacy.body, request.gaps)) }), mismatch };
  };

  /** The pages of one listing: each page's shape alike, the records of all pages one set. */
  const compareListing = async (pages: readonly DifferentialCase[]): Promise<Outcome> => {
    const problems: string[] = [];
    const records = { gateway: [] as string[], legacy: [] as string[] };
    let status = 0;
    let whole = pages.length > 1 || pages[0]?.listing !== undefined;
    for (const page of pages) {
      const request = requestOf(page);
      const pair = await send(page);
      const [left, right] = [pageView(pair.gateway, request.gaps, page.listKey ?? ''), pageView(pair.legacy, request.gaps, page.listKey ?? '')];
      status = pair.legacy.status;
      if (page.listing === undefined && pair.legacy.link === null) whole = true;
      if (left.meta !== right.meta) problems.push(describeMismatch(request, 'the page', left.meta, right.meta, detail));
      records.gateway.push(...left.items);
      records.legacy.push(...right.items);
    }
    const [l, r] = [records.gateway.sort(), records.legacy.sort()];
    const first = pages[0] as DifferentialCase;
    if (whole && JSON.stringify(l) !== JSON.stringify(r)) {
      const where = numericDifference(l, r, 0) ?? '';
      problems.push(`listing ${first.listing ?? first.name}: the ${first.listKey} of its ${pages.length} pages differ (${l.length} and ${r.length} records) at ${where.slice(0, detail)}`);
    }
    return { case: first, status, legacyText: JSON.stringify(r), mismatch: problems.length === 0 ? undefined : problems.join('\n') };
  };

  const check = async (cases: readonly DifferentialCase[]): Promise<Report> => {
    const outcomes: Outcome[] = [];
    const done = new Set<string>();
    for (const testCase of cases) {
      const { listing } = testCase;
      if (listing === undefined) outcomes.push(await compareOne(testCase));
      else if (!done.has(listing)) {
        done.add(listing);
        outcomes.push(await compareListing(cases.filter((page) => page.listing === listing)));
      }
    }
    return new Report(outcomes);
  };

  return {
    ...worlds,
    gateway,
    gatewayUrl: served.url,
    legacyUrl: legacyServer.url,
    sides,
    now,
    gapsOf,
    legacyToken: (kind, id) => idToken(kind, sides.legacy.keyOf(kind, Number(id)) ?? `unknown ${String(id)}`),
    send,
    check,
    async expectAlike(cases) {
      const report = await check(cases);
      const { mismatches } = report;
      // The first few in full; the count says how many more.
      expect(mismatches.slice(0, 10), `${mismatches.length} of ${report.outcomes.length} comparisons differ`).toEqual([]);
      return report;
    },
    async close() {
      await served.close();
      await upstreamServer.close();
      if (options.twin) await legacyServer.close();
    },
  };
}

/** A page of a listing: its shape (status, type, Allow, Link, size, or the whole body when it holds no list) and its records. */
function pageView(answer: FaceAnswer, gaps: readonly KnownGap[], listKey: string): { meta: string; items: string[] } {
  const body = withoutGaps(answer.body, gaps);
  const list = body !== null && typeof body === 'object' && !Array.isArray(body) ? body[listKey] : undefined;
  const items = Array.isArray(list) ? list.map((item) => JSON.stringify(canonical(item))) : [];
  const meta = { status: answer.status, contentType: answer.contentType, allow: answer.allow, link: answer.link, size: items.length, body: Array.isArray(list) ? null : canonical(body) };
  return { meta: JSON.stringify(meta), items };
}

/** Status, type, Allow and Link alike, then the bodies' numbers within `tolerance` (relative); arrays sorted unless `ordered`. */
function numericMismatch(pair: AnswerPair, request: FaceRequest, tolerance: number, ordered: boolean, detail: number): string | undefined {
  const head = (answer: FaceAnswer): string => JSON.stringify({ status: answer.status, contentType: answer.contentType, allow: answer.allow, link: answer.link });
  const body = (answer: FaceAnswer): JsonValue => (ordered ? withoutGaps(answer.body, request.gaps) : canonical(withoutGaps(answer.body, request.gaps)));
  const [left, right] = [body(pair.gateway), body(pair.legacy)];
  const where = head(pair.gateway) === head(pair.legacy) ? numericDifference(left, right, tolerance, 'body') : 'the status, type, Allow or Link';
  return where === undefined ? undefined : describeMismatch(request, where, `${head(pair.gateway)} ${JSON.stringify(left)}`, `${head(pair.legacy)} ${JSON.stringify(right)}`, detail);
}

/**
 * A describe block whose tests get `faces`: started before its tests, closed after. `define`
 * runs at collection time: read `faces` only inside tests.
 */
export function describeDifferential(title: string, options: DifferentialOptions, define: (faces: Faces) => void): void {
  describe(title, () => {
    let opened: Faces | undefined;
    const faces = new Proxy({} as Faces, {
      get(_target, key) {
        if (!opened) throw new Error(`faces.${String(key)} read before the suite started (read it inside a test)`);
        return opened[key as keyof Faces];
      },
    });
    beforeAll(async () => {
      opened = await openFaces(options);
    }, 120_000);
    afterAll(async () => {
      await opened?.close();
    });
    define(faces);
  });
}
