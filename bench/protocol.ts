/**
 * The IPC protocol between bench/run.ts and its target processes (bench/targets/*.ts).
 * A target sends `ready` once it listens; the parent then sends commands by name and the
 * target answers each with a `reply` carrying the same id.
 */

/** Command name -> the value its reply carries. */
export interface Commands {
  /** process.cpuUsage() user + system, in microseconds, since the process started. */
  cpu: number;
  /**
   * Canned upstream only: stop recording, replay from now on; lists what was captured, with
   * the gateway's request body that recorded each answer (the (d) proxy sends the same bytes).
   */
  freeze: { operation: string; bytes: number; requestBody: string }[];
}
export type Command = keyof Commands;

export type ParentMessage = { type: 'ask'; id: number; command: Command };
export type ChildMessage =
  | { type: 'ready'; port: number }
  | { type: 'reply'; id: number; value?: Commands[Command]; error?: string };
