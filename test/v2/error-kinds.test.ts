import { describe, expect, it } from 'vitest';
import { V2Error, notFound, writeRefused } from '../../src/v2/errors.ts';

describe('V2Error kinds', () => {
  it('keeps the kind it is raised with, `client` when none is given', () => {
    expect(new V2Error(400, 'Invalid request').kind).toBe('client');
    expect(new V2Error(503, 'The client closed the request', { kind: 'client_closed' }).kind).toBe('client_closed');
    expect(notFound().kind).toBe('not_found');
    expect(writeRefused(422, 'refused').kind).toBe('write_refused');
  });

  it('is a closed set: a misspelt kind fails the typecheck (npx tsc --noEmit)', () => {
    // @ts-expect-error 'not_fund' is no V2ErrorKind: if this line compiles, kind has become a free string again.
    const misspelt = new V2Error(404, 'Resource not found', { kind: 'not_fund' });
    expect(misspelt.kind).toBe('not_fund');
  });
});
