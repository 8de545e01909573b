import type { Explanation } from './explanation.ts';

const indent = (text: string, by = '    '): string =>
  text
    .trimEnd()
    .split('\n')
    .map((line) => (line === '' ? line : `${by}${line}`))
    .join('\n');

/** An explanation as text for a terminal: documents, variables, NRQL, curl, then the notes. */
export function renderExplanation(e: Explanation): string {
  const out: string[] = [];
  out.push(`${e.method} ${e.request}`);
  out.push(`  route     ${e.method} ${e.route}  (mapping ${e.mapping}, ${e.kind}, fidelity ${e.fidelity})`);
  out.push(`  summary   ${e.summary}`);
  out.push(`  status    ${e.status === null ? 'none (nothing ran)' : `${e.status} as the translation answered`}${e.error ? `: ${e.error}` : ''}`);
  for (const note of e.notes) out.push(`  note      ${note}`);
  out.push('');
  if (e.calls.length === 0) {
    out.push('No NerdGraph call.');
  } else {
    out.push(`NerdGraph calls (${e.calls.length}), each runnable as it is: POST to ${e.graphqlUrl} with your key in the API-Key header.`);
    e.calls.forEach((call, i) => {
      out.push('');
      out.push(`[${i + 1}] ${call.kind} ${call.operation}${call.sent ? '' : '  (recorded, NOT sent: dry run)'}`);
      if (call.note) out.push(`  note: ${call.note}`);
      out.push('  document:', indent(call.query));
      out.push('  variables:', indent(JSON.stringify(call.variables, null, 2)));
      if (call.nrql.length > 0) out.push('  NRQL:', ...call.nrql.map((nrql) => indent(nrql)));
      out.push('  curl:', indent(call.curl));
    });
  }
  const section = (title: string, lines: string[]): void => {
    if (lines.length === 0) return;
    out.push('', `${title}:`, ...lines.map((line) => `  - ${line}`));
  };
  section('Reshape (how each v2 field is built)', e.reshape.map((f) => `${f.field} [${f.fidelity}]: ${f.source}`));
  section('Known gaps', e.knownGaps.map((g) => (g.path ? `${g.path}: ${g.description}` : g.description)));
  section('Assumptions', [...e.assumptions]);
  section('Parameters', e.parameters.map((p) => `${p.name} [${p.fidelity}]: ${p.note}`));
  return `${out.join('\n')}\n`;
}
