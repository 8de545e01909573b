import { AsyncLocalStorage } from 'node:async_hooks';
import type { NerdGraph, UpstreamCall } from './client.ts';
import type { RecordingClient } from './recording-client.ts';

/**
 * A recorded run: one shadow request the gateway translates for itself (`/bridge/explain`, the
 * dry run of a compared write; src/routes/shadow-translation.ts) with a RecordingClient in place
 * of its NerdGraph client, so its calls are written down and its mutations held back. Nothing is
 * built for it: the app's
 * client (recordableClient, built once in src/app.ts) sends the calls made inside a run to the
 * run's recorder, found through AsyncLocalStorage.
 *
 * A run is cold: the route caches (CoalescingCache, the list and metric-data flights, page
 * cursors, metric-data answers) neither answer it nor learn from it. So it shows every call a
 * gateway that has seen nothing yet makes, and a run that stops at a held-back mutation never
 * leaves a half-read answer where callers read. The key's accounts are the exception: the run
 * is made for a caller already verified, and its lookup is not repeated.
 */
export interface RecordedRun {
  recorder: RecordingClient;
}

const runs = new AsyncLocalStorage<RecordedRun>();

export function runRecorded<T>(run: RecordedRun, work: () => Promise<T>): Promise<T> {
  return runs.run(run, work);
}

/** The run the current code serves, if any. */
export function recordedRun(): RecordedRun | undefined {
  return runs.getStore();
}

export function inRecordedRun(): boolean {
  return runs.getStore() !== undefined;
}

/**
 * The app's NerdGraph client: `real`, except inside a recorded run, whose recorder gets the
 * call (the recorder passes queries on to `real` itself). Inside a run the read micro-cache's
 * window is not offered, so nothing is kept beside it from a run.
 */
export function recordableClient(real: NerdGraph): NerdGraph {
  const client: NerdGraph = {
    call<T = unknown>(call: UpstreamCall): Promise<T> {
      const run = runs.getStore();
      return run === undefined ? real.call<T>(call) : run.recorder.call<T>(call);
    },
  };
  const { readWindow, freshReadWindow } = real;
  if (readWindow) client.readWindow = () => (runs.getStore() === undefined ? readWindow.call(real) : undefined);
  if (freshReadWindow) client.freshReadWindow = async () => (runs.getStore() === undefined ? freshReadWindow.call(real) : undefined);
  return client;
}
