import { Session } from 'node:inspector/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { formatStageTables, STAGES, stageTable, type CpuProfile, type StageShare } from '../../bench/stages.ts';
import { createTestGateway, DEMO_KEY, PRIMARY_ACCOUNT, startSandbox } from '../support/harness.ts';

/**
 * bench/stages.ts: a CPU profile attributed to a request's stages. Synthetic
 * profiles pin each rule; a real one, of the gateway in this process, shows the stages a show
 * request goes through actually appear.
 */

const ROOT = '/repo';
interface FrameSpec {
  fn?: string;
  url: string;
}
/** A file of the project (under a made-up checkout) or a package in its node_modules. */
const src = (path: string, fn = 'work'): FrameSpec => ({ fn, url: `file://${ROOT}/${path}` });
const pkg = (path: string, fn = 'work'): FrameSpec => ({ fn, url: `file://${ROOT}/node_modules/${path}` });
const native = (fn: string): FrameSpec => ({ fn, url: '' });
const node = (module: string, fn = 'work'): FrameSpec => ({ fn, url: `node:${module}` });

/**
 * A profile from stacks (outermost frame first) and how many 100 µs samples each holds; every
 * stack hangs under (root), shared prefixes share nodes as V8's do.
 */
function profileOf(stacks: { frames: FrameSpec[]; samples: number }[]): CpuProfile {
  const nodes: CpuProfile['nodes'] = [{ id: 1, callFrame: { functionName: '(root)', url: '', lineNumber: -1 }, children: [] }];
  const samples: number[] = [];
  for (const { frames, samples: count } of stacks) {
    let parent = nodes[0]!;
    for (const frame of frames) {
      const functionName = frame.fn ?? '';
      const existing = (parent.children ?? []).map((id) => nodes.find((n) => n.id === id)!).find((n) => n.callFrame.functionName === functionName && n.callFrame.url === frame.url);
      if (existing) {
        parent = existing;
        continue;
      }
      const created = { id: nodes.length + 1, callFrame: { functionName, url: frame.url, lineNumber: 0 }, children: [] };
      nodes.push(created);
      parent.children!.push(created.id);
      parent = created;
    }
    for (let i = 0; i < count; i++) samples.push(parent.id);
  }
  return { nodes, samples, timeDeltas: samples.map(() => 100), startTime: 0, endTime: samples.length * 100 + 100 };
}

const shareOf = (table: StageShare[], stage: string): number => table.find((row) => row.stage === stage)?.share ?? Number.NaN;
const HTTP = [node('_http_server', 'parserOnIncoming'), pkg('@hono/node-server/dist/index.mjs', 'handle'), pkg('hono/dist/compose.js', 'dispatch')];
/** The one stage a lone stack is attributed to. */
const stageOf = (frames: FrameSpec[]): string | undefined => stageTable(profileOf([{ frames, samples: 1 }])).find((row) => row.share === 1)?.stage;

