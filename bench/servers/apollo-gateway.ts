/**
 * Apollo Gateway (@apollo/gateway with @apollo/server's standalone server)
 * on a supergraph file, with the libraries' defaults: one process, no
 * usage reporting (no APOLLO_KEY), and its own subgraph fetcher.
 *
 * Usage: node apollo-gateway.js --port <n> --supergraph <file>
 */
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { ApolloGateway } from '@apollo/gateway';
import { ApolloServer } from '@apollo/server';
import { startStandaloneServer } from '@apollo/server/standalone';

const { values: args } = parseArgs({ options: { port: { type: 'string' }, supergraph: { type: 'string' } } });
if (!args.supergraph) throw new Error('--supergraph <file> is required');

const gateway = new ApolloGateway({ supergraphSdl: readFileSync(args.supergraph, 'utf8') });
const server = new ApolloServer({ gateway });
await startStandaloneServer(server, { listen: { host: '127.0.0.1', port: Number(args.port) } });
process.once('SIGTERM', () => {
  server.stop().then(
    () => process.exit(0),
    () => process.exit(1),
  );
});
