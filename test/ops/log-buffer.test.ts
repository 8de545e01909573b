import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, constants, mkdtempSync, openSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { bufferedLog, logLinesDropped } from '../../src/ops/log-destination.ts';
import { createMetrics } from '../../src/ops/metrics.ts';

/** The log buffer behind a destination that stopped reading: a pipe held open by a process that never reads it. */
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

async function stalledPipe(): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'v2bridge-logbuf-'));
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  const fifo = join(dir, 'log');
  execFileSync('mkfifo', [fifo]);
  const reader: ChildProcess = spawn('sh', ['-c', 'exec sleep 300 < "$0"', fifo], { stdio: 'ignore' });
  cleanups.push(() => reader.kill('SIGKILL'));
  // A FIFO opened for writing without blocking fails (ENXIO) until its reader has it open.
  for (let tries = 0; ; tries++) {
    try {
      const fd = openSync(fifo, constants.O_WRONLY | constants.O_NONBLOCK);
      cleanups.push(() => closeSync(fd));
      return fd;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENXIO' || tries > 400) throw error;
      await new Promise((r) => setTimeout(r, 25));
    }
  }
}

const LINE = `${JSON.stringify({ level: 30, msg: 'request', path: '/v2/applications.json', pad: 'x'.repeat(160) })}\n`;

describe('the log buffer while its destination does not read', () => {
  it('stops growing at its bound, drops and counts the lines past it, and the final flush gives up', async () => {
    const fd = await stalledPipe();
    const bound = 64 * 1024;
    const log = bufferedLog(fd, bound);
    const droppedBefore = logLinesDropped();
    const sizes: number[] = [];
    // 2 MB of lines: the pipe takes its 64 KB, the buffer its bound, the rest is dropped.
    for (let batch = 0; batch < 20; batch++) {
      for (let i = 0; i < 500; i++) log.stream.write(LINE);
      sizes.push(log.bufferedBytes());
      await new Promise((r) => setTimeout(r, 5));
    }
    expect(Math.max(...sizes)).toBeLessThanOrEqual(bound);
    // It reached the bound and stayed there.
    expect(sizes.at(-1)).toBeGreaterThan(bound - LINE.length * 2);
    const dropped = logLinesDropped() - droppedBefore;
    const written = 20 * 500;
    const held = Math.ceil((bound + 65_536) / LINE.length) + 1;
    expect(dropped).toBeGreaterThanOrEqual(written - held);

    const metrics = createMetrics();
    const scraped = await metrics.registry.getSingleMetricAsString('v2bridge_log_lines_dropped_total');
    expect(scraped).toContain(`v2bridge_log_lines_dropped_total ${logLinesDropped()}`);

    // The synchronous flush at exit returns although nothing reads: it retries only until its bound.
    log.finalFlush(300);
    expect(log.bufferedBytes()).toBeGreaterThan(0);
  });
});
