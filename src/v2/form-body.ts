import { V2Error } from './errors.ts';
import { REQUEST_RULE_TITLES } from '../../facts/rule-titles.ts';

/** Largest request body either face reads. */
export const MAX_BODY_BYTES = 1024 * 1024;

interface RequestLike {
  method: string;
  header(name: string): string | undefined;
  text(): Promise<string>;
}

/**
 * A form-encoded body's text, or undefined when the request has none. v2 clients send
 * parameters as a form body even on GET (curl -X GET -d ...); the Fetch Request drops a GET
 * body, so under Node it is read from the raw request (`incoming`), bounded.
 */
export async function readFormBody(req: RequestLike, incoming: AsyncIterable<Buffer> | undefined): Promise<string | undefined> {
  const type = req.header('content-type') ?? '';
  if (!type.toLowerCase().startsWith('application/x-www-form-urlencoded')) return undefined;
  if (!['GET', 'HEAD'].includes(req.method) || !incoming) return req.text();
  const chunks: Buffer[] = [];
  let size = 0;
  // Iterated by hand: leaving a for-await loop early destroys the request, and the server could
  // then not discard the rest of the body before closing (src/v2/lingering-close.ts), so a client
  // that writes the whole body before reading would get a reset instead of the 413.
  const reader = incoming[Symbol.asyncIterator]();
  try {
    for (let next = await reader.next(); next.done !== true; next = await reader.next()) {
      size += next.value.length;
      if (size > MAX_BODY_BYTES) {
        // The connection is closed once the rest of the body is discarded (bounded).
        throw new V2Error(413, REQUEST_RULE_TITLES.bodyTooLarge(MAX_BODY_BYTES), { kind: 'body_too_large', headers: { connection: 'close' } });
      }
      chunks.push(next.value);
    }
  } catch (error) {
    if (error instanceof V2Error) throw error;
    // The client went away or sent a broken body: its mistake, not a server error.
    throw new V2Error(400, REQUEST_RULE_TITLES.bodyUnreadable, { kind: 'bad_body' });
  }
  return Buffer.concat(chunks).toString('utf8');
}
