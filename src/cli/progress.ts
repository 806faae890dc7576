import type { Writable } from 'node:stream';

// Progress of one phase of work (reading the dataset, building pages). On a terminal: one line
// redrawn in place with a bar, the rate and the time left; elsewhere (a CI log, a pipe): a plain
// line every few seconds. A phase is shown from its first update; its pace is counted from its
// first progress (a build reads and sorts its dataset, and starts its writers, before its first
// page) over its last RATE_WINDOW_MS. The time left is said only once that pace is known and
// steady: measured over ESTIMATE_AFTER_MS and ESTIMATE_SHARE of the work, with the window's two
// halves within STEADY of each other; "estimating…" before. (A build's first pages come while
// its writers start: a time left from them read "about 734h51m" for a build of 90 s.)

const SHOW_AFTER_MS = 1000;
const ESTIMATE_AFTER_MS = 2000;
const ESTIMATE_SHARE = 0.01;
const RATE_WINDOW_MS = 5000;
const SAMPLE_MS = 250;
const STEADY = 2;
export const ESTIMATING = 'estimating…';
const REDRAW_MS = 100;
/** Seconds between lines in a log: CITIES_API_PROGRESS_SECONDS, else 5. */
export function logEverySeconds(env: NodeJS.ProcessEnv = process.env): number {
  const seconds = Number(env.CITIES_API_PROGRESS_SECONDS);
  return Number.isFinite(seconds) && seconds > 0 ? seconds : 5;
}
const BAR_WIDTH = 20;
const MIN_BAR_WIDTH = 5;

export type ProgressStream = Writable & { isTTY?: boolean; columns?: number };

export interface Progress {
  update(done: number, total: number): void;
  end(): void;
}

export interface ProgressOptions {
  /** How amounts are said: pages, or bytes (`12.3 MB`). */
  readonly unit: 'pages' | 'bytes';
  /** Milliseconds between lines when not on a terminal (default: logEverySeconds()). */
  readonly logEvery?: number;
  readonly now?: () => number;
}

/** A phase's progress on `stream`, shown once it has lasted a second. */
export function progressLine(stream: ProgressStream, label: string, options: ProgressOptions): Progress {
  const now = options.now ?? Date.now;
  const every = stream.isTTY ? REDRAW_MS : (options.logEvery ?? logEverySeconds() * 1000);
  let begun: number | undefined;
  const pace = new Pace();
  let drawn = 0;
  let shown = false;
  return {
    update(done, total) {
      const at = now();
      begun ??= at;
      pace.add(at, done);
      if (at - begun < SHOW_AFTER_MS || (shown && at - drawn < every) || done >= total) return;
      drawn = at;
      shown = true;
      const { rate, steady } = pace.now(at, done, total);
      const parts = progressParts(done, total, rate, options.unit, steady);
      if (!stream.isTTY) {
        const left = parts.eta === ESTIMATING ? `time left ${ESTIMATING}` : `about ${parts.eta} left`;
        stream.write(`${label}: ${parts.amount} (${parts.percent}), ${parts.rate}, ${left}\n`);
        return;
      }
      stream.write(`\r${terminalLine(label, done, total, parts, Math.max(20, (stream.columns || 80) - 1))}\x1b[K`);
    },
    end() {
      if (shown && stream.isTTY) stream.write('\r\x1b[K');
    },
  };
}

/**
 * A terminal's line within `width` (wider, it would wrap and \r could no longer redraw it): the bar
 * narrows first, then goes, then the rate, so that the time left is the last words cut.
 */
export function terminalLine(
  label: string,
  done: number,
  total: number,
  parts: ReturnType<typeof progressParts>,
  width: number,
): string {
  const counts = `${parts.percent.padStart(3)} ${parts.amount}`;
  const eta = `ETA ${parts.eta}`;
  const full = `${counts}, ${parts.rate}, ${eta}`;
  const cells = Math.min(BAR_WIDTH, width - label.length - full.length - 4);
  if (cells >= MIN_BAR_WIDTH) return `${label} ${bar(done, total, cells)} ${full}`;
  const line = [`${label} ${full}`, `${label} ${counts}, ${eta}`].find((text) => text.length <= width);
  return (line ?? `${label} ${counts}, ${eta}`).slice(0, width);
}

