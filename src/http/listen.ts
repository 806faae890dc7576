import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { CitiesApiError } from '../core/errors.js';

export interface Listening {
  /** `http://host:port`, where the server listens (IPv6 hosts in brackets). */
  readonly url: string;
  /** Stops accepting, closes every connection, resolves once the server is closed. */
  close(): Promise<void>;
}

/** Listens on `port` (0: any free one) and `host`; a port in use is a clear error. */
export async function listen(server: Server, port: number, host: string): Promise<Listening> {
  await new Promise<void>((resolve, reject) => {
    server.once('error', (error: NodeJS.ErrnoException) => reject(listenError(error, port, host)));
    server.listen(port, host, resolve);
  });
  const address = server.address() as AddressInfo;
  return {
    url: `http://${host.includes(':') ? `[${host}]` : host}:${address.port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** Why the server could not listen, for people: the port taken or forbidden, the host unknown or not this machine's. */
function listenError(error: NodeJS.ErrnoException, port: number, host: string): Error {
  const where = `port ${port} on ${host}`;
  switch (error.code) {
    case 'EADDRINUSE':
      return new CitiesApiError(`${where} is already in use; choose another with --port`);
    case 'EACCES':
      return new CitiesApiError(
        `${where} needs privileges this process lacks (ports below 1024); choose another with --port, e.g. 8080`,
      );
    case 'EADDRNOTAVAIL':
      return new CitiesApiError(
        `cannot listen on ${host}: it is no address of this machine; choose one it has with --host, e.g. 127.0.0.1 or 0.0.0.0 (${error.code})`,
      );
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
    case 'EAI_FAIL':
      return new CitiesApiError(
        `cannot listen on ${host}: no such host name; give an address with --host, e.g. 127.0.0.1 or 0.0.0.0 (${error.code})`,
      );
    default:
      return new CitiesApiError(`cannot listen on ${where}: ${error.message}`);
  }
}
