import { createSandbox } from '../../sandbox/server.ts';
import { PRIMARY_ACCOUNT, defaultApiKeys } from '../../sandbox/world/accounts.ts';
import { announce, portOf } from './announce.ts';
import { CAPTURE_KEYS } from '../capture-keys.ts';

/**
 * Target: the embedded sandbox (NerdGraph-compatible /graphql), sized by SANDBOX_APM_APPS. Its
 * keys are the default ones plus the capture lanes' (bench/capture.ts), each a primary-account
 * key of its own user, so the lanes see what the demo key sees.
 */
const apiKeys = defaultApiKeys();
for (const key of CAPTURE_KEYS) apiKeys.set(key, [PRIMARY_ACCOUNT.id]);
const sandbox = createSandbox({ apmApps: Number(process.env.SANDBOX_APM_APPS ?? 500), apiKeys });
const running = await sandbox.listen(0, '127.0.0.1');
announce(portOf(running.url));
