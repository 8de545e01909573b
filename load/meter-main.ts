/**
 * Process entry of the load run's NerdGraph meter (load/meter.ts), started by load/replicas.ts:
 * METER_TARGET is the sandbox's /graphql, METER_DELAY_MS an optional hold per call (to stand in
 * for a slower NerdGraph). Prints its URL on one line, as the sandbox does.
 */
import { z } from 'zod';
import { startLoadMeter } from './meter.ts';

const Env = z.object({
  METER_TARGET: z.url({ protocol: /^https?$/ }),
  METER_DELAY_MS: z.coerce.number().int().min(0).max(60_000).default(0),
});
const parsed = Env.safeParse(process.env);
if (!parsed.success) {
  process.stderr.write(`load meter: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}\n`);
  process.exit(1);
}
const meter = await startLoadMeter(parsed.data.METER_TARGET, { delayMs: parsed.data.METER_DELAY_MS });
process.stdout.write(`load meter listening on ${meter.url}\n`);
process.once('SIGTERM', () => {
  meter.server.closeAllConnections();
  meter.server.close(() => process.exit(0));
});
