import { createSandbox } from '../../sandbox/server.ts';
import { announce, portOf } from './announce.ts';

/** Target: the embedded sandbox (NerdGraph-compatible /graphql), sized by SANDBOX_APM_APPS. */
const sandbox = createSandbox({ apmApps: Number(process.env.SANDBOX_APM_APPS ?? 500) });
const running = await sandbox.listen(0, '127.0.0.1');
announce(portOf(running.url));
