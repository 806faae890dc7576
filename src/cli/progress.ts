import type { Writable } from 'node:stream';

const SHOW_AFTER_MS = 1000;
const REDRAW_MS = 100;

/** A progress line on a terminal, shown only once work has lasted over a second. */
export function progressLine(stream: Writable & { isTTY?: boolean }, label: string): { update(done: number, total: number): void; end(): void } {
  const started = Date.now();
  let drawn = 0;
  let shown = false;
  return {
    update(done, total) {
      const now = Date.now();
      if (!stream.isTTY || now - started < SHOW_AFTER_MS || now - drawn < REDRAW_MS) return;
      drawn = now;
      shown = true;
      const percent = total ? Math.floor((100 * done) / total) : 100;
      stream.write(`\r${label}: ${done}/${total} (${percent}%)\x1b[K`);
    },
    end() {
      if (shown) stream.write('\r\x1b[K');
    },
  };
}
