import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { compareAnswers, MAX_DEPTH } from '../../src/compare/diff.ts';
import { secretMark } from '../../src/compare/secrets.ts';
import { createThreadComparer, DiffThreadClosed, type DiffInput } from '../../src/compare/thread-comparer.ts';
import type { Threshold } from '../../src/compare/thresholds.ts';
import type { AnswerSnapshot } from '../../src/compare/types.ts';

const THRESHOLDS: Threshold[] = [{ pattern: 'applications[].application_summary.*', relative: 0.05 }];
const threaded = createThreadComparer({ thresholds: THRESHOLDS });
afterAll(() => threaded.close());

function jsonAnswer(value: unknown, link: string | null = null): AnswerSnapshot {
  return { status: 200, contentType: 'application/json; charset=utf-8', body: JSON.stringify(value), link, ms: 1 };
}

function inProcess(input: DiffInput) {
  const { outcome, differences, tally } = compareAnswers({ ...input, rules: { gapPatterns: input.gapPatterns, thresholds: THRESHOLDS } });
  return { outcome, differences, tally };
}

describe('the diff engine on its thread', () => {
  it('judges exactly as compareAnswers does in-process', async () => {
    const body = fc.jsonValue({ maxDepth: 4 });
    await fc.assert(
      fc.asyncProperty(body, body, fc.option(body, { nil: undefined }), fc.array(fc.constantFrom('a', 'a.b', 'application.name', ''), { maxLength: 2 }), async (legacy, translated, again, gapPatterns) => {
        const input: DiffInput = { legacy: jsonAnswer(legacy), translated: jsonAnswer(translated), ...(again === undefined ? {} : { legacyAgain: jsonAnswer(again) }), gapPatterns };
        expect(await threaded.compare(input)).toEqual(inProcess(input));
      }),
      { numRuns: 60 },
    );
  });

  it('judges a v2 answer with a tolerated value, a gap, noise, a Link header and an XML body as in-process', async () => {
    const app = (id: number, name: string, rate: number) => ({ id, name, application_summary: { throughput: rate } });
    const cases: DiffInput[] = [
      {
        legacy: jsonAnswer({ applications: [app(1, 'a', 100), app(2, 'b', 7)] }, '<https://api.newrelic.com/v2/applications.json?page=2>; rel="next"'),
        legacyAgain: jsonAnswer({ applications: [app(1, 'a', 100), app(2, 'b', 9)] }),
        translated: jsonAnswer({ applications: [app(1, 'a', 103), app(2, 'c', 8)] }, null),
        gapPatterns: ['applications[].name'],
      },
      {
        legacy: { status: 200, contentType: 'application/xml', body: '<?xml version="1.0" encoding="UTF-8"?><applications type="array"><application><id type="integer">1</id></application></applications>', link: null, ms: 1 },
        translated: { status: 200, contentType: 'application/xml', body: '<?xml version="1.0" encoding="UTF-8"?><applications type="array"><application><id type="integer">2</id></application></applications>', link: null, ms: 1 },
        gapPatterns: [],
      },
      { legacy: jsonAnswer({ a: 1 }), translated: { status: 500, contentType: 'text/html', body: '<html>', link: null, ms: 1 }, gapPatterns: [] },
    ];
    for (const input of cases) {
      const judged = await threaded.compare(input);
      expect(judged).toEqual(inProcess(input));
    }
    // The configured threshold reached the thread: 100 against 103 is within 5 %.
    const verdicts = (await threaded.compare(cases[0] as DiffInput)).differences.map((d) => [d.path, d.verdict]);
    expect(verdicts).toContainEqual(['applications[id=1].application_summary.throughput', 'tolerated']);
  });

  it('answers an error judgement for an answer nested past the diff depth, as in-process', async () => {
    const nested = (leaf: number): unknown => JSON.parse(`${'['.repeat(MAX_DEPTH + 5)}${leaf}${']'.repeat(MAX_DEPTH + 5)}`);
    const input: DiffInput = { legacy: jsonAnswer(nested(1)), translated: jsonAnswer(nested(2)), gapPatterns: [] };
    const judged = await threaded.compare(input);
    expect(judged.outcome).toBe('error');
    expect(judged).toEqual(inProcess(input));
  });

  it('keeps the order of many comparisons in flight at once', async () => {
    const inputs = Array.from({ length: 40 }, (_, i): DiffInput => ({ legacy: jsonAnswer({ n: i }), translated: jsonAnswer({ n: i % 3 === 0 ? i : -i }), gapPatterns: [] }));
    const judged = await Promise.all(inputs.map((input) => threaded.compare(input)));
    expect(judged).toEqual(inputs.map(inProcess));
  });
});

