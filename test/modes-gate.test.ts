import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { createLoopGauge, type LoopSample } from '../src/modes/loop-gauge.ts';
import { createShadowQueue } from '../src/modes/shadow.ts';

/**
 * Caller-first shadow work: the queue drops a job instead of starting it while the event loop is
 * busier than COMPARE_MAX_LOOP_UTILISATION, and the gauge that says how busy it is. Both are
 * driven by injected numbers, never by the test machine's own load.
 */
/** A job that runs until released, recording that it started. */
function heldJobs() {
  const started: number[] = [];
  const releases: Array<() => void> = [];
  const job = (n: number) => () =>
    new Promise<void>((resolve) => {
      started.push(n);
      releases.push(resolve);
    });
  return { started, releases, job };
}

/** Turns of the loop until `done()` (bounded). */
async function turnsUntil(done: () => boolean): Promise<void> {
  for (let turn = 0; turn < 100 && !done(); turn++) await new Promise((resolve) => setImmediate(resolve));
}

describe('the shadow queue, gated on loop utilisation', () => {
  it('drops a job (onDropped, once) instead of starting it while the loop is busier than the bound', () => {
    let utilisation = 0.8;
    const queue = createShadowQueue({ concurrency: 2, queueMax: 4, utilisation: () => utilisation, maxUtilisation: 0.5 });
    const { started, job } = heldJobs();
    const dropped: number[] = [];
    expect(queue.hasRoom()).toBe(false);
    expect(queue.submit(job(1), () => dropped.push(1))).toBe(false);
    expect(started).toEqual([]);
    expect(dropped).toEqual([1]);
    utilisation = 0.5;
    expect(queue.hasRoom()).toBe(true);
    expect(queue.submit(job(2), () => dropped.push(2))).toBe(true);
    expect(started).toEqual([2]);
    expect(dropped).toEqual([1]);
  });

  it('drops the waiting jobs when a slot frees up while the loop is busy', async () => {
    let utilisation = 0;
    const queue = createShadowQueue({ concurrency: 1, queueMax: 2, utilisation: () => utilisation, maxUtilisation: 0.5 });
    const { started, releases, job } = heldJobs();
    const dropped: number[] = [];
    expect([1, 2, 3].map((n) => queue.submit(job(n), () => dropped.push(n)))).toEqual([true, true, true]);
    expect(started).toEqual([1]);
    utilisation = 0.9;
    releases[0]?.();
    await turnsUntil(() => dropped.length === 2);
    expect(dropped).toEqual([2, 3]);
    expect(started).toEqual([1]);
    expect(queue.pending).toBe(0);
  });

  it('starts a waiting job when a slot frees up and the loop has room', async () => {
    const queue = createShadowQueue({ concurrency: 1, queueMax: 1, utilisation: () => 0.1, maxUtilisation: 0.5 });
    const { started, releases, job } = heldJobs();
    queue.submit(job(1));
    queue.submit(job(2));
    releases[0]?.();
    await turnsUntil(() => started.length === 2);
    expect(started).toEqual([1, 2]);
  });

  it('a bound of 1 turns the check off: the utilisation is never even read', () => {
    let reads = 0;
    const queue = createShadowQueue({ concurrency: 1, queueMax: 0, utilisation: () => (reads++, 1), maxUtilisation: 1 });
    const { started, job } = heldJobs();
    expect(queue.submit(job(1))).toBe(true);
    expect(started).toEqual([1]);
    // Full: concurrency used up and no waiting room, whatever the loop.
    expect(queue.hasRoom()).toBe(false);
    expect(queue.submit(job(2))).toBe(false);
    expect(reads).toBe(0);
  });
});

/** A scripted event loop: each step is some milliseconds active then some idle. */
function scriptedLoop() {
  let sample: LoopSample = { idle: 0, active: 0 };
  return {
    sample: () => sample,
    run(activeMs: number, idleMs: number) {
      sample = { idle: sample.idle + idleMs, active: sample.active + activeMs };
    },
  };
}

describe('the loop gauge', () => {
  it('reads 0 before anything ran, and never changes without time passing', () => {
    const loop = scriptedLoop();
    const gauge = createLoopGauge({ windowMs: 200, sample: loop.sample });
    expect(gauge()).toBe(0);
    expect(gauge()).toBe(0);
  });

  it('climbs to a steady load within about a window, and falls back after a quiet spell', () => {
    const loop = scriptedLoop();
    const gauge = createLoopGauge({ windowMs: 200, sample: loop.sample });
    // 80 % busy, read every millisecond (as a busy gateway would), for one window.
    for (let ms = 0; ms < 200; ms++) {
      loop.run(0.8, 0.2);
      gauge();
    }
    expect(gauge()).toBeGreaterThan(0.8 * (1 - Math.exp(-1)) - 0.01);
    // Two more windows: settled at the load.
    for (let ms = 0; ms < 400; ms++) {
      loop.run(0.8, 0.2);
      gauge();
    }
    expect(gauge()).toBeCloseTo(0.8, 1);
    // A second of idleness, read once: the busy past no longer counts.
    loop.run(0, 1000);
    expect(gauge()).toBeLessThan(0.01);
  });

  it('does not depend on how often it is read: one reading per window gives the same answer as many', () => {
    const often = scriptedLoop();
    const rarely = scriptedLoop();
    const [fast, slow] = [createLoopGauge({ windowMs: 100, sample: often.sample }), createLoopGauge({ windowMs: 100, sample: rarely.sample })];
    for (let ms = 0; ms < 1000; ms++) {
      often.run(0.6, 0.4);
      fast();
    }
    rarely.run(600, 400);
    expect(slow()).toBeCloseTo(fast(), 1);
  });

  it('always stays between 0 and 1', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.double({ min: 0, max: 1000, noNaN: true }), fc.double({ min: 0, max: 1000, noNaN: true })), { maxLength: 50 }), (steps) => {
        const loop = scriptedLoop();
        const gauge = createLoopGauge({ windowMs: 150, sample: loop.sample });
        for (const [active, idle] of steps) {
          loop.run(active, idle);
          const value = gauge();
          if (!(value >= 0 && value <= 1)) return false;
        }
        return true;
      }),
    );
  });
});
