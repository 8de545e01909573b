import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { startNodeFlags } from '../scripts/start-flags.ts';

/**
 * The processes `npm run load` starts (gateways, a sandbox, the NerdGraph meter): each from its
 * TypeScript source as the npm scripts run them, output to a temp file so a busy log never backs up a pipe, and all
 * killed when the load script exits, whatever the way out.
 */
export interface Child {
  process: ChildProcess;
  /** Everything it printed so far (stdout and stderr go to one file, not through this process). */
  output(): string;
  exited: Promise<number | null>;
  cleanup(): void;
}

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
const NODE_FLAGS = startNodeFlags();

const children: ChildProcess[] = [];
process.on('exit', () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
});

/**
 * A TypeScript entry on Node's own type stripping, as the npm scripts run it (or its compiled .js
 * under dist/), with `npm start`'s node flags.
 */
export function startChild(entry: string, env: Record<string, string>, compiled = false): Child {
  const dir = mkdtempSync(join(tmpdir(), 'v2bridge-load-'));
  const file = join(dir, 'output.log');
  const fd = openSync(file, 'w');
  const args = [...NODE_FLAGS, ...(compiled ? [join('dist', entry.replace(/\.ts$/, '.js'))] : [entry])];
  const child = spawn(process.execPath, args, { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', fd, fd] });
  closeSync(fd);
  children.push(child);
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { process: child, output: () => readFileSync(file, 'utf8'), exited, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

export async function waitForOutput(child: Child, pattern: RegExp, what: string): Promise<RegExpExecArray> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    // Only the head of the file: the start-up lines, before the request logs.
    const match = pattern.exec(child.output().slice(0, 64 * 1024));
    if (match) return match;
    if (child.process.exitCode !== null) throw new Error(`${what} exited (${child.process.exitCode}):\n${child.output().slice(0, 2000)}`);
    if (Date.now() > deadline) throw new Error(`${what} did not start within 60 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** SIGTERM, then its exit code (SIGKILL after `graceMs`, for a drain that never ends). */
export async function stopChild(child: Child, graceMs = 15_000): Promise<number | null> {
  if (child.process.exitCode !== null || child.process.signalCode !== null) return child.process.exitCode;
  child.process.kill('SIGTERM');
  const timer = setTimeout(() => child.process.kill('SIGKILL'), graceMs);
  const code = await child.exited;
  clearTimeout(timer);
  return code;
}

/** Resident set size in bytes, from /proc (Linux), or undefined. */
export function procRss(pid: number | undefined, field: 'VmRSS' | 'VmHWM'): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const match = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}