describe('stage rules', () => {
  const cases: [string, FrameSpec[], string][] = [
    ['pino', [...HTTP, src('src/app.ts'), pkg('pino/lib/proto.js', 'write')], 'log'],
    ['the request log line', [...HTTP, src('src/app.ts'), src('src/ops/logger.ts', 'writeRequestLog')], 'log'],
    ['prom-client', [...HTTP, src('src/app.ts'), pkg('prom-client/lib/counter.js', 'inc')], 'metrics'],
    ['the gateway metrics', [...HTTP, src('src/ops/metrics.ts', 'observe')], 'metrics'],
    ['undici', [...HTTP, src('mappings/applications/show.ts', 'load'), src('src/upstream/client.ts'), pkg('undici/lib/dispatcher/client-h1.js', 'writeBuffer')], 'upstream call'],
    ['the NerdGraph client', [...HTTP, src('src/upstream/client.ts', 'sendCall')], 'upstream call'],
    ['one attempt', [src('src/upstream/attempt.ts', 'sendAttempt')], 'upstream call'],
    ['JSON.parse of the upstream body', [src('src/upstream/attempt.ts', 'sendAttempt'), src('src/upstream/attempt.ts', 'parseResult'), native('parse')], 'parse'],
    ['zod on an upstream answer', [src('mappings/applications/application.ts', 'readApplicationEntity'), src('src/upstream/answer.ts', 'parseAnswer'), pkg('zod/v4/core/schemas.js', 'parse')], 'parse'],
    ['the compiled check on an upstream answer', [src('mappings/applications/list.ts', 'readPageDetails'), src('src/upstream/compiled-check.ts', 'checkedParse'), src('src/upstream/compiled-check.ts', 'check'), src('src/upstream/compiled-check-rules.ts', 'passesTypeBits')], 'parse'],
    ['zod in a mapping', [src('mappings/applications/application.ts'), pkg('zod/v4/core/schemas.js', 'safeParse'), pkg('zod/v4/core/doc.js', 'compile')], 'parse'],
    ['zod in a parameter schema', [src('mappings/applications/show.ts', 'load'), src('src/v2/param-schema.ts', 'parse'), pkg('zod/v4/core/schemas.js', 'parse')], 'parameters'],
    ['the query string', [src('src/routes/v2-router.ts'), src('src/v2/params.ts', 'parseV2Params')], 'parameters'],
    ['JSON and XML bodies', [src('src/routes/operations.ts'), src('src/v2/format.ts', 'respond'), native('stringify')], 'render'],
    ['fast-xml-parser', [src('src/v2/xml.ts'), pkg('fast-xml-parser/src/xmlbuilder/json2xml.js', 'build')], 'render'],
    ['a mapping reshape', [src('src/routes/entities.ts'), src('mappings/applications/list.ts', 'reshapeItem')], 'reshape'],
    ['a shared mapping helper', [src('mappings/applications/application.ts', 'reshapeApplication')], 'reshape'],
    ['the caller', [src('src/routes/v2-router.ts'), src('src/caller/identity.ts', 'callerFrom')], 'key and budgets'],
    ['a budget', [src('src/upstream/client.ts'), src('src/budget/budgets.ts', 'admit')], 'key and budgets'],
    ['the routing step', [...HTTP, src('src/routing/routing-step.ts')], 'routing'],
    ['the route table', [src('src/routing/routing-step.ts'), src('src/v2/route-table.ts', 'match')], 'routing'],
    ["node's HTTP server", [node('_http_outgoing', 'end')], 'HTTP server and framework'],
    ['Hono', [...HTTP], 'HTTP server and framework'],
    ['the garbage collector', [native('(garbage collector)')], 'GC'],
    ['the microtask runner alone', [node('internal/process/task_queues', 'processTicksAndRejections'), native('runMicrotasks')], 'other'],
    ['a package no rule names', [...HTTP, src('src/app.ts'), pkg('some-lib/index.js')], 'other'],
  ];
  it.each(cases)('%s', (_name, frames, stage) => {
    expect(stageOf(frames)).toBe(stage);
  });

  it('the innermost matching frame decides', () => {
    const outer = [...HTTP, src('src/routing/routing-step.ts'), src('src/routes/v2-router.ts'), src('mappings/applications/show.ts', 'load')];
    expect(stageOf(outer)).toBe('reshape');
    expect(stageOf([...outer, src('src/upstream/client.ts')])).toBe('upstream call');
    expect(stageOf([...outer, src('src/upstream/client.ts'), src('src/ops/metrics.ts')])).toBe('metrics');
    // Frames no rule matches (natives, wasm, node's internals) are transparent.
    expect(stageOf([...outer, native('parse'), { fn: 'wasm-function[3]', url: 'wasm://wasm/abc' }])).toBe('reshape');
  });

  it('socket internals go to whichever side called them, and alone to the HTTP server', () => {
    expect(stageOf([pkg('undici/lib/dispatcher/client-h1.js', 'writeBuffer'), node('net', 'write'), node('internal/stream_base_commons', 'writeGeneric')])).toBe('upstream call');
    expect(stageOf([node('internal/stream_base_commons', 'onStreamRead'), node('events', 'emit'), pkg('undici/lib/dispatcher/client-h1.js', 'onData')])).toBe('upstream call');
    expect(stageOf([node('internal/stream_base_commons', 'onStreamRead'), node('net', 'push')])).toBe('HTTP server and framework');
  });

  it('a package with a src/ folder is not taken for the project', () => {
    expect(stageOf([pkg('some-lib/src/upstream/client.js')])).toBe('other');
  });

  it('idle and (program) are not busy; the busy shares sum to 1 in the stages order', () => {
    const profile = profileOf([
      { frames: [native('(idle)')], samples: 50 },
      { frames: [native('(program)')], samples: 20 },
      { frames: [src('src/routing/routing-step.ts')], samples: 3 },
      { frames: [src('src/v2/format.ts')], samples: 1 },
    ]);
    const table = stageTable(profile);
    expect(table.map((row) => row.stage)).toEqual([...STAGES]);
    expect(shareOf(table, 'routing')).toBeCloseTo(0.75);
    expect(shareOf(table, 'render')).toBeCloseTo(0.25);
    expect(table.reduce((sum, row) => sum + row.share, 0)).toBeCloseTo(1);
  });

  it('samples weigh the time until the next one', () => {
    const profile = profileOf([
      { frames: [src('src/routing/routing-step.ts')], samples: 1 },
      { frames: [src('src/v2/format.ts')], samples: 1 },
    ]);
    // The routing sample lasted 300 µs, the render one 100.
    profile.timeDeltas = [100, 300];
    profile.endTime = 500;
    expect(shareOf(stageTable(profile), 'routing')).toBeCloseTo(0.75);
  });

  it('formats one row per scenario, cells in µs per request', () => {
    const stages = STAGES.map((stage) => ({ stage, share: stage === 'routing' ? 0.25 : stage === 'render' ? 0.75 : 0 }));
    const table = formatStageTables([
      { scenario: 'application show', cpuPerReqUs: 400, stages },
      { scenario: 'shares', cpuPerReqUs: 1, stages },
    ]);
    const [header, , show, shares] = table.split('\n');
    const cellsOf = (line: string | undefined): string[] => (line ?? '').split('|').slice(1, -1).map((cell) => cell.trim());
    const columns = cellsOf(header);
    expect(columns).toEqual(['scenario', 'CPU µs/req', ...STAGES]);
    const at = (line: string | undefined, column: string): string | undefined => cellsOf(line)[columns.indexOf(column)];
    expect(at(show, 'routing')).toBe('100');
    expect(at(show, 'render')).toBe('300');
    expect(at(show, 'GC')).toBe('0.000');
    expect(at(shares, 'render')).toBe('0.750');
  });
});

