import { Kind, parse, visit, type DirectiveNode, type ValueNode } from 'graphql';
import { z } from 'zod';
import { serve } from '@hono/node-server';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createSandbox } from '../sandbox/server.ts';
import type { WorldSize } from '../sandbox/data.ts';

/**
 * A sandbox behind a counter, for growth measurements (bench/growth.ts, test/ops/growth.test.ts):
 * what the gateway asks NerdGraph (calls by operation, NRQL queries run) and the bytes it reads
 * back. The counts are read and reset over `GET COUNTS_PATH` (`?reset=1`), so the sandbox can run
 * in a child process whose CPU stays out of the gateway's.
 */
export const COUNTS_PATH = '/__growth/counts';

export interface UpstreamCounts {
  calls: number;
  nrql: number;
  /** Bytes of the NerdGraph answers (what the gateway reads and parses). */
  answerBytes: number;
  byOperation: Record<string, number>;
}

export const UpstreamCountsSchema = z.object({ calls: z.number(), nrql: z.number(), answerBytes: z.number(), byOperation: z.record(z.string(), z.number()) });

export interface GrowthWorld {
  apmApps: number;
  size?: WorldSize;
}

/** The clock every growth world runs on (the test harness's FIXED_NOW). */
export const GROWTH_NOW = Date.UTC(2026, 10, 22, 12, 0, 30);

const GraphqlBody = z.object({ query: z.string(), variables: z.record(z.string(), z.unknown()).nullish() });

/** Whether a field's @include / @skip directives keep it, under these variables. */
function included(directives: readonly DirectiveNode[] | undefined, variables: Record<string, unknown>): boolean {
  const truth = (value: ValueNode | undefined): boolean =>
    value?.kind === Kind.BOOLEAN ? value.value : value?.kind === Kind.VARIABLE ? variables[value.name.value] === true : true;
  for (const directive of directives ?? []) {
    const condition = truth(directive.arguments?.find((argument) => argument.name.value === 'if')?.value);
    if (directive.name.value === 'include' && !condition) return false;
    if (directive.name.value === 'skip' && condition) return false;
  }
  return true;
}

const documents = new Map<string, ReturnType<typeof parse>>();

/** The `nrql` fields a NerdGraph request runs (each one NRQL query), directives applied. */
export function nrqlQueriesIn(body: string): number {
  const parsed = GraphqlBody.safeParse(JSON.parse(body));
  if (!parsed.success) return 0;
  let document = documents.get(parsed.data.query);
  if (!document) {
    document = parse(parsed.data.query);
    documents.set(parsed.data.query, document);
  }
  const variables = parsed.data.variables ?? {};
  let count = 0;
  visit(document, {
    Field(node) {
      if (!included(node.directives, variables)) return false;
      if (node.name.value === 'nrql') count++;
      return undefined;
    },
  });
  return count;
}

function operationOf(body: string): string {
  const parsed = z.object({ operationName: z.string().nullish() }).safeParse(JSON.parse(body));
  return (parsed.success && parsed.data.operationName) || 'anonymous';
}

export interface CountingSandbox {
  /** The counted /graphql URL, for the gateway's NERDGRAPH_URL. */
  graphqlUrl: string;
  origin: string;
  close(): Promise<void>;
}

/** Starts a sandbox of `world`'s size on 127.0.0.1, every /graphql call counted. */
export async function startCountingSandbox(world: GrowthWorld): Promise<CountingSandbox> {
  const sandbox = createSandbox({ seed: 7, apmApps: world.apmApps, now: () => GROWTH_NOW, ...(world.size && { size: world.size }) });
  let counts: UpstreamCounts = { calls: 0, nrql: 0, answerBytes: 0, byOperation: {} };
  const handler = async (request: Request): Promise<Response> => {
    const url = new URL(request.url);
    if (url.pathname === COUNTS_PATH) {
      const answer = Response.json(counts);
      if (url.searchParams.get('reset') === '1') counts = { calls: 0, nrql: 0, answerBytes: 0, byOperation: {} };
      return answer;
    }
    if (url.pathname !== '/graphql') return sandbox.app.fetch(request);
    const body = await request.text();
    const operation = operationOf(body);
    counts.calls++;
    counts.nrql += nrqlQueriesIn(body);
    counts.byOperation[operation] = (counts.byOperation[operation] ?? 0) + 1;
    const answer = await sandbox.app.fetch(new Request(request.url, { method: 'POST', headers: request.headers, body }));
    const bytes = new Uint8Array(await answer.arrayBuffer());
    counts.answerBytes += bytes.byteLength;
    return new Response(bytes, { status: answer.status, headers: answer.headers });
  };
  const server = serve({ fetch: handler, port: 0, hostname: '127.0.0.1' }) as Server;
  await new Promise<void>((resolve) => server.once('listening', () => resolve()));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    graphqlUrl: `${origin}/graphql`,
    origin,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Reads a counting sandbox's counts, and resets them unless told not to. */
export async function takeCounts(origin: string, options: { reset: boolean } = { reset: true }): Promise<UpstreamCounts> {
  const response = await fetch(`${origin}${COUNTS_PATH}${options.reset ? '?reset=1' : ''}`);
  return UpstreamCountsSchema.parse(await response.json());
}
