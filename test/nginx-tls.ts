import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { request as httpsRequest } from 'node:https';
import { connect, createServer } from 'node:net';
import { join } from 'node:path';
import { whenReady } from './started-process.js';

// A real nginx run from a directory of its own (prefix), on loopback ports, with one included
// site configuration.

/** Writes prefix/nginx.conf: a minimal main configuration whose http {} includes siteConfig; returns the prefix. */
export async function writeNginxConf(prefix: string, siteConfig: string): Promise<string> {
  await mkdir(join(prefix, 'logs'), { recursive: true });
  await writeFile(join(prefix, 'site.conf'), siteConfig);
  await writeFile(
    join(prefix, 'nginx.conf'),
    [
      'user root;',
      'worker_processes 1;',
      'daemon off;',
      `pid ${prefix}/nginx.pid;`,
      `error_log ${prefix}/logs/error.log warn;`,
      'events { worker_connections 64; }',
      `http { access_log off; client_body_temp_path ${prefix}/body; proxy_temp_path ${prefix}/proxy;`,
      `  fastcgi_temp_path ${prefix}/fastcgi; uwsgi_temp_path ${prefix}/uwsgi; scgi_temp_path ${prefix}/scgi;`,
      `  include ${prefix}/site.conf; }`,
      '',
    ].join('\n'),
  );
  return prefix;
}

export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer().listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** nginx run from `prefix` (its nginx.conf), once it accepts connections on `port`: fails at once, with its error log, if it exits first. */
export async function startNginx(nginx: string, prefix: string, port: number): Promise<{ stop: () => Promise<void> }> {
  const child = spawn(nginx, ['-p', prefix, '-c', join(prefix, 'nginx.conf')], { stdio: 'ignore' });
  const up = () =>
    new Promise<true | undefined>((resolve) => {
      const socket = connect(port, '127.0.0.1', () => resolve(socket.end() && true));
      socket.on('error', () => resolve(undefined));
    });
  const stop = () =>
    new Promise<void>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) return resolve();
      child.once('exit', () => resolve());
      child.kill('SIGQUIT');
    });
  const errorLog = () => {
    try {
      return readFileSync(join(prefix, 'logs/error.log'), 'utf8');
    } catch {
      return '';
    }
  };
  await whenReady({ child, name: `nginx (${prefix})`, output: errorLog, stop }, up, 50);
  return { stop };
}

/** A GET over TLS to a server with a self-signed certificate for example.org. */
export function httpsGet(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      url,
      { servername: 'example.org', headers: { Host: 'example.org' }, rejectUnauthorized: false },
      (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (d) => (body += d));
        res.on('end', () => resolve({ status: res.statusCode!, body }));
      },
    );
    req.on('error', reject);
    req.end();
  });
}
