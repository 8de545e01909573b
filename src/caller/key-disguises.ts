import { KEY_PREFIX } from '../ops/redact.ts';

/**
 * Does a header value carry a key, in plain sight or disguised? What the gateway echoes and logs
 * (X-Request-Id), reflects (Host) or sends on to the legacy API (passthrough's request headers)
 * must not, and a key pasted into a header is not always pasted raw: clients base64 it, hex it
 * or percent-encode it on the way.
 *
 * The caller's own key (the X-Api-Key or Api-Key value) is found as any run of PLAIN_RUN of its
 * characters, in any case, anywhere in the value or in what the value decodes to. Decoded are
 * (nested up to MAX_DEPTH rounds: base64 of hex, `%254E` to `%4E` to `N`):
 * - percent-encoding, anywhere in the value;
 * - every run of base64 or base64url characters (padded or not), from each of the four offsets
 *   in a base64 group, so also an encoding glued to other text (`req-` + base64);
 * - every run of hex digits (either case), from both offsets.
 * So the key or any 8 of its consecutive characters, in its own, lower or upper case, is found in
 * any of these encodings, alone or inside a longer value. Any New Relic key (a key prefix, a
 * license key's NRAL suffix) is found plain or decoded too.
 *
 * Honest values (UUIDs, trace ids, ULIDs, user agents, ETags) decode to noise, which holds a
 * given run of 8 key characters only by a chance of about 2^-50 per position.
 */
const PLAIN_RUN = 8;
/** The shortest runs worth decoding: what encodes PLAIN_RUN characters. */
const BASE64_RUN = 11;
const HEX_RUN = 16;
/** Decoding rounds: an encoding of an encoding of an encoding. */
const MAX_DEPTH = 3;
/** Decoded forms looked at per value, and their characters in all: bound the work a crafted header can cause. */
const MAX_FORMS = 64;
const MAX_DECODED_CHARS = 32 * 1024;

/**
 * New-style license keys end in NRAL (36 hex + NRAL). Exactly 20 hex, not 20 or more: the same
 * texts match (any longer run ends in 20), and a long run of hex without NRAL is not tried from
 * every position to its end (quadratic: one 15 KB header cost a second of the event loop).
 */
export const LICENSE_SUFFIX = /[0-9a-f]{20}NRAL/i;

const NOT_BASE64 = /[^A-Za-z0-9+/_-]+/;
const NOT_HEX = /[^0-9a-fA-F]+/;
const PERCENT = /%[0-9a-fA-F]{2}/;

/** The runs a key leaves in text: lower-cased, as the text is compared lower-cased. */
interface KeyRuns {
  /** The whole key, when it is shorter than a run. */
  short: string | undefined;
  runs: ReadonlySet<string>;
}

function keyRunsOf(key: string): KeyRuns {
  const lower = key.toLowerCase();
  const runs = new Set<string>();
  for (let at = 0; at + PLAIN_RUN <= lower.length; at++) runs.add(lower.slice(at, at + PLAIN_RUN));
  return { short: lower.length < PLAIN_RUN ? lower : undefined, runs };
}

function carries(form: string, key: KeyRuns): boolean {
  const lower = form.toLowerCase();
  if (key.short !== undefined) return lower.includes(key.short);
  for (let at = 0; at + PLAIN_RUN <= lower.length; at++) if (key.runs.has(lower.slice(at, at + PLAIN_RUN))) return true;
  return false;
}

/** What one round of decoding makes of a form: percent-decoded, and each base64 and hex run decoded. */
function decodingsOf(form: string): string[] {
  const out: string[] = [];
  if (PERCENT.test(form)) out.push(form.replace(/%([0-9a-fA-F]{2})/g, (_whole, hex: string) => String.fromCharCode(parseInt(hex, 16))));
  for (const run of form.split(NOT_BASE64)) {
    if (run.length < BASE64_RUN) continue;
    // From each offset in a group of four: the run may start with characters that are not the encoding's.
    for (let skip = 0; skip < 4 && run.length - skip >= BASE64_RUN; skip++) out.push(Buffer.from(run.slice(skip), 'base64').toString('latin1'));
  }
  for (const run of form.split(NOT_HEX)) {
    for (let skip = 0; skip < 2 && run.length - skip >= HEX_RUN; skip++) out.push(Buffer.from(run.slice(skip), 'hex').toString('latin1'));
  }
  return out;
}

/**
 * The value and what it decodes to, nested up to MAX_DEPTH rounds, at most MAX_FORMS in all;
 * undefined when a bound was reached before every form was looked at (the value is then not
 * known to be free of a key).
 */
function decodedForms(value: string): string[] | undefined {
  const forms = [value];
  const seen = new Set(forms);
  let decodedChars = 0;
  let round = [value];
  for (let depth = 0; depth < MAX_DEPTH && round.length > 0; depth++) {
    const next: string[] = [];
    for (const form of round) {
      for (const decoded of decodingsOf(form)) {
        if (forms.length >= MAX_FORMS || decodedChars + decoded.length > MAX_DECODED_CHARS) return undefined;
        if (decoded.length === 0 || seen.has(decoded)) continue;
        decodedChars += decoded.length;
        seen.add(decoded);
        forms.push(decoded);
        next.push(decoded);
      }
    }
    round = next;
  }
  return forms;
}

/** A New Relic key shape (prefix or license suffix) in the text as it is. */
export function hasKeyShape(text: string): boolean {
  return KEY_PREFIX.test(text) || LICENSE_SUFFIX.test(text);
}

/**
 * A test for values: true when one carries the caller's key (any of `callerKeys`) or a New Relic
 * key, plain or disguised. Built once per request: the key's runs are computed here.
 */
export function keyFinder(callerKeys: readonly string[]): (value: string) => boolean {
  const keys = callerKeys.filter((key) => key.length > 0).map(keyRunsOf);
  return (value) => {
    const forms = decodedForms(value);
    // Too much to decode in full: counted as carrying a key (dropped, replaced), never let through unread.
    if (forms === undefined) return true;
    return forms.some((form) => hasKeyShape(form) || keys.some((runs) => carries(form, runs)));
  };
}

/**
 * The same test without decoding: the value as it is carries a New Relic key shape or a run of
 * a caller's key. For values of one alphabet whose only disguise is decoded by the caller (the
 * hex ids of a traceparent, src/caller/trace-context.ts).
 */
export function plainKeyFinder(callerKeys: readonly string[]): (value: string) => boolean {
  const keys = callerKeys.filter((key) => key.length > 0).map(keyRunsOf);
  return (value) => hasKeyShape(value) || keys.some((runs) => carries(value, runs));
}
