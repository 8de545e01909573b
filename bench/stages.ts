/**
 * PLACEHOLDER, replaced at merge by the stage-table helper's bench/stages.ts (issue 22, point 3):
 * only the exports bench/run.ts uses, so the branch compiles and runs. It attributes nothing to
 * stages; every busy sample is "unattributed".
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
  share: number /* 0..1 of busy samples */;
}

export function stageTable(profile: CpuProfile): StageShare[] {
  return profile.samples.length > 0 ? [{ stage: 'unattributed', share: 1 }] : [];
}

export function formatStageTables(rows: { scenario: string; cpuPerReqUs: number; stages: StageShare[] }[]): string {
  const lines = ['| scenario | CPU µs/req | stages |', '|---|---:|---|'];
  for (const row of rows) lines.push(`| ${row.scenario} | ${row.cpuPerReqUs.toFixed(0)} | ${row.stages.map((s) => `${s.stage} ${(s.share * 100).toFixed(0)} %`).join(', ')} |`);
  return lines.join('\n');
}