describe('a diff thread that fails', () => {
  const flakyEntry = new URL('./fixtures/flaky-diff-thread.ts', import.meta.url);
  const plain: DiffInput = { legacy: jsonAnswer({}), translated: jsonAnswer({}), gapPatterns: [] };
  // Restarted at once unless a test is about the wait.
  const flaky = (options: { timeoutMs?: number; restartBackoffMs?: number } = {}) => createThreadComparer({ thresholds: [], entry: flakyEntry, restartBackoffMs: 0, ...options });

  it('fails the comparisons it held when it exits, and a new thread serves the next', async () => {
    const comparer = flaky();
    try {
      const exiting = comparer.compare({ ...plain, gapPatterns: ['exit'] });
      // Posted after the exit's: never answered by that thread.
      const held = comparer.compare(plain);
      await expect(exiting).rejects.toThrow(/exited \(code 3\)/);
      await expect(held).rejects.toThrow(/exited \(code 3\)/);
      await expect(comparer.compare(plain)).resolves.toMatchObject({ outcome: 'match' });
    } finally {
      await comparer.close();
    }
  });

  it('after a failure, fails comparisons at once for the restart wait, without starting a thread', async () => {
    const comparer = flaky({ restartBackoffMs: 60_000 });
    try {
      const first = await comparer.compare({ ...plain, gapPatterns: ['exit'] }).catch((error: unknown) => error);
      expect(String(first)).toMatch(/exited \(code 3\)/);
      // The same failure, not a new thread's: a new thread would have answered this one (a match).
      await expect(comparer.compare(plain)).rejects.toBe(first);
    } finally {
      await comparer.close();
    }
  });

  it('cannot start: the record names the error and its code, never a thread per comparison', async () => {
    const comparer = createThreadComparer({ thresholds: [], entry: new URL('./fixtures/no-such-thread.ts', import.meta.url) });
    try {
      const first = await comparer.compare(plain).catch((error: unknown) => error);
      expect(String(first)).toMatch(/diff thread failed: Error (ERR_)?MODULE_NOT_FOUND/);
      // Within the restart wait: the same failure, no second thread tried.
      await expect(comparer.compare(plain)).rejects.toBe(first);
    } finally {
      await comparer.close();
    }
  });

  it('fails a comparison it never answers after the bound, and a new thread serves the next', async () => {
    const comparer = flaky({ timeoutMs: 2_000 });
    try {
      await expect(comparer.compare({ ...plain, gapPatterns: ['hang'] })).rejects.toThrow(/took over 2000 ms/);
      await expect(comparer.compare(plain)).resolves.toMatchObject({ outcome: 'match' });
    } finally {
      await comparer.close();
    }
  }, 10_000);

  it('fails on an uncaught error in the thread, and a new thread serves the next', async () => {
    const comparer = flaky();
    try {
      await expect(comparer.compare({ ...plain, gapPatterns: ['throw'] })).rejects.toThrow(/diff thread failed: Error/);
      await expect(comparer.compare(plain)).resolves.toMatchObject({ outcome: 'match' });
    } finally {
      await comparer.close();
    }
  });

  it('fails an input it cannot send alone: the thread and the other comparisons go on', async () => {
    const comparer = flaky();
    try {
      const other = comparer.compare(plain);
      const unclonable = { ...plain, gapPatterns: [(() => 'a function') as unknown as string] };
      await expect(comparer.compare(unclonable)).rejects.toThrow(/could not be cloned/);
      await expect(other).resolves.toMatchObject({ outcome: 'match' });
      await expect(comparer.compare(plain)).resolves.toMatchObject({ outcome: 'match' });
    } finally {
      await comparer.close();
    }
  });

  it('once closed, fails what was pending and every later comparison as closed', async () => {
    const comparer = flaky();
    const pending = comparer.compare({ ...plain, gapPatterns: ['hang'] });
    await comparer.close();
    await expect(pending).rejects.toBeInstanceOf(DiffThreadClosed);
    await expect(comparer.compare(plain)).rejects.toBeInstanceOf(DiffThreadClosed);
  });
});

describe('secret tags', () => {
  it('are the same on the thread as in the process that started it', async () => {
    const channel = (key: string) => jsonAnswer({ channel: { configuration: { service_key: key } } });
    const input: DiffInput = { legacy: channel('legacy-secret'), translated: channel('translated-secret'), gapPatterns: [] };
    const [difference] = (await threaded.compare(input)).differences;
    expect(difference?.legacy).toBe(secretMark('legacy-secret'));
    expect(difference?.translated).toBe(secretMark('translated-secret'));
  });
});