/** The pace of a phase from its first progress, over its last RATE_WINDOW_MS (samples SAMPLE_MS apart at least). */
class Pace {
  private readonly samples: { at: number; done: number }[] = [];
  private started = false;

  add(at: number, done: number): void {
    const last = this.samples.at(-1);
    if (!this.started && last && done > last.done) this.started = true;
    // Until the work moves, the one sample is the latest: the wait before it is not its pace.
    if (!this.started) this.samples.splice(0, 1, { at, done });
    else if (at - last!.at >= SAMPLE_MS) this.samples.push({ at, done });
    while (this.samples.length > 2 && at - this.samples[1]!.at >= RATE_WINDOW_MS) this.samples.shift();
  }

  /** Units a second over the window, and whether that pace is known well enough to say the time left. */
  now(at: number, done: number, total: number): { rate: number; steady: boolean } {
    const from = this.samples[0] ?? { at, done };
    const rate = perSecond(from, { at, done });
    if (at - from.at < ESTIMATE_AFTER_MS || done - from.done < ESTIMATE_SHARE * total) return { rate, steady: false };
    // The window's older and newer halves, split at the sample nearest its middle.
    const middle = (from.at + at) / 2;
    let split = from;
    for (const sample of this.samples)
      if (Math.abs(sample.at - middle) < Math.abs(split.at - middle) && sample.at < at) split = sample;
    if (split === from) return { rate, steady: true }; // one stretch: nothing to compare it with
    const [older, newer] = [perSecond(from, split), perSecond(split, { at, done })];
    return { rate, steady: older > 0 && newer > 0 && Math.max(older / newer, newer / older) <= STEADY };
  }
}

const perSecond = (a: { at: number; done: number }, b: { at: number; done: number }) =>
  ((b.done - a.done) * 1000) / Math.max(1, b.at - a.at);

/** The words of a progress line: `4158/21020`, `19%`, `1234 pages/s`, `14s` (`estimating…` until the rate is `measured`). */
export function progressParts(
  done: number,
  total: number,
  perSecond: number,
  unit: ProgressOptions['unit'],
  measured = true,
): { amount: string; percent: string; rate: string; eta: string } {
  const amount = unit === 'bytes' ? `${megabytes(done)}/${megabytes(total)} MB` : `${done}/${total} pages`;
  const rate = unit === 'bytes' ? `${megabytes(perSecond)} MB/s` : `${Math.round(perSecond)} pages/s`;
  const eta = measured && perSecond > 0 ? duration((total - done) / perSecond) : ESTIMATING;
  return { amount, percent: `${total ? Math.floor((100 * done) / total) : 100}%`, rate, eta };
}

const megabytes = (bytes: number) => (bytes / 1e6).toFixed(1);

/** Seconds as `45s`, `3m05s` or `1h02m`. */
export function duration(seconds: number): string {
  const s = Math.ceil(seconds);
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor(s / 60) % 60).padStart(2, '0')}m`;
}

/** `[#####---------------]`: done out of total, in `cells` cells (BAR_WIDTH unless the terminal is narrow). */
export function bar(done: number, total: number, cells = BAR_WIDTH): string {
  const full = total ? Math.min(cells, Math.floor((cells * done) / total)) : cells;
  return `[${'#'.repeat(full)}${'-'.repeat(cells - full)}]`;
}

/** A build's two phases on `stream`, as build and serve --data show them: the dataset read (bytes), then pages written. */
export function buildProgress(
  stream: ProgressStream,
  datasetName: string,
): {
  onRead(read: number, bytes: number): void;
  onProgress(done: number, total: number): void;
  /** The dataset is read: its line cleared. */
  readDone(): void;
  /** Both lines cleared. */
  end(): void;
} {
  const reading = progressLine(stream, `reading ${datasetName}`, { unit: 'bytes' });
  const pages = progressLine(stream, 'building pages', { unit: 'pages' });
  return {
    onRead: (read, bytes) => reading.update(read, bytes),
    onProgress: (done, total) => pages.update(done, total),
    readDone: () => reading.end(),
    end() {
      reading.end();
      pages.end();
    },
  };
}
