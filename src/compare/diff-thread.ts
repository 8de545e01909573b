import { parentPort, workerData } from 'node:worker_threads';
import { compareAnswers } from './diff.ts';
import { adoptSecretTagKey } from './secrets.ts';
import type { DiffReply, DiffRequest, DiffThreadData } from './thread-comparer.ts';

/**
 * The diff engine's thread (src/compare/thread-comparer.ts starts it): each request's two or
 * three answers are decoded, masked, diffed and judged here, so a large answer's diff (about
 * 11 ms for a 200-application list on one core) never holds the event loop that serves callers.
 * Its messages come from the gateway's own thread, typed there; nothing here is a caller's input
 * until compareAnswers reads the answers, as it does in-process.
 */
const { thresholds, secretTagKey } = workerData as DiffThreadData;
adoptSecretTagKey(secretTagKey);
const port = parentPort;
if (port === null) throw new Error('diff-thread.ts runs as a worker thread only');

port.on('message', (request: DiffRequest) => {
  let reply: DiffReply;
  try {
    const { legacy, legacyAgain, translated, gapPatterns } = request.input;
    const { outcome, differences, tally } = compareAnswers({ legacy, ...(legacyAgain ? { legacyAgain } : {}), translated, rules: { gapPatterns, thresholds } });
    reply = { id: request.id, ok: true, judgement: { outcome, differences, tally } };
  } catch (error) {
    reply = { id: request.id, ok: false, name: error instanceof Error ? error.name : 'Error', message: error instanceof Error ? error.message : `thrown ${typeof error}` };
  }
  port.postMessage(reply);
});
