import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * A full garbage collection now, without starting the test process with --expose-gc: the
 * flag set at run time gives a fresh context its `gc`. For tests of what a collection must
 * not take (a timer's signal, a weakly held cache).
 */
export function collectGarbage(): void {
  setFlagsFromString('--expose-gc');
  const gc = runInNewContext('gc') as () => void;
  gc();
}
