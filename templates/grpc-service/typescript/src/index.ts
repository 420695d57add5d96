/**
 * Serves the gRPC service on HTTP/2 without TLS (what the router dials:
 * `routing_url: dns:///localhost:50051` in router.compose.yaml).
 * Environment: `PORT` (default 50051), `HOST` (default localhost).
 */
import { createServer } from 'node:http2';
import { connectNodeAdapter } from '@connectrpc/connect-node';
import { ProjectStatus } from './gen/service/v1/service_pb.js';
import { ProjectStore, routes } from './service.js';

const port = Number(process.env.PORT ?? 50051);
const host = process.env.HOST ?? 'localhost';

const store = new ProjectStore([
  { name: 'Switchyard', description: 'A federated GraphQL router' },
  { name: 'Playground', status: ProjectStatus.INACTIVE },
]);

const server = createServer(connectNodeAdapter({ routes: routes(store) }));
server.listen(port, host, () => {
  console.log(`gRPC service listening on ${host}:${port}`);
});

for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => server.close(() => process.exit(0)));
}
