/**
 * New Relic key-shaped text (user NRAK-, admin NRAA-, ingest NRII-, browser NRJS-, query NRIQ-,
 * and NRSP-/NRAL- keys), masked wherever text that did not come from the gateway itself is
 * about to be logged: paths, upstream messages.
 */
const PREFIXES = 'NR(?:AK|AA|II|JS|IQ|SP|AL)-';
/** A New Relic key prefix anywhere in a text, any case (request-id.ts refuses such ids and Hosts). */
export const KEY_PREFIX = new RegExp(PREFIXES, 'i');
const KEY_LIKE = new RegExp(`${PREFIXES}[A-Za-z0-9]+`, 'gi');

export function redactKeys(text: string): string {
  return text.replace(KEY_LIKE, '[redacted]');
}
