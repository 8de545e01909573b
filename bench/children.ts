import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { ChildMessage, Command, Commands, ParentMessage } from './protocol.ts';

/**
 * Parent side of bench/protocol.ts: starts bench/targets/<entry>.ts in its own Node process
 * (TypeScript run by Node's own type stripping, as npm start runs the gateway), waits for its port and sends it commands. Every child started here
 * is killed by killAll().
 */
export interface Target {
  name: string;
  port: number;
  base: string;
  ask<K extends Command>(command: K, arg?: string): Promise<Commands[K]>;
}

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const READY_TIMEOUT_MS = 30_000;
// A profile stop writes a file, a freeze lists thousands of answers: generous, yet a hung child still fails the run.
const ASK_TIMEOUT_MS = 30_000;
const children = new Set<ChildProcess>();

export function killAll(): void {
  for (const child of children) child.kill('SIGTERM');
  children.clear();
}

export function startTarget(entry: string, env: Record<string, string> = {}, nodeArgs: string[] = []): Promise<Target> {
  const file = fileURLToPath(new URL(`./targets/${entry}.ts`, import.meta.url));
  // stdout is discarded (the gateway logs every request there); stderr shows crashes.
  const child = spawn(process.execPath, [...nodeArgs, file], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  children.add(child);
  child.once('exit', () => children.delete(child));

  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  let nextId = 1;
  child.on('message', (raw) => {
    const message = raw as ChildMessage; // targets only send ChildMessage (bench/targets/announce.ts)
    if (message.type !== 'reply') return;
    const waiter = pending.get(message.id);
    pending.delete(message.id);
    if (message.error !== undefined) waiter?.reject(new Error(`${entry}: ${message.error}`));
    else waiter?.resolve(message.value);
  });

  const ask = <K extends Command>(command: K, arg?: string): Promise<Commands[K]> =>
    new Promise<Commands[K]>((resolve, reject) => {
      const id = nextId++;
      const timer = setTimeout(() => reject(new Error(`${entry}: no answer to ${command}`)), ASK_TIMEOUT_MS);
      pending.set(id, {
        // The reply to command K carries Commands[K] (bench/targets/announce.ts).
        resolve: (value) => { clearTimeout(timer); resolve(value as Commands[K]); },
        reject: (error) => { clearTimeout(timer); reject(error); },
      });
      child.send({ type: 'ask', id, command, ...(arg === undefined ? {} : { arg }) } satisfies ParentMessage);
    });

  return new Promise<Target>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${entry}: not ready after ${READY_TIMEOUT_MS} ms`)), READY_TIMEOUT_MS);
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      clearTimeout(timer);
      reject(new Error(`${entry}: exited (${signal ?? `code ${code}`})`));
    });
    child.on('message', (raw) => {
      const message = raw as ChildMessage;
      if (message.type !== 'ready') return;
      clearTimeout(timer);
      resolve({ name: entry, port: message.port, base: `http://127.0.0.1:${message.port}`, ask });
    });
  });
}
