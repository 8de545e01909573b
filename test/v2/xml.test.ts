import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toXml, type JsonValue } from '../../src/v2/xml.ts';
import { decodeRailsXml } from '../support/rails-xml.ts';

describe('Rails-style v2 XML', () => {
  it('renders arrays, types and nil the Rails way', () => {
    const xml = toXml({ applications: [{ id: 1, name: 'A & <B>', reporting: true, apdex: 0.5, gone: null, links: { servers: [] } }] });
    expect(xml).toBe(
      '<?xml version="1.0" encoding="UTF-8"?>\n<response><applications type="array"><application>' +
        '<id type="integer">1</id><name>A &amp; &lt;B&gt;</name><reporting type="boolean">true</reporting>' +
        '<apdex type="float">0.5</apdex><gone nil="true"/><links><servers type="array"></servers></links>' +
        '</application></applications></response>',
    );
  });

  it('writes another layout when asked: its own root, one element a line, typed text by name', () => {
    const xml = toXml({ 'agent-id': 7, at: '2026-11-22T12:00:30+00:00', tags: ['a'], gone: null, nested: { x: 'ESC \u001b' } }, { root: 'deployment', indent: '  ', textTypes: { at: 'datetime' } });
    expect(xml).toBe(
      [
        '<?xml version="1.0" encoding="UTF-8"?>',
        '<deployment>',
        '  <agent-id type="integer">7</agent-id>',
        '  <at type="datetime">2026-11-22T12:00:30+00:00</at>',
        '  <tags type="array">',
        '    <tag>a</tag>',
        '  </tags>',
        '  <gone nil="true"/>',
        '  <nested>',
        '    <x>ESC \ufffd</x>',
        '  </nested>',
        '</deployment>',
        '',
      ].join('\n'),
    );
  });

  it('round-trips any v2-like body through an independent XML parser', () => {
    const key = fc.stringMatching(/^[a-z][a-z_]{0,8}$/);
    // Non-empty strings: an empty element cannot tell "" from an empty object (true of Rails too).
    // eslint-disable-next-line no-control-regex -- the characters XML cannot carry are the point
    const leaf = fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }).filter((d) => !Object.is(d, -0)), fc.boolean(), fc.constant(null), fc.string({ minLength: 1 }).filter((s) => s.trim() === s && s.trim() !== '' && !/[\u0000-\u001f\ufffe\uffff\ud800-\udfff]/.test(s)));
    const value: fc.Arbitrary<JsonValue> = fc.letrec<{ v: JsonValue }>((tie) => ({
      v: fc.oneof({ depthSize: 'small' }, leaf, fc.array(tie('v'), { maxLength: 3 }), fc.dictionary(key, tie('v'), { minKeys: 1, maxKeys: 3 })),
    })).v;
    fc.assert(
      fc.property(fc.dictionary(key, value, { minKeys: 1, maxKeys: 4 }), (body) => {
        expect(decodeRailsXml(toXml(body))).toEqual({ root: 'response', value: body });
      }),
      { numRuns: 300 },
    );
  });
});
