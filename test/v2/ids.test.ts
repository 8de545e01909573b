import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeEntityGuid, entityGuid, fnv1a32 } from '../../src/v2/ids.ts';
import { ID_PATTERN } from '../../src/v2/params.ts';
import { appHosts, linkIdsFromNames, syntheticHostId } from '../../mappings/common/app-instances.ts';

/** The host id as first defined: the hash of the joined pair. */
const joinedHostId = (appId: number, name: string): number => fnv1a32(`${appId}|${name}`) >>> 1 || 1;
const appId = fc.integer({ min: 1, max: 2 ** 31 });

describe('v2 ids derived by hashing', () => {
  it('fnv1a32 continued from the hash of a prefix is the hash of the whole text', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'binary' }), fc.string({ unit: 'binary' }), (a, b) => {
        expect(fnv1a32(b, fnv1a32(a))).toBe(fnv1a32(a + b));
      }),
    );
  });

  it('a host id is the hash of `appId|host name`, whether one host or many are named', () => {
    fc.assert(
      fc.property(appId, fc.array(fc.string({ unit: 'binary' }), { maxLength: 20 }), (id, names) => {
        for (const name of names) expect(syntheticHostId(id, name)).toBe(joinedHostId(id, name));
        const expected = [...new Set(names)].map((name) => joinedHostId(id, name)).sort((a, b) => a - b);
        expect(linkIdsFromNames(id, names, []).hosts).toEqual(expected);
        const hosts = appHosts(id, names.map((name, i) => ({ id: i + 1, host: name, instanceName: null, port: 0 })));
        for (const host of hosts) expect(host.id).toBe(joinedHostId(id, host.name));
      }),
    );
  });

  it("a list page's instance ids are its agent ids that are v2 ids, once each, ascending", () => {
    // Numbers as NRQL may send them: small, at the 15-digit edge, fractional, negative zero, not finite.
    const edge = fc.constantFrom(0, -0, 1, 1e15 - 1, 1e15, 2 ** 53, 1.5, -1, Number.NaN, Number.POSITIVE_INFINITY, 1e21);
    const agentId = fc.oneof(fc.integer({ min: -5, max: 10 ** 6 }), edge, fc.double(), fc.string({ maxLength: 17 }), fc.stringMatching(/^[1-9]\d{0,16}$/));
    fc.assert(
      fc.property(appId, fc.array(agentId, { maxLength: 40 }), (id, agentIds) => {
        const expected = [...new Set(agentIds.map(String).filter((text) => ID_PATTERN.test(text)).map(Number))].sort((a, b) => a - b);
        expect(linkIdsFromNames(id, [], agentIds).instances).toEqual(expected);
      }),
    );
  });
});

describe('decodeEntityGuid', () => {
  it('reads back what entityGuid wrote, the first time and every time after', () => {
    const part = fc.stringMatching(/^[A-Z_]{1,12}$/);
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10 ** 9 }), part, part, fc.integer({ min: 1, max: 10 ** 12 }), (account, domain, type, domainId) => {
        const guid = entityGuid(account, domain, type, domainId);
        const expected = { accountId: account, domain, type, domainId: String(domainId) };
        expect(decodeEntityGuid(guid)).toEqual(expected);
        expect(decodeEntityGuid(guid)).toEqual(expected);
      }),
    );
  });

  it('refuses what is no GUID, the first time and every time after, however long', () => {
    const notGuid = fc.oneof(fc.string(), fc.constant('a'.repeat(300)), fc.constant(Buffer.from('1|APM|APPLICATION').toString('base64url')), fc.constant(Buffer.from('x|APM|APPLICATION|1').toString('base64url')));
    fc.assert(
      fc.property(notGuid, (text) => {
        const decoded = Buffer.from(text, 'base64url').toString('utf8').split('|');
        fc.pre(!/^[A-Za-z0-9_-]+$/.test(text) || decoded.length !== 4 || !/^\d+$/.test(decoded[0] ?? ''));
        expect(decodeEntityGuid(text)).toBeUndefined();
        expect(decodeEntityGuid(text)).toBeUndefined();
      }),
    );
  });

  it('answers a frozen value, so no caller can change what the next one reads', () => {
    const decoded = decodeEntityGuid(entityGuid(1000001, 'APM', 'APPLICATION', 5));
    expect(Object.isFrozen(decoded)).toBe(true);
  });
});
