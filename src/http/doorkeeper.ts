// Which keys were seen once already: a cache or memo keeps a thing the second time it comes, so
// that one asked once (a crawler's query, a client's unique parameter) never fills it, churns it
// or leaves garbage in V8's old space.

/** Slots of the table of keys seen once (a power of two): 32 KiB, whatever the keys. */
export const DOORKEEPER_SLOTS = 8192;

/**
 * Keys seen once, as 32-bit fingerprints in a table of DOORKEEPER_SLOTS slots: a key's slot holds
 * its fingerprint until it comes again (then it is cleared) or another key of that slot comes.
 * No key is held: a flood of keys asked once leaves nothing for the garbage collector. Two keys
 * sharing a fingerprint only make one of them kept at its first time (an answer or decision kept
 * early: never another's).
 */
export class Doorkeeper {
  private readonly slots = new Uint32Array(DOORKEEPER_SLOTS);

  /** Whether `key` was seen once before (it is then forgotten); else it is remembered as seen. */
  again(key: string): boolean {
    const print = fingerprint(key);
    const slot = print & (DOORKEEPER_SLOTS - 1);
    if (this.slots[slot] === print) {
      this.slots[slot] = 0;
      return true;
    }
    this.slots[slot] = print;
    return false;
  }

  clear(): void {
    this.slots.fill(0);
  }
}

/** FNV-1a over the UTF-16 code units two at a time (every new request's target is read here), never 0 (an empty slot). */
function fingerprint(key: string): number {
  let h = 0x811c9dc5 ^ key.length;
  let i = 1;
  for (; i < key.length; i += 2) h = Math.imul(h ^ (key.charCodeAt(i - 1) | (key.charCodeAt(i) << 16)), 0x01000193);
  if (i === key.length) h = Math.imul(h ^ key.charCodeAt(i - 1), 0x01000193);
  h ^= h >>> 15;
  return h >>> 0 || 1;
}
