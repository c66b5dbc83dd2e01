/**
 * FNV-1a (32-bit) over the UTF-16 code units of `text`. Unsigned. The label hash of the seeded generators' `fork` and
 * `derive`, and the first half of `hashString`.
 */
export function fnv1a(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/** murmur3's 32-bit finalizer: every input bit moves every output bit, so nearby inputs land far apart. Unsigned. */
export function fmix32(value: number): number {
  let h = value;
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** FNV-1a, then murmur3's finalizer. Unsigned 32-bit. */
export function hashString(text: string): number {
  return fmix32(fnv1a(text));
}

/** Hash of several parts; the separator keeps ("ab", "c") and ("a", "bc") apart. */
export function hashParts(...parts: ReadonlyArray<string | number>): number {
  return hashString(parts.map(String).join('\u0001'));
}

/** A hash mapped to [0, 1): `hashFraction(label, key) < share` holds out `share` of all keys, whatever their order. */
export function hashFraction(...parts: ReadonlyArray<string | number>): number {
  return hashParts(...parts) / 4294967296;
}
