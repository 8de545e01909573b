/**
 * The capture phase's lanes (bench/capture.ts): each sends its requests one at a time under a
 * key of its own, so the canned upstream can hand each lane the bodies of its own request alone,
 * and the lanes run side by side. The bench sandbox accepts them as primary-account keys.
 */
export const CAPTURE_LANES = 6;
export const CAPTURE_KEYS: readonly string[] = Array.from({ length: CAPTURE_LANES }, (_, lane) => `NRAK-BENCH-CAPTURE-${lane + 1}`);
