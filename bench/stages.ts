import { readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { pathToFileURL } from 'node:url';
import { z } from 'zod';

/**
 * Where the CPU goes: a V8 CPU profile (.cpuprofile, from `node --cpu-prof`
 * or node:inspector's Profiler.stop) attributed to the stages of a gateway request.
 *
 * Each sample's stack is walked from the leaf up; the first (innermost) frame a strong rule
 * matches decides its stage. Frames no rule matches (native builtins such as JSON.parse, wasm,
 * node internals) are transparent: their time goes to the nearest matched frame above them.
 * Weak rules (socket and stream internals, whichever side they serve) decide only when no
 * strong rule matches anywhere on the stack. A stack nothing matches is "other".
 *
 * `node bench/stages.ts [--cpu-per-req=N] <file.cpuprofile>...` prints one table row per file.
 */

export interface CpuProfile {
  nodes: { id: number; callFrame: { functionName: string; url: string; lineNumber: number }; children?: number[] }[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export interface StageShare {
  stage: string;
  /** 0..1 of busy (non-idle) time. */
  share: number;
}

/** Every stage, in the order the tables show them (fixed, so tables from two runs compare). */
export const STAGES = [
  'routing',
  'key and budgets',
  'parameters',
  'upstream call',
  'parse',
  'reshape',
  'render',
  'log',
  'metrics',
  'HTTP server and framework',
  'GC',
  'other',
] as const;
export type Stage = (typeof STAGES)[number];

interface StageRule {
  stage: Stage;
  /** Matched against the frame's script URL (file:// or a plain path; node:... for Node's own). */
  file: RegExp;
  /** Matched against the frame's function name; absent: any function of the file. */
  fn?: RegExp;
  /** Decides only when no strong rule matches anywhere on the stack. */
  weak?: boolean;
  /**
   * Takes the stage of the nearest strong frame above it when that stage is one of these (zod:
   * a parameter schema's parse is parameters, every other parse reads an upstream answer).
   */
  inheritFrom?: readonly Stage[];
}

// A project file, not one inside node_modules (whose packages may have src/ folders of their own).
const own = (path: string): RegExp => new RegExp(`^(?!.*/node_modules/).*/${path}`);
const pkg = (name: string): RegExp => new RegExp(`/node_modules/${name}/`);

/** The stage rules, tried in this order on each frame: the first that matches the frame is its rule. */
export const STAGE_RULES: readonly StageRule[] = [
  // pino and the streams it writes through; the request's one log line (src/ops/logger.ts).
  { stage: 'log', file: /\/node_modules\/(pino|pino-std-serializers|sonic-boom|thread-stream|fast-redact|quick-format-unescaped|safe-stable-stringify|on-exit-leak-free|atomic-sleep)\// },
  { stage: 'log', file: own('src/ops/logger\\.ts') },
  // Key masking: the log line's path and upstream messages before they are logged.
  { stage: 'log', file: own('src/ops/redact\\.ts') },
  // prom-client (counters, histograms, label hashing) and the gateway's metric definitions.
  { stage: 'metrics', file: /\/node_modules\/(prom-client|tdigest|bintrees)\// },
  { stage: 'metrics', file: own('src/ops/metrics[^/]*\\.ts') },
  // The upstream body read as text is parsed once here (JSON.parse, a native, lands on this frame).
  { stage: 'parse', file: own('src/upstream/attempt\\.ts'), fn: /^parseResult$/ },
  // parseAnswer: zod validation of an upstream answer at the edge, and the check compiled from
  // its schema that stands in for zod (before the src/upstream/ rule, which would call it upstream).
  { stage: 'parse', file: own('src/upstream/answer\\.ts') },
  { stage: 'parse', file: own('src/upstream/compiled-check(-rules)?\\.ts') },
  // zod: parses upstream answers (mappings, runners, accounts), except under a parameter schema.
  { stage: 'parse', file: pkg('zod'), inheritFrom: ['parameters'] },
  // The rest of one NerdGraph attempt (undici request, status and error classification).
  { stage: 'upstream call', file: own('src/upstream/') },
  // undici: the keep-alive agent, the HTTP client and its llhttp parser (wasm frames are transparent).
  { stage: 'upstream call', file: pkg('undici') },
  // Reads shared or coalesced before they reach NerdGraph (single flight, cursors, TTL caches).
  { stage: 'upstream call', file: own('src/cache/') },
  // The request's deadline and cancellation signal, which every upstream call runs under.
  { stage: 'upstream call', file: own('src/routes/request-signal\\.ts') },
  // Paging over NerdGraph cursors: which upstream pages a v2 page needs.
  { stage: 'upstream call', file: own('src/routes/(search-pages|cursor-walk)\\.ts') },
  // NRQL and query text built from the request (metric plans, mappings' query builders).
  { stage: 'upstream call', file: own('src/routes/metric-plan\\.ts') },
  { stage: 'upstream call', file: own('mappings/[^/]+/[^/]*-queries\\.ts') },
  // Passthrough's legacy call (a proxy's upstream call).
  { stage: 'upstream call', file: own('src/modes/(passthrough|serve-passthrough|caller-request|direct)\\.ts') },
  // The caller: API key, identity hash, account resolution, refused-key memory, request id.
  { stage: 'key and budgets', file: own('src/caller/') },
  // NerdGraph budgets: admission, fair share, NRQL cost, slot waiters.
  { stage: 'key and budgets', file: own('src/budget/') },
  // State beyond one request, consulted mostly by keys and budgets (identities, key users, refusals).
  { stage: 'key and budgets', file: own('src/state/') },
  // The route's parameter schema and zod inside it (zod inherits this stage).
  { stage: 'parameters', file: own('src/v2/(param-schema|params|form-body|request-body|metric-window|timestamps|control-characters|ids)\\.ts') },
  // A path id to a computed GUID and the account check; a metric route's target from its path.
  { stage: 'parameters', file: own('src/routes/(entity-ref|timeslice-target)\\.ts') },
  // The v2 body written as JSON or XML (fast-xml-parser's builder), the Link header, error bodies.
  { stage: 'render', file: own('src/v2/(format|xml|link|errors)\\.ts') },
  { stage: 'render', file: pkg('fast-xml-parser') },
  { stage: 'render', file: own('src/routes/paging\\.ts') },
  // The mappings turn NerdGraph answers into v2 bodies (their query builders are matched above).
  { stage: 'reshape', file: own('mappings/') },
  // The runners around a mapping's reshape: wrap, file metric answers, v2 timestamps.
  { stage: 'reshape', file: own('src/routes/(entities|entity-show|entity-list|metric-answer|metric-data|metric-names|operations|types)\\.ts') },
  { stage: 'reshape', file: own('src/v2/time\\.ts') },
  // The one match of a request's path, its mode, and the router's dispatch by mapping kind.
  { stage: 'routing', file: own('src/routing/') },
  { stage: 'routing', file: own('src/v2/route-table\\.ts') },
  { stage: 'routing', file: own('src/routes/(resolved-route|v2-router)\\.ts') },
  { stage: 'routing', file: own('src/modes/(mode-resolver|strategies)\\.ts') },
  // Node's HTTP server, @hono/node-server (incoming message -> Request, Response -> socket), Hono.
  { stage: 'HTTP server and framework', file: /^node:(_http_|internal\/http)/ },
  { stage: 'HTTP server and framework', file: /\/node_modules\/(@hono\/node-server|hono)\// },
  // Sockets written after a client left (lingering close).
  { stage: 'HTTP server and framework', file: own('src/v2/lingering-close\\.ts') },
  // Socket, stream and event internals serve both sides (the server and undici): weak, so a
  // client or project frame above them decides; alone they count as the HTTP server's.
  { stage: 'HTTP server and framework', file: /^node:(net|stream|events|internal\/(streams|stream_base_commons|net))\b/, weak: true },
  // The simulated New Relic (in process in tests only): never the gateway's stages.
  { stage: 'other', file: own('sandbox/') },
  // Every other project file (app wiring, compare, bridge, probes, config): its own time is other.
  { stage: 'other', file: own('(src|mappings)/') },
];

/** The profile's pseudo-frames: idle and (program) are not busy, the collector is GC. */
const IDLE_FRAMES = new Set(['(idle)', '(program)']);
const GC_FRAME = '(garbage collector)';

type Frame = CpuProfile['nodes'][number]['callFrame'];

function ruleOf(frame: Frame): StageRule | undefined {
  // Native builtins and V8's pseudo-frames have no script: transparent.
  if (frame.url === '') return undefined;
  return STAGE_RULES.find((rule) => rule.file.test(frame.url) && (rule.fn === undefined || rule.fn.test(frame.functionName)));
}

/** The stage of one stack, leaf first; undefined when the sample is not busy. */
function stageOfStack(stack: readonly Frame[]): Stage | undefined {
  const leaf = stack[0];
  if (leaf !== undefined && IDLE_FRAMES.has(leaf.functionName) && leaf.url === '') return undefined;
  if (leaf !== undefined && leaf.functionName === GC_FRAME && leaf.url === '') return 'GC';
  let weak: Stage | undefined;
  for (let i = 0; i < stack.length; i++) {
    const rule = ruleOf(stack[i]!);
    if (rule === undefined) continue;
    if (rule.weak === true) {
      weak ??= rule.stage;
      continue;
    }
    if (rule.inheritFrom !== undefined) {
      const above = stageAbove(stack, i + 1, rule.file);
      return above !== undefined && rule.inheritFrom.includes(above) ? above : rule.stage;
    }
    return rule.stage;
  }
  return weak ?? 'other';
}

/** The stage of the nearest strong frame from `from` up that is not of the inheriting rule's own file. */
function stageAbove(stack: readonly Frame[], from: number, ownFile: RegExp): Stage | undefined {
  for (let i = from; i < stack.length; i++) {
    const frame = stack[i]!;
    if (ownFile.test(frame.url)) continue;
    const rule = ruleOf(frame);
    if (rule !== undefined && rule.weak !== true) return rule.stage;
  }
  return undefined;
}

/** Each sample's weight: the time until the next sample (the last one: until the profile's end). */
function sampleWeights(profile: CpuProfile): number[] {
  const weights: number[] = [];
  let at = profile.startTime;
  const times = profile.timeDeltas.map((delta) => (at += delta));
  for (let i = 0; i < times.length; i++) {
    const next = i + 1 < times.length ? times[i + 1]! : profile.endTime;
    // Deltas can be slightly negative in V8's profiles; such a sample weighs nothing.
    weights.push(Math.max(0, next - times[i]!));
  }
  return weights;
}

/** Shares of busy time per stage, every stage in STAGES order (0 where none); they sum to 1 (all 0 if nothing was busy). */
export function stageTable(profile: CpuProfile): StageShare[] {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
  const stageOfNode = new Map<number, Stage | undefined>();
  const nodeStage = (id: number): Stage | undefined => {
    if (stageOfNode.has(id)) return stageOfNode.get(id);
    const stack: Frame[] = [];
    for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) {
      const node = byId.get(at);
      if (node !== undefined) stack.push(node.callFrame);
    }
    const stage = stageOfStack(stack);
    stageOfNode.set(id, stage);
    return stage;
  };
  const totals = new Map<Stage, number>(STAGES.map((stage) => [stage, 0]));
  let busy = 0;
  const weights = sampleWeights(profile);
  profile.samples.forEach((id, i) => {
    const stage = nodeStage(id);
    const weight = weights[i] ?? 0;
    if (stage === undefined || weight === 0) return;
    totals.set(stage, totals.get(stage)! + weight);
    busy += weight;
  });
  return STAGES.map((stage) => ({ stage, share: busy === 0 ? 0 : totals.get(stage)! / busy }));
}

function cell(value: number): string {
  if (value >= 100) return value.toFixed(0);
  if (value >= 1) return value.toFixed(1);
  return value.toFixed(3);
}

/** Markdown: one row per scenario, one column per stage, each cell µs per request (share × cpuPerReqUs). */
export function formatStageTables(rows: { scenario: string; cpuPerReqUs: number; stages: StageShare[] }[]): string {
  const header = `| scenario | CPU µs/req | ${STAGES.join(' | ')} |`;
  const rule = `|---|---:|${STAGES.map(() => '---:').join('|')}|`;
  const lines = rows.map((row) => {
    const shares = new Map(row.stages.map((s) => [s.stage, s.share]));
    const cells = STAGES.map((stage) => cell((shares.get(stage) ?? 0) * row.cpuPerReqUs));
    return `| ${row.scenario} | ${cell(row.cpuPerReqUs)} | ${cells.join(' | ')} |`;
  });
  return [header, rule, ...lines].join('\n');
}

/** What a .cpuprofile file must hold (it is read from disk, so checked). */
const CpuProfileFile = z.object({
  nodes: z.array(
    z.object({
      id: z.number(),
      callFrame: z.object({ functionName: z.string(), url: z.string(), lineNumber: z.number() }),
      children: z.array(z.number()).optional(),
    }),
  ),
  samples: z.array(z.number()),
  timeDeltas: z.array(z.number()),
  startTime: z.number(),
  endTime: z.number(),
});

export function readCpuProfile(path: string): CpuProfile {
  return CpuProfileFile.parse(JSON.parse(readFileSync(path, 'utf8')));
}

function main(args: readonly string[]): void {
  const perReqArg = args.find((arg) => arg.startsWith('--cpu-per-req='));
  const cpuPerReqUs = perReqArg === undefined ? 1 : Number(perReqArg.slice('--cpu-per-req='.length));
  if (!Number.isFinite(cpuPerReqUs) || cpuPerReqUs <= 0) throw new Error(`--cpu-per-req must be a positive number, got ${perReqArg}`);
  const files = args.filter((arg) => !arg.startsWith('--'));
  if (files.length === 0) {
    console.error('usage: node bench/stages.ts [--cpu-per-req=N] <file.cpuprofile>...');
    process.exitCode = 2;
    return;
  }
  const rows = files.map((file) => ({ scenario: basename(file), cpuPerReqUs, stages: stageTable(readCpuProfile(file)) }));
  console.log(formatStageTables(rows));
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) main(process.argv.slice(2));
