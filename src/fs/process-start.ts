// A lock or a draft of this process's pid that no holder here knows of (lock-tokens.ts) was
// written by a dead process whose pid this one reuses, or by a holder in this process that keeps
// a table of its own (in a thread started by one that had not loaded cities-api). Its mtime
// tells which: a dead process wrote it before this process started, a holder here since.
// Mistaken one way, a live holder's lock is taken over or its draft removed; the other way, a dead
// process's lock is waited for and refused here (naming the file to delete; a process of another
// pid takes it over) and its draft left for the next process. So every doubt counts as "since".

/**
 * How much earlier than this process's start a file must have been written (ms): file systems
 * that keep times in whole seconds round them down (ext3, HFS+) or to 2 s (FAT), a file server's
 * clock (NFS) runs a little behind this machine's, the kernel stamps files from a clock a tick behind.
 */
const MARGIN = 2000;

/** When this process started, by the wall clock now (process.uptime() is the process's, in every thread). */
const startNow = () => Date.now() - process.uptime() * 1000;
let start = startNow();

/**
 * Whether a file was last written (its mtime) before this process started, by the clock: a dead
 * process's, never one a holder in this process wrote. (A lock is written once, as it is made; a
 * rename or a link keeps its mtime.) The earliest start this thread has read: a clock stepped back
 * since moves it back, so the files written after the step are "since" still. What it cannot
 * tell: a clock stepped forward by more than the process's age at a holder's write, after it and
 * before this thread's first reading; a live holder's file whose mtime was set back by hand (touch
 * -d). Either makes that file look a dead process's. (Its ctime would resist touch -d, but a mere
 * rename moves it, as taking a dead taker's file aside does: lock-file.ts.)
 */
export function writtenBeforeStart({ mtimeMs }: { readonly mtimeMs: number }): boolean {
  start = Math.min(start, startNow());
  return mtimeMs < start - MARGIN;
}
