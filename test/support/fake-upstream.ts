import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { listenOnLoopback } from './http.ts';
import { entityGuid } from '../../src/v2/ids.ts';

/**
 * A scriptable NerdGraph stand-in on 127.0.0.1:0 for fault tests: each request's parsed body
 * is handed to `handle`, which answers however the test needs (slow, broken, hostile...).
 */
export interface FakeRequest {
  operationName: string | undefined;
  query: string;
  variables: Record<string, unknown>;
  headers: IncomingMessage['headers'];
}

export type FakeHandler = (request: FakeRequest, res: ServerResponse) => void | Promise<void>;

export async function startFakeUpstream(handle: FakeHandler) {
  const received: FakeRequest[] = [];
  let aborted = 0;
  const server = createServer((req, res) => {
    let text = '';
    req.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    req.on('end', () => {
      const body = JSON.parse(text || '{}') as { query?: string; variables?: Record<string, unknown>; operationName?: string };
      const request: FakeRequest = {
        operationName: body.operationName ?? /(?:query|mutation)\s+(\w+)/.exec(body.query ?? '')?.[1],
        query: body.query ?? '',
        variables: body.variables ?? {},
        headers: req.headers,
      };
      received.push(request);
      res.on('close', () => {
        if (!res.writableFinished) aborted++;
      });
      void handle(request, res);
    });
  });
  const { origin, close } = await listenOnLoopback(server);
  return { url: `${origin}/graphql`, received, abortedCount: () => aborted, close };
}

export function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(JSON.stringify(body));
}

/** A canned answer for AccessibleAccounts: the key sees exactly these accounts. */
export function accountsAnswer(ids: number[]) {
  return { data: { actor: { accounts: ids.map((id) => ({ id, name: `Account ${id}` })) } } };
}

/** An APM application entity as NerdGraph returns it; `overrides` replace any field. */
export function apmEntity(accountId: number, id: number, overrides: Record<string, unknown> = {}) {
  return {
    guid: entityGuid(accountId, 'APM', 'APPLICATION', id),
    accountId,
    name: `App ${id}`,
    reporting: true,
    alertSeverity: 'NOT_ALERTING',
    applicationId: id,
    language: 'java',
    settings: { apdexTarget: 0.5, serverSideConfig: false },
    apmSummary: null,
    apmBrowserSummary: null,
    applicationInstancesV2: { applicationInstances: [] },
    ...overrides,
  };
}

/** The application list's once-per-page extra reads (links, browser apdex). */
export const PAGE_DETAIL_OPERATIONS: ReadonlySet<string> = new Set(['ApplicationsPageDetails', 'ApplicationsBrowserApdex']);

/** Their answer when no app has current hosts or a browser app (fits both documents). */
export function emptyPageDetails() {
  return { data: { actor: { account: { nrql: { results: [] } } } } };
}

/** Answers `request` as the NerdGraph at `graphqlUrl` does (a scripted upstream passing the rest on). */
export async function forwardTo(graphqlUrl: string, request: FakeRequest, res: ServerResponse): Promise<void> {
  const answer = await fetch(graphqlUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'api-key': String(request.headers['api-key'] ?? '') },
    body: JSON.stringify({ query: request.query, variables: request.variables }),
  });
  json(res, answer.status, await answer.json());
}