describe('a real profile of the gateway', () => {
  let sandbox: Awaited<ReturnType<typeof startSandbox>>;
  beforeAll(async () => {
    sandbox = await startSandbox();
  });
  afterAll(async () => {
    await sandbox.close();
  });

  it('application shows of distinct apps go through routing, the upstream call, reshape and render', async () => {
    const gateway = await createTestGateway({ nerdgraphUrl: sandbox.graphqlUrl });
    const ids = sandbox.sandbox.data.apps.filter((app) => app.accountId === PRIMARY_ACCOUNT).map((app) => app.id);
    const shown = ids.slice(0, 300);
    expect(shown.length).toBeGreaterThanOrEqual(200);
    const session = new Session();
    session.connect();
    let profile: CpuProfile;
    try {
      await session.post('Profiler.enable');
      // 100 µs: a short run still gets enough samples in every stage.
      await session.post('Profiler.setSamplingInterval', { interval: 100 });
      await session.post('Profiler.start');
      const statuses: number[] = [];
      for (const id of shown) {
        const response = await gateway.app.request(`/v2/applications/${id}.json`, { headers: { 'X-Api-Key': DEMO_KEY } });
        statuses.push(response.status);
        await response.text();
      }
      const stopped = (await session.post('Profiler.stop')).profile;
      // The protocol marks samples optional; a profile without them attributes nothing (and fails below).
      profile = { ...stopped, samples: stopped.samples ?? [], timeDeltas: stopped.timeDeltas ?? [] };
      expect(statuses.filter((status) => status !== 200)).toEqual([]);
    } finally {
      session.disconnect();
    }
    const table = stageTable(profile);
    const positive = table.filter((row) => row.share > 0).map((row) => row.stage);
    expect(positive).toEqual(expect.arrayContaining(['routing', 'upstream call', 'reshape', 'render']));
    expect(table.reduce((sum, row) => sum + row.share, 0)).toBeCloseTo(1);
  });
});
