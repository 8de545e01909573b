import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { once } from 'node:events';
import { serve } from '@hono/node-server';
import { Hono } from 'hono';
import { announce } from './announce.ts';

/**
 * Target: the baseline, a Hono hello-world on @hono/node-server. HELLO_BODIES maps each
 * scenario path to the byte size of the gateway's answer there; the JSON text of that size is
 * built once, so each request costs only the framework and the bytes on the wire.
 */
const sizes = JSON.parse(process.env.HELLO_BODIES ?? '{}') as Record<string, number>; // written by bench/run.ts

function jsonOfSize(bytes: number): string {
  const head = '{"hello":"world","padding":"';
  const tail = '"}';
  const pad = bytes - head.length - tail.length;
  if (pad < 0) throw new Error(`bench hello: cannot build a JSON body of ${bytes} bytes`);
  return head + 'x'.repeat(pad) + tail;
}

// Keyed by path alone: the hello-world ignores query strings (no two scenarios share a path).
const bodies = new Map(Object.entries(sizes).map(([path, bytes]) => [path.split('?')[0] as string, jsonOfSize(bytes)]));
const app = new Hono();
app.get('*', (c) => {
  const body = bodies.get(c.req.path);
  return body === undefined ? c.notFound() : c.body(body, 200, { 'content-type': 'application/json; charset=utf-8' });
});

const server = serve({ fetch: app.fetch, port: 0, hostname: '127.0.0.1' }) as Server;
await once(server, 'listening');
announce((server.address() as AddressInfo).port);
