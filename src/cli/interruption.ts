/**
 * Ctrl-C (SIGINT) or SIGTERM while a site is built (build, or serve --data before it serves): the
 * first aborts the build (which removes what it wrote), the next one is left to Node's default,
 * which ends the process at once.
 */
export function interruption(onInterrupt: () => void): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const signals = ['SIGINT', 'SIGTERM'] as const;
  const handle = () => {
    dispose();
    onInterrupt();
    controller.abort();
  };
  const dispose = () => {
    for (const name of signals) process.off(name, handle);
  };
  for (const name of signals) process.on(name, handle);
  return { signal: controller.signal, dispose };
}
