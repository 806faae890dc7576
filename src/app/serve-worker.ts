import { CreateRefused } from '../post/city-store.js';
import { parentChannel } from '../proc/workers.js';
import type { ServerProtocol } from './server-pool.js';
import { SiteServer } from './site-server.js';

// One worker of `serve --workers N` (a node:cluster child, started by server-pool.ts): a
// SiteServer answering requests from the site its primary builds, handing POSTed cities to the
// primary (the one writer), and stopping using or reloading the site's files when told to.

const primary = parentChannel<ServerProtocol>([CreateRefused]);
let server: SiteServer | undefined;
let writable = false;
let release: (() => void) | undefined;
let replaced: Promise<void> | undefined;

primary.handle('setup', async (setup) => {
  writable = setup.writable;
  server = await SiteServer.start({
    ...setup,
    requestLog: setup.requestLog ? (line) => primary.emit('request', line) : undefined,
    log: (line) => primary.emit('log', line),
  });
  return server.url;
});
primary.handle('open', (baseUrl) =>
  server!.open(baseUrl, writable ? { create: (city) => primary.call('create', city) } : undefined),
);
primary.handle(
  'replace',
  () =>
    new Promise<void>((ready) => {
      replaced = server!.replace(() => new Promise<void>((resolve) => ((release = resolve), ready())));
    }),
);
primary.handle('replaced', async () => {
  release?.();
  await replaced;
  [release, replaced] = [undefined, undefined];
});
primary.handle('add', async (cities) => server!.addCities(cities));
primary.on('close', async () => {
  await server?.close().catch(() => undefined);
  primary.close();
});
