/**
 * The ceiling: a node:http server that reads each request body and answers
 * with the expected response bytes, fetching nothing. No router on this
 * machine can be faster; it also shows what the load generator can drive.
 *
 * Usage: node ceiling.js --port <n> --response <file>
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import { parseArgs } from 'node:util';

const { values: args } = parseArgs({ options: { port: { type: 'string' }, response: { type: 'string' } } });
if (!args.response) throw new Error('--response <file> is required');
const bytes = readFileSync(args.response);

const server = createServer((request, response) => {
  request.resume();
  request.on('end', () => {
    response.writeHead(200, { 'content-type': 'application/json', 'content-length': bytes.length });
    response.end(bytes);
  });
});
server.keepAliveTimeout = 120_000;
server.listen(Number(args.port), '127.0.0.1');
process.once('SIGTERM', () => server.close(() => process.exit(0)));
