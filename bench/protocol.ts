/**
 * The IPC protocol between bench/run.ts and its target processes (bench/targets/*.ts).
 * A target sends `ready` once it listens; the parent then sends commands by name and the
 * target answers each with a `reply` carrying the same id.
 */

/** One request the canned upstream received, with the operation it named. */
export interface SeenRequest {
  operation: string;
  /** The replay key: the operation and its variables less the deadline-dependent ones. */
  key: string;
  requestBody: string;
}

/** Command name -> the value its reply carries. */
export interface Commands {
  /** process.cpuUsage() user + system, in microseconds, since the process started. */
  cpu: number;
  /**
   * Canned upstreams only: stop recording, replay from now on; per operation (per method and
   * path for the legacy one), how many answers were captured and their bytes in all.
   */
  freeze: { operation: string; answers: number; bytes: number }[];
  /** Canned upstream only: every request received since the last `drain` under the API key given as the argument (capture phase). */
  drain: SeenRequest[];
  /** Gateway with BENCH_STAGES=1 only: start the V8 CPU profiler. */
  profileStart: true;
  /** Gateway with BENCH_STAGES=1 only: stop it; the path of the .cpuprofile written to os.tmpdir(). */
  profileStop: string;
}
export type Command = keyof Commands;

export type ParentMessage = { type: 'ask'; id: number; command: Command; arg?: string };
export type ChildMessage =
  | { type: 'ready'; port: number }
  | { type: 'reply'; id: number; value?: Commands[Command]; error?: string };
