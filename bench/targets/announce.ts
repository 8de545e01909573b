import type { ChildMessage, Command, Commands, ParentMessage } from '../protocol.ts';

/**
 * Child side of bench/protocol.ts: tells the parent which port this target listens on and
 * answers its commands (`cpu` for every target, others as given).
 */
/** A handler may answer later (the profiler's stop writes a file). */
export type Handlers = { [K in Command]?: (arg?: string) => Commands[K] | Promise<Commands[K]> };

export function announce(port: number, handlers: Handlers = {}): void {
  const send = (message: ChildMessage): void => {
    process.send?.(message);
  };
  const all: Handlers = {
    cpu: () => {
      const usage = process.cpuUsage();
      return usage.user + usage.system;
    },
    ...handlers,
  };
  process.on('message', (raw) => {
    const message = raw as ParentMessage; // the parent is bench/run.ts, which only sends these
    if (message.type !== 'ask') return;
    const handler = all[message.command];
    if (!handler) return send({ type: 'reply', id: message.id, error: `unknown command ${message.command}` });
    Promise.resolve()
      .then((): Commands[Command] | Promise<Commands[Command]> => handler(message.arg))
      .then(
        (value) => send({ type: 'reply', id: message.id, value }),
        (error: unknown) => send({ type: 'reply', id: message.id, error: error instanceof Error ? error.message : String(error) }),
      );
  });
  // The parent went away (even killed with SIGKILL): do not outlive it.
  process.on('disconnect', () => process.exit(0));
  // A normal exit on the parent's SIGTERM, so `--cpu-prof` (BENCH_CPU_PROF_DIR) writes its profile.
  process.on('SIGTERM', () => process.exit(0));
  send({ type: 'ready', port });
}

/** The port a `http://host:port` URL names. */
export function portOf(url: string): number {
  return Number(new URL(url).port);
}
