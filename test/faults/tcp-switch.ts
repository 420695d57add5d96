/**
 * A TCP pass-through to a service that a test can take down and bring back
 * on the same port: `down()` cuts every open connection and stops
 * listening (as a crashed process would leave it), `up()` listens again.
 */
import { connect, createServer, type Server, type Socket } from 'node:net';

export interface TcpSwitch {
  /** The port clients connect to; unchanged by `down()`/`up()`. */
  readonly port: number;
  /** Connections accepted so far. */
  readonly connections: number;
  down(): Promise<void>;
  up(): Promise<void>;
  close(): Promise<void>;
}

/**
 * Starts a pass-through on a free loopback port to `127.0.0.1:<upstream port>`;
 * a function gives the upstream port when it is known only later.
 */
export async function startTcpSwitch(upstreamPort: number | (() => number)): Promise<TcpSwitch> {
  const upstreamOf = typeof upstreamPort === 'number' ? () => upstreamPort : upstreamPort;
  const sockets = new Set<Socket>();
  let accepted = 0;
  let server: Server | undefined;
  const listen = (port: number) =>
    new Promise<number>((resolve, reject) => {
      const next = createServer((client) => {
        accepted++;
        const upstream = connect(upstreamOf(), '127.0.0.1');
        for (const socket of [client, upstream]) {
          socket.setNoDelay(true);
          sockets.add(socket);
          socket.on('close', () => sockets.delete(socket));
          socket.on('error', () => undefined);
        }
        client.on('close', () => upstream.destroy());
        upstream.on('close', () => client.destroy());
        client.pipe(upstream).pipe(client);
      });
      next.once('error', reject);
      next.listen(port, '127.0.0.1', () => {
        server = next;
        const address = next.address();
        resolve(typeof address === 'object' && address ? address.port : port);
      });
    });
  const port = await listen(0);
  const down = async () => {
    const current = server;
    server = undefined;
    for (const socket of sockets) socket.destroy();
    if (current) await new Promise<void>((resolve) => current.close(() => resolve()));
  };
  return {
    port,
    get connections() {
      return accepted;
    },
    down,
    async up() {
      if (!server) await listen(port);
    },
    close: down,
  };
}
