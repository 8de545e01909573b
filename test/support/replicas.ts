import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';

/**
 * Gateway replicas as real processes, started as `npm start` starts one (src/index.ts on Node's own type stripping),
 * on a free loopback port each, for the scale-out tests: several processes that share nothing
 * but Redis and the upstream. `env` adds to (and wins over) a quiet default environment.
 */
const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export const TEST_STATE_SECRET = 'test-state-secret-0123456789abcdef0123456789';

export interface Replica {
  readonly url: string;
  readonly name: string;
  /** Its /metrics text. */
  metrics(): Promise<string>;
  /** The sum of a counter's series on /metrics whose labels contain every `labels` pair. */
  counter(name: string, labels?: Record<string, string>): Promise<number>;
  /** Everything it printed (for a failing test's message). */
  output(): string;
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export async function startReplica(name: string, env: Record<string, string>): Promise<Replica> {
  const child = spawn(process.execPath, ['src/index.ts'], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', REPLICA_NAME: name, STATE_SECRET: TEST_STATE_SECRET, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  running.add(child);
  let printed = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    // Only the start-up lines are kept: request logs would grow without bound under load.
    if (printed.length < 64_000) printed += chunk.toString('utf8');
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    if (printed.length < 64_000) printed += chunk.toString('utf8');
  });
  const port = await new Promise<number>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`replica ${name} did not start:\n${printed}`)), 30_000);
    const look = (): void => {
      const match = /"port":(\d+)[^\n]*v2-bridge listening/.exec(printed);
      if (match) {
        clearTimeout(timer);
        child.stdout?.off('data', look);
        resolve(Number(match[1]));
      }
    };
    child.stdout?.on('data', look);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`replica ${name} exited (${code}):\n${printed}`));
    });
  });
  const url = `http://127.0.0.1:${port}`;
  const metrics = async (): Promise<string> => (await fetch(`${url}/metrics`)).text();
  return {
    url,
    name,
    metrics,
    async counter(metric, labels = {}) {
      let total = 0;
      for (const line of (await metrics()).split('\n')) {
        if (!line.startsWith(`${metric}{`) && !line.startsWith(`${metric} `)) continue;
        if (!Object.entries(labels).every(([k, v]) => line.includes(`${k}="${v}"`))) continue;
        total += Number(line.slice(line.lastIndexOf(' ') + 1));
      }
      return total;
    },
    output: () => printed,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
      running.delete(child);
    },
  };
}
