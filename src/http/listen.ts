import type { Server } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { CitiesApiError, optionNamed } from '../core/errors.js';

export interface Listening {
  /** `http://host:port`, where the server listens (IPv6 hosts in brackets). */
  readonly url: string;
  /**
   * Stops accepting and closes each connection once its answers are sent; those still open after
   * `grace` ms (a client that reads nothing, a download too slow to end in time) are cut. Resolves
   * once the server is closed, with the number of connections cut.
   */
  close(grace: number): Promise<number>;
}

/** How often a closing server closes the connections whose answers have ended since. */
const IDLE_CHECK_MS = 50;

/** Listens on `port` (0: any free one) and `host`; a port in use is a clear error. */
export async function listen(server: Server, port: number, host: string): Promise<Listening> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => reject(listenError(error, port, host)));
    server.listen(port, host, resolve);
  });
  const address = server.address() as AddressInfo;
  // Every connection, CONNECT's and upgraded ones too, which node:http's own list no longer holds.
  const open = new Set<Socket>();
  server.on('connection', (socket: Socket) => {
    open.add(socket);
    socket.once('close', () => open.delete(socket));
  });
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`,
    close: (grace) =>
      new Promise<number>((resolve) => {
        let cut = 0;
        const idle = setInterval(() => server.closeIdleConnections(), IDLE_CHECK_MS);
        const deadline = setTimeout(() => {
          cut = open.size;
          for (const socket of open) socket.destroy();
        }, grace);
        server.close(() => {
          clearInterval(idle);
          clearTimeout(deadline);
          resolve(cut);
        });
        server.closeIdleConnections();
      }),
  };
}

/** Why the server could not listen, for people: the port taken or forbidden, the host unknown or not this machine's. */
function listenError(error: NodeJS.ErrnoException, port: number, host: string): Error {
  const where = `port ${port} on ${host}`;
  switch (error.code) {
    case 'EADDRINUSE':
      return new CitiesApiError(`${where} is already in use; choose another with ${optionNamed('port')}`);
    case 'EACCES':
      return new CitiesApiError(
        `${where} needs privileges this process lacks (ports below 1024); choose another with ${optionNamed('port')}, e.g. 8080`,
      );
    case 'EADDRNOTAVAIL':
      return new CitiesApiError(
        `cannot listen on ${host}: it is no address of this machine; choose one it has with ${optionNamed('host')}, e.g. 127.0.0.1 or 0.0.0.0 (${error.code})`,
      );
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_FAIL':
      return new CitiesApiError(
        `cannot listen on ${host}: no such host name; give an address with ${optionNamed('host')}, e.g. 127.0.0.1 or 0.0.0.0 (${error.code})`,
      );
    default:
      return new CitiesApiError(`cannot listen on ${where}: ${error.message}`);
  }
}
