import type { Bytes } from '../core/bytes.js';

// A streamed body's parts let go as soon as a native reader has them, where the platform's server
// hands each part it reads to native code before it reads the next (Deno's: its Rust side keeps a
// reference of its own to the part's bytes, written to the client, then dropped). A part's array
// made for the answer is then detached once the reader has gone past it: its bytes are freed as
// soon as the native side drops them, not when V8 next collects the array, which with V8's
// defaults let 64-94 MB of sent parts pile up on Deno (docs/deno.md). Only a reader the platform
// recognises as its server's own (never a JavaScript reader, a tee, a Response read whole in
// JavaScript: they keep the parts they read) has its parts detached.

/** What a platform tells: whether a body's reader is its server's native one (asked in a pull). */
export type NativeReader = () => boolean;

/** How many pulls look for the native reader before a stream stops looking. */
const LOOKS = 8;

/** Parts handed to a reader, which detaches those it has passed where `native()` recognises it; `owns`: parts made for this answer alone. */
export class HandedParts {
  private readonly held: { readonly n: number; readonly part: Bytes }[] = [];
  private enqueued = 0;
  private looks = LOOKS;
  private recognised = false;

  constructor(
    private readonly native: NativeReader,
    private readonly owns: (part: Bytes) => boolean,
    private readonly letGo: (part: Bytes) => void = detach,
  ) {}

  /**
   * Called first in each pull, `queued` the parts not yet read. The part read last may still be on
   * its way (a pull comes as a read takes a part, before the reader has it): the parts before it
   * are the reader's native side's, and are detached.
   */
  pulled(queued: number): void {
    if (!this.recognised && this.looks > 0) {
      this.looks--;
      this.recognised = this.native();
    }
    if (!this.recognised) return;
    const passed = this.enqueued - queued - 1;
    while (this.held.length > 0 && this.held[0]!.n < passed) this.letGo(this.held.shift()!.part);
  }

  /** A part enqueued: held to be let go only once the native reader is recognised (those before may be another reader's, who read them first). */
  handed(part: Bytes): void {
    if (this.recognised && this.owns(part)) this.held.push({ n: this.enqueued, part });
    this.enqueued++;
  }

  /** The stream ended or was cancelled: its parts are left to the GC. */
  ended(): void {
    this.held.length = 0;
    this.looks = 0;
    this.recognised = false;
  }
}

/** Its bytes let go by JavaScript (a reference held elsewhere keeps them; a runtime without `transfer`, Node 20's V8, keeps them all). */
export function detach(part: Bytes): void {
  const buffer = part.buffer as ArrayBuffer & { detached?: boolean; transfer?: (length: number) => ArrayBuffer };
  if (!buffer.detached) buffer.transfer?.(0);
}
