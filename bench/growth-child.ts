import { z } from 'zod';
import { startCountingSandbox } from './growth-sandbox.ts';

/**
 * A counting sandbox in a process of its own (bench/growth.ts), so the gateway's CPU time is
 * measured without the sandbox's. The world comes as JSON in argv; the origin goes back over IPC.
 */
const World = z.object({ apmApps: z.number().int().nonnegative(), size: z.object({ fleetExtraHosts: z.number().optional(), primaryAlertSlots: z.number().optional() }).optional() });

const world = World.parse(JSON.parse(process.argv[2] ?? '{}'));
const sandbox = await startCountingSandbox(world);
process.send?.({ origin: sandbox.origin });
process.on('disconnect', () => void sandbox.close().then(() => process.exit(0)));
