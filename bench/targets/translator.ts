import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { announce } from './announce.ts';
import { createTranslator, type RecordedCall } from './translator-server.ts';

/**
 * Target (t): the floor of a translation, beside (d) the pass-through floor. Per request it
 * sends the NerdGraph requests the gateway sent for that URL to TRANSLATOR_UPSTREAM (the canned
 * upstream), parses the answers, maps them to the gateway's v2 body with plain code and
 * serialises it (bench/targets/translator-server.ts). Whatever the gateway spends above this is
 * what it spends beyond translating. TRANSLATOR_TABLE names a JSON file (bench/capture.ts):
 * request URL -> the calls, in order.
 */
const upstream = process.env.TRANSLATOR_UPSTREAM;
if (!upstream) throw new Error('bench translator: TRANSLATOR_UPSTREAM must be set by the parent');
const table = process.env.TRANSLATOR_TABLE;
if (!table) throw new Error('bench translator: TRANSLATOR_TABLE must be set by the parent');
const calls = new Map(Object.entries(JSON.parse(readFileSync(table, 'utf8')) as Record<string, RecordedCall[]>));

const server = createTranslator(upstream, calls);
server.listen(0, '127.0.0.1');
await once(server, 'listening');
announce((server.address() as AddressInfo).port);
