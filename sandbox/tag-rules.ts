/**
 * Which entity tags are the user's, and how long a tag may be: the rules the sandbox's
 * tagging mutations (tagging.ts) and its legacy labels (legacy/labels.ts: a v2 label is a
 * user tag, routes-next.md §6) both follow.
 *
 * - Limits: a tag key of at most 128 characters, a value of at most 256 (New Relic's tagging
 *   documentation, "Use tags to help organize and find your data", limits; not recorded in
 *   ../shared/reference, so UNCONFIRMED here).
 * - Keys New Relic sets itself are not the user's (routes-next.md §6: "exclude system tags (e.g.
 *   `account`, `language`, `guid`) by an allow/deny list"): the ones the sandbox's entities carry
 *   (`account`, `language`), the account and agent keys New Relic adds to APM entities
 *   (`accountId`, `trustedAccountId`, `guid`, `agentVersion`), and every `nr.` or `newrelic.`
 *   key (New Relic's own prefixes). Keys are case-sensitive: `Language` is a user's key.
 */
export const MAX_TAG_KEY_LENGTH = 128;
export const MAX_TAG_VALUE_LENGTH = 256;

const NEW_RELIC_KEYS: ReadonlySet<string> = new Set(['account', 'accountId', 'trustedAccountId', 'guid', 'language', 'agentVersion']);

export function isUserTagKey(key: string): boolean {
  return !NEW_RELIC_KEYS.has(key) && !/^(nr|newrelic)\./.test(key);
}
