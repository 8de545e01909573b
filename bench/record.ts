import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/**
 * BENCH_RECORD=1: the run's whole Markdown output appended to docs/performance.md under
 * "## History" (created at the end when missing), under a heading with the date; the output's
 * own headings move down three levels so they nest under it. The README gets no bench output.
 */
const PERFORMANCE_DOC = fileURLToPath(new URL('../docs/performance.md', import.meta.url));
const HISTORY = '## History';

export function recordRun(markdown: string, file = PERFORMANCE_DOC): void {
  const text = readFileSync(file, 'utf8');
  const nested = markdown
    .trim()
    .split('\n')
    .map((line) => (/^#{1,3} /.test(line) ? `###${line}` : line))
    .join('\n');
  const entry = `### ${new Date().toISOString().slice(0, 16).replace('T', ' ')} UTC: \`npm run bench\`\n\n${nested}\n`;
  const at = text.search(/^## History\s*$/m);
  if (at === -1) {
    writeFileSync(file, `${text.trimEnd()}\n\n${HISTORY}\n\n${entry}`);
    return;
  }
  // The end of the History section: the next level-2 heading after it, or the end of the file.
  const after = at + HISTORY.length;
  const next = text.slice(after).search(/^## /m);
  const end = next === -1 ? text.length : after + next;
  writeFileSync(file, `${text.slice(0, end).trimEnd()}\n\n${entry}${next === -1 ? '' : `\n${text.slice(end)}`}`);
}
