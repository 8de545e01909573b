/**
 * New Relic key-shaped text (user keys NRAK-, admin keys NRAA-), masked wherever text that
 * did not come from the gateway itself is about to be logged: paths, upstream messages.
 */
const KEY_LIKE = /NRA[AK]-[A-Za-z0-9]+/gi;

export function redactKeys(text: string): string {
  return text.replace(KEY_LIKE, '[redacted]');
}
