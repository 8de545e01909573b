/**
 * New Relic key-shaped text (user NRAK-, admin NRAA-, ingest NRII-, browser NRJS-, query NRIQ-,
 * and NRSP-/NRAL- keys), masked wherever text that did not come from the gateway itself is
 * about to be logged: paths, upstream messages.
 */
const KEY_LIKE = /NR(?:AK|AA|II|JS|IQ|SP|AL)-[A-Za-z0-9]+/gi;

export function redactKeys(text: string): string {
  return text.replace(KEY_LIKE, '[redacted]');
}
