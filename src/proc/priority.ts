import { setPriority } from 'node:os';

/**
 * In a worker thread: runs it at the lowest priority (nice 19). On Linux a thread's nice value is
 * its own, so the threads that answer requests (this process's and other processes') keep the CPU
 * while it works; where that is not permitted it runs at the process's priority.
 */
export function lowestPriority(): void {
  try {
    setPriority(19);
  } catch {
    // Not permitted here.
  }
}
