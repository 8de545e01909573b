import { afterAll, beforeAll } from 'vitest';
import { DEMO_KEY, startSandbox } from '../../support/harness.ts';
import { deadOrigin, httpSend, serveOnLoopback } from '../../support/http.ts';
import { createModesGateway } from '../../support/modes.ts';

/**
 * The two faces a documented example is sent to: the gateway in translate mode (the legacy API
 * unreachable, so every answer comes from the sandbox's NerdGraph face) and the sandbox's legacy
 * face. Requests are written as the page's curl sends them: `-d` alone is a form body
 * (application/x-www-form-urlencoded), `-G -d` moves it to the query string, and the headers are
 * the page's (`Api-Key:` or `X-Api-Key:`).
 */
export interface DocumentedRequest {
  method: string;
  path: string;
  /** The body as curl sends it. */
  body?: string;
  /** Content-Type: curl's form type for `-d` unless the page sets JSON. */
  contentType?: 'form' | 'json';
  /** The key header the page writes. */
  keyHeader?: 'Api-Key' | 'X-Api-Key';
}

export interface Answer {
  status: number;
  text: string;
  json: Record<string, unknown> | null;
}

export type Face = 'gateway' | 'legacy';

export async function startFaces(routeModes: string, apmApps = 20) {
  const upstream = await startSandbox({ apmApps });
  const gateway = await createModesGateway({ routes: 'real', nerdgraphUrl: upstream.graphqlUrl, legacyUrl: await deadOrigin(), routeModes });
  // Real HTTP on both sides: curl's GET with a form body is something fetch cannot send.
  const served = await serveOnLoopback(gateway.app.fetch);
  async function send(face: Face, request: DocumentedRequest): Promise<Answer> {
    const headers: Record<string, string> = { [request.keyHeader ?? 'X-Api-Key']: DEMO_KEY };
    if (request.body !== undefined) headers['content-type'] = request.contentType === 'json' ? 'application/json' : 'application/x-www-form-urlencoded';
    const origin = face === 'gateway' ? served.url : upstream.url;
    const response = await httpSend(`${origin}${request.path}`, { method: request.method, headers, ...(request.body !== undefined && { body: request.body }) });
    const text = await response.text();
    const json = (response.headers.get('content-type') ?? '').includes('json') && text !== '' ? (JSON.parse(text) as Record<string, unknown>) : null;
    return { status: response.status, text, json };
  }
  return { upstream, gateway, send, close: async () => (await served.close(), await upstream.close()) };
}

export const FACES: readonly Face[] = ['gateway', 'legacy'];

/** The faces for one test file: started before its tests, closed after. */
export function useFaces(routeModes: string): () => Awaited<ReturnType<typeof startFaces>> {
  let faces: Awaited<ReturnType<typeof startFaces>> | undefined;
  beforeAll(async () => {
    faces = await startFaces(routeModes);
  });
  afterAll(async () => {
    await faces?.close();
  });
  return () => {
    if (!faces) throw new Error('faces not started');
    return faces;
  };
}
