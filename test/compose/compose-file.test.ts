import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseComposeFile } from '../../src/compose/index.js';
import { RouterError } from '../../src/kernel/errors.js';

const FILE = '/project/graph/router.compose.yaml';

/** The message lines of the CONFIG_INVALID error `text` causes. */
function problems(text: string): string[] {
  try {
    parseComposeFile(text, FILE);
  } catch (error) {
    expect(error).toBeInstanceOf(RouterError);
    expect((error as RouterError).code).toBe('CONFIG_INVALID');
    return (error as RouterError).message.split('\n');
  }
  throw new Error('expected the compose file to be refused');
}

describe('parseComposeFile', () => {
  it('reads schema, introspection and grpc subgraphs, resolving paths against the compose file folder', () => {
    const file = parseComposeFile(
      `
version: 1
subgraphs:
  - name: accounts
    routing_url: http://127.0.0.1:4001/graphql
    schema:
      file: ./schemas/accounts.graphql
  - name: reviews
    routing_url: http://127.0.0.1:4002/graphql
    introspection:
      url: http://127.0.0.1:4002/admin/graphql
      headers:
        Authorization: Bearer secret
  - name: products
    routing_url: localhost:50051
    grpc:
      schema_file: ../products/schema.graphql
      proto_file: ../products/generated/service.proto
      mapping_file: /abs/mapping.json
`,
      FILE,
    );
    expect(file).toEqual({
      path: FILE,
      subgraphs: [
        { kind: 'schema', name: 'accounts', routingUrl: 'http://127.0.0.1:4001/graphql', schemaFile: '/project/graph/schemas/accounts.graphql' },
        {
          kind: 'introspection',
          name: 'reviews',
          routingUrl: 'http://127.0.0.1:4002/graphql',
          introspectionUrl: 'http://127.0.0.1:4002/admin/graphql',
          headers: { Authorization: 'Bearer secret' },
        },
        {
          kind: 'grpc',
          name: 'products',
          routingUrl: 'localhost:50051',
          schemaFile: '/project/products/schema.graphql',
          protoFile: '/project/products/generated/service.proto',
          mappingFile: '/abs/mapping.json',
        },
      ],
    });
  });

  it('introspects the routing URL when a subgraph names no schema source, as Cosmo does', () => {
    const file = parseComposeFile('version: 1\nsubgraphs:\n  - name: a\n    routing_url: http://127.0.0.1:4001/graphql\n', FILE);
    expect(file.subgraphs[0]).toEqual({
      kind: 'introspection',
      name: 'a',
      routingUrl: 'http://127.0.0.1:4001/graphql',
      introspectionUrl: 'http://127.0.0.1:4001/graphql',
      headers: {},
    });
  });

  it('resolves relative paths against the folder of a relative compose file path', () => {
    const file = parseComposeFile('version: "1"\nsubgraphs:\n  - {name: a, routing_url: "http://x/graphql", schema: {file: a.graphql}}\n', 'graph/router.compose.yaml');
    expect(file.subgraphs[0]).toMatchObject({ schemaFile: join(process.cwd(), 'graph', 'a.graphql') });
  });

  it('names an unknown key with its path and the subgraph', () => {
    expect(problems('version: 1\nsubgraphs:\n  - name: accounts\n    routing_url: http://x/graphql\n    schema: {file: a.graphql}\n    routing: oops\n')).toEqual([
      `${FILE}: subgraphs[0] ("accounts").routing: unknown key`,
    ]);
  });

  it('explains Cosmo-only keys instead of calling them unknown', () => {
    const lines = problems('version: 1\nsubgraphs:\n  - name: a\n    routing_url: http://x/graphql\n    feature_flags: []\n');
    expect(lines).toEqual([`${FILE}: subgraphs[0] ("a").feature_flags: not supported: feature flags are not supported by Switchyard yet`]);
  });

  it('reads the subscription section, the URL defaulting to routing_url', () => {
    const file = parseComposeFile(
      [
        'version: 1',
        'subgraphs:',
        '  - name: a',
        '    routing_url: http://x/graphql',
        '    schema: {file: a.graphql}',
        '    subscription: {url: ws://x/ws, protocol: ws, websocket_subprotocol: graphql-transport-ws}',
        '  - name: b',
        '    routing_url: http://y/graphql',
        '    schema: {file: b.graphql}',
        '    subscription: {protocol: sse}',
        '  - name: c',
        '    routing_url: http://z/graphql',
        '    schema: {file: c.graphql}',
        '',
      ].join('\n'),
      FILE,
    );
    expect(file.subgraphs.map((s) => s.subscription)).toEqual([
      { url: 'ws://x/ws', protocol: 'ws', websocketSubprotocol: 'graphql-transport-ws' },
      { url: 'http://y/graphql', protocol: 'sse', websocketSubprotocol: 'auto' },
      undefined,
    ]);
  });

  it('refuses a bad subscription section', () => {
    expect(problems('version: 1\nsubgraphs:\n  - name: a\n    routing_url: http://x/graphql\n    subscription: {protocol: carrier-pigeon}\n')).toEqual([
      `${FILE}: subgraphs[0] ("a").subscription.protocol: Invalid option: expected one of "ws"|"sse"|"sse_post"`,
    ]);
    expect(problems('version: 1\nsubgraphs:\n  - name: a\n    routing_url: http://x/graphql\n    subscription: {url: ftp://x}\n')).toEqual([
      `${FILE}: subgraphs[0] ("a").subscription.url: must be a ws(s) or http(s) URL`,
    ]);
  });

  it('reports a missing routing_url', () => {
    expect(problems('version: 1\nsubgraphs:\n  - name: accounts\n    schema: {file: a.graphql}\n')).toEqual([`${FILE}: subgraphs[0] ("accounts").routing_url: required (string)`]);
  });

  it('refuses a subgraph with both schema and introspection', () => {
    expect(
      problems('version: 1\nsubgraphs:\n  - name: accounts\n    routing_url: http://x/graphql\n    schema: {file: a.graphql}\n    introspection: {url: http://x/graphql}\n'),
    ).toEqual([`${FILE}: subgraphs[0] ("accounts"): set only one of schema, introspection or grpc (found schema and introspection)`]);
  });

  it('refuses a routing_url that is not an http(s) URL', () => {
    expect(problems('version: 1\nsubgraphs:\n  - {name: a, routing_url: "localhost:4001", schema: {file: a.graphql}}\n')).toEqual([
      `${FILE}: subgraphs[0] ("a").routing_url: must be an http(s) URL, e.g. http://localhost:4001/graphql`,
    ]);
  });

  it('refuses duplicate subgraph names', () => {
    const lines = problems(
      'version: 1\nsubgraphs:\n  - {name: a, routing_url: "http://x/graphql", schema: {file: a.graphql}}\n  - {name: a, routing_url: "http://y/graphql", schema: {file: b.graphql}}\n',
    );
    expect(lines).toEqual([`${FILE}: subgraphs[1] ("a").name: "a" is used twice; names must be unique`]);
  });

  it('refuses a subgraph name with quotes, spaces, control or non-ASCII characters, naming the entry in printable form', () => {
    const NAME_RULE = 'must start with a letter, digit or _ and hold only letters, digits and _ - . @ / (at most 100 characters)';
    const entry = (name: string) => `version: 1\nsubgraphs:\n  - {name: ${JSON.stringify(name)}, routing_url: "http://x/graphql", schema: {file: a.graphql}}\n`;
    expect(problems(entry('a"b\\c\nd \u00e9\u009b'))).toEqual([`${FILE}: subgraphs[0] ("a\\"b\\\\c\\nd \\u00e9\\u009b").name: ${NAME_RULE}`]);
    for (const name of ['with space', '-leading-dash', '@scope/name', 'x'.repeat(101)]) {
      expect(problems(entry(name))[0]).toMatch(/\.name: must start with a letter/);
    }
    // Names Cosmo's registry and the usual `[A-Za-z_][A-Za-z0-9_-]*` accept.
    const accepted = ['products', 'inventory-v2', '_internal', 'org.users', 'team@acme/users', '2fa', 'x'.repeat(100)];
    const file = parseComposeFile(
      `version: 1\nsubgraphs:\n${accepted.map((name, i) => `  - {name: "${name}", routing_url: "http://x/${i}", schema: {file: a.graphql}}\n`).join('')}`,
      FILE,
    );
    expect(file.subgraphs.map((subgraph) => subgraph.name)).toEqual(accepted);
  });

  it('reports every problem of the file, one per line', () => {
    const lines = problems('version: 2\nextra: true\nsubgraphs:\n  - name: a\n');
    expect(lines).toEqual(expect.arrayContaining([`${FILE}: version: must be 1`, `${FILE}: extra: unknown key`, `${FILE}: subgraphs[0] ("a").routing_url: required (string)`]));
  });

  it('refuses a file without subgraphs', () => {
    expect(problems('version: 1\nsubgraphs: []\n')).toEqual([`${FILE}: subgraphs: list at least one subgraph`]);
  });

  it('refuses an empty file and invalid YAML', () => {
    expect(problems('')).toEqual([`${FILE}: the compose file is empty`]);
    const [line] = problems('version: 1\nsubgraphs:\n  - name: "a\n');
    expect(line).toMatch(/^\/project\/graph\/router\.compose\.yaml: invalid YAML: .* at line \d+, column \d+$/);
  });
});
