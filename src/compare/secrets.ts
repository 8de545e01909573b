import { createHmac, randomBytes } from 'node:crypto';

/**
 * Secrets callers send in v2 write bodies (alert channels' `configuration`) and the legacy API
 * echoes back, kept out of everything the comparing modes record: parity records, the report,
 * its pages. Applied to both decoded answers before they are diffed (src/compare/diff.ts), to
 * a candidate write's recorded request body and to dry-run variables (src/modes/serve-candidate.ts, serve-compare.ts),
 * and again by the parity store's record cleaner.
 *
 * A secret becomes `[secret <tag>]`, the tag a keyed hash (a key drawn per process, never kept
 * anywhere, handed to the diff thread it starts, src/compare/thread-comparer.ts): the same
 * secret on both sides still matches and different ones still differ, but the text cannot be
 * read back (and the tag cannot be guessed offline without the key).
 */

/** Alert channel configuration keys that are credentials (the channel mappings never read them back from NerdGraph). */
const SECRET_CONFIGURATION_KEYS: readonly string[] = ['service_key', 'auth_password', 'api_key', 'key'];

/** Keys whose values are secrets inside a `configuration` object: the credentials and what can carry them (webhook headers and payload). */
// Also the credentials of channel types the legacy API may still list (HipChat `auth_token`,
// Campfire `token`, VictorOps `route_key`) and Slack's `url`, a webhook URL that is itself one.
export const RECORD_SECRET_KEYS: ReadonlySet<string> = new Set([...SECRET_CONFIGURATION_KEYS, 'headers', 'payload', 'auth_token', 'token', 'route_key', 'url']);

/** Keys that are secrets wherever they appear (names nothing else in v2 uses). */
const ALWAYS_SECRET: ReadonlySet<string> = new Set(['service_key', 'auth_password', 'api_key']);

/** NerdGraph property keys (`{key, value}` pairs) whose value is a secret: the webhook channel's headers and payload, a destination's URL. */
const SECRET_PROPERTY_KEYS: ReadonlySet<string> = new Set(['headers', 'payload', 'url']);

const PARENT = 'configuration';
let tagKey: Uint8Array = randomBytes(32);
const MAX_DEPTH = 64;

export const SECRET_PREFIX = '[secret';

/** A copy of this process's tag key, for the diff thread it starts. */
export function secretTagKey(): Uint8Array {
  return Uint8Array.from(tagKey);
}

/** In the diff thread: tag with the key of the process that started it, so its tags are that process's. */
export function adoptSecretTagKey(key: Uint8Array): void {
  tagKey = Uint8Array.from(key);
}

/** The mask of one secret value (null and undefined stay as they are: "no secret" is not one). */
export function secretMark(value: unknown): unknown {
  if (value === null || value === undefined) return value;
  if (typeof value === 'string' && value.startsWith(SECRET_PREFIX)) return value;
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return `${SECRET_PREFIX} ${createHmac('sha256', tagKey).update(text ?? '').digest('hex').slice(0, 8)}]`;
}

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

const isSecretKey = (key: string, parent: string | undefined): boolean => {
  const name = key.toLowerCase();
  return ALWAYS_SECRET.has(name) || (parent?.toLowerCase() === PARENT && RECORD_SECRET_KEYS.has(name));
};

/**
 * `value` with every secret masked: values of RECORD_SECRET_KEYS inside a `configuration`
 * object, of ALWAYS_SECRET keys anywhere, and the value of `{key: "headers"|"payload", value}`
 * property pairs. `parentKey` is the key `value` sits under (`configuration` when the value is
 * a configuration object itself). A copy; the input is not changed.
 */
export function maskSecrets<T>(value: T, parentKey?: string, depth = 0): T {
  if (depth > MAX_DEPTH) return value;
  if (Array.isArray(value)) return value.map((item) => maskSecrets(item, parentKey, depth + 1)) as T;
  if (!isRecord(value)) return value;
  const propertyPair = typeof value.key === 'string' && SECRET_PROPERTY_KEYS.has(value.key.toLowerCase()) && Object.hasOwn(value, 'value');
  const masked: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) {
    if (isSecretKey(key, parentKey) || (propertyPair && key === 'value')) masked[key] = secretMark(inner);
    else masked[key] = maskSecrets(inner, key, depth + 1);
  }
  return masked as T;
}

/**
 * Whether a difference path (`channels[id=5].configuration.service_key`, pattern or concrete)
 * points at or inside a secret: its values are then masked whole.
 */
export function isSecretPath(path: string): boolean {
  const keys = path.split(/\.|\[[^\]]*\]/).filter((part) => part !== '');
  return keys.some((key, index) => isSecretKey(key, keys[index - 1]));
}

/**
 * A request target (`/v2/...?query`) with the values of secret parameters masked, e.g.
 * `channel[configuration][service_key]=...` (v2 read write parameters from the query too), for
 * what records keep of the request.
 */
export function maskTargetSecrets(target: string): string {
  const query = target.indexOf('?');
  if (query < 0) return target;
  const pairs = target
    .slice(query + 1)
    .split('&')
    .map((pair) => {
      const eq = pair.indexOf('=');
      if (eq < 0) return pair;
      let name: string;
      try {
        name = decodeURIComponent(pair.slice(0, eq).replace(/\+/g, ' '));
      } catch {
        return pair;
      }
      // `a[b][c]` as the path `a.b.c`, as isSecretPath reads it.
      const path = name.replace(/\[([^\]]*)\]/g, '.$1');
      return isSecretPath(path) ? `${pair.slice(0, eq)}=${encodeURIComponent(String(secretMark(pair.slice(eq + 1))))}` : pair;
    });
  return `${target.slice(0, query)}?${pairs.join('&')}`;
}
