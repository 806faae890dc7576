import { lowestPriority } from './priority.js';

// The first module of a thread started with `lowest` (workers.ts): the thread is put at the
// lowest priority before the module it runs (the last of its argv) and that module's imports are
// loaded. Loaded after, as a worker's own first line, they ran at the answering threads' priority:
// about 120 ms of CPU for the site-data thread, at every reload. Imports only node:os.

lowestPriority();
await import(process.argv.at(-1)!);
