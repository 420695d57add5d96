import { describe, expect, it } from 'vitest';
import { RouterError } from '../../src/kernel/errors.js';
import { parseGraphSource, type ExecutionConfig } from '../../src/kernel/graph/execution-config.js';
import { ACCOUNTS_URL, REVIEWS_URL, accountsAndReviewsSupergraph, accountsSdl } from './fixtures.js';

const supergraph = accountsAndReviewsSupergraph();

function config(overrides: Record<string, unknown> = {}): string {
  const base: ExecutionConfig = {
    version: 1,
    supergraph,
    subgraphs: [
      { kind: 'graphql', name: 'accounts', url: 'http://accounts.internal:4001/graphql' },
      { kind: 'graphql', name: 'reviews', url: 'http://reviews.internal:4002/graphql' },
    ],
    compose: { composedAt: '2025-01-02T03:04:05.000Z' },
  };
  return JSON.stringify({ ...base, ...overrides });
}

/** The RouterError `parse` throws; fails the test when it throws something else or nothing. */
function failure(parse: () => unknown): RouterError {
  try {
    parse();
  } catch (error) {
    expect(error).toBeInstanceOf(RouterError);
    return error as RouterError;
  }
  throw new Error('expected parseGraphSource to throw');
}

describe('parseGraphSource', () => {
  it('reads subgraph names and routing URLs of a plain supergraph SDL from its join__Graph enum', () => {
    const source = parseGraphSource(supergraph, '/srv/supergraph.graphql');
    expect(source).toEqual({
      supergraphSdl: supergraph,
      origin: '/srv/supergraph.graphql',
      subgraphs: [
        { kind: 'graphql', name: 'accounts', url: ACCOUNTS_URL },
        { kind: 'graphql', name: 'reviews', url: REVIEWS_URL },
      ],
    });
  });

  it('reads an execution config and routes with the URLs it lists', () => {
    const source = parseGraphSource(config(), '/srv/router.execution.config.json');
    expect(source.supergraphSdl).toBe(supergraph);
    expect(source.subgraphs).toEqual([
      { kind: 'graphql', name: 'accounts', url: 'http://accounts.internal:4001/graphql' },
      { kind: 'graphql', name: 'reviews', url: 'http://reviews.internal:4002/graphql' },
    ]);
  });

  it('tells JSON from SDL by content when the origin has no known extension', () => {
    expect(parseGraphSource(config(), 'http://cdn.local/graph').subgraphs).toHaveLength(2);
    expect(parseGraphSource(supergraph, 'http://cdn.local/graph').subgraphs).toHaveLength(2);
  });

  it('accepts an execution config without compose metadata and ignores unknown fields', () => {
    const source = parseGraphSource(config({ compose: undefined, generator: 'elsewhere' }), 'graph.json');
    expect(source.subgraphs.map((s) => s.name)).toEqual(['accounts', 'reviews']);
  });

  it('refuses an empty file', () => {
    const error = failure(() => parseGraphSource('  \n', 'empty.graphql'));
    expect(error.code).toBe('SUPERGRAPH_INVALID');
    expect(error.message).toContain('empty');
  });

  it('refuses text that is neither JSON nor SDL, pointing at the line and column', () => {
    const error = failure(() => parseGraphSource('hello there\nworld', 'graph.txt'));
    expect(error.code).toBe('SUPERGRAPH_INVALID');
    expect(error.message).toBe('graph.txt: neither an execution config (JSON) nor a supergraph SDL: syntax error at line 1, column 1: Unexpected Name "hello".');
  });

  it('reports an SDL syntax error with its line and column', () => {
    const broken = supergraph.replace('type User', 'type User {');
    const error = failure(() => parseGraphSource(broken, 'supergraph.graphql'));
    expect(error.code).toBe('SUPERGRAPH_INVALID');
    expect(error.message).toMatch(/^supergraph\.graphql: supergraph SDL syntax error at line \d+, column \d+: /);
  });

  it('refuses broken JSON in a .json file', () => {
    const error = failure(() => parseGraphSource('{"version": 1,', 'router.execution.config.json'));
    expect(error.code).toBe('SUPERGRAPH_INVALID');
    expect(error.message).toContain('router.execution.config.json: not valid JSON');
  });

  it('refuses a subgraph schema, saying it needs composing first', () => {
    const error = failure(() => parseGraphSource(accountsSdl, 'accounts.graphql'));
    expect(error.code).toBe('SUPERGRAPH_INVALID');
    expect(error.message).toContain('not a Federation v2 supergraph');
    expect(error.message).toContain('switchyard compose');
  });

  it('refuses a supergraph that links the join spec but has no join__Graph enum', () => {
    const withoutEnum = supergraph.replace(/enum join__Graph \{[^}]*\}/, '');
    const error = failure(() => parseGraphSource(withoutEnum, 'supergraph.graphql'));
    expect(error.message).toContain('no enum join__Graph');
  });

  it('refuses an operation in place of a schema', () => {
    const error = failure(() => parseGraphSource('query { me { id } }', 'op.graphql'));
    expect(error.message).toContain('an operation or fragment at line 1');
  });

  it('refuses a supergraph SDL whose subgraph has no routing URL', () => {
    const noUrl = supergraph.replace(`url: "${REVIEWS_URL}"`, 'url: ""');
    const error = failure(() => parseGraphSource(noUrl, 'supergraph.graphql'));
    expect(error.message).toContain('subgraph "reviews" has no routing URL');
  });

  it('refuses an execution config version other than 1', () => {
    const error = failure(() => parseGraphSource(config({ version: 2 }), 'graph.json'));
    expect(error.code).toBe('SUPERGRAPH_INVALID');
    expect(error.message).toBe('graph.json: unsupported execution config version 2; this router reads version 1');
  });

  it('refuses an execution config without a version', () => {
    const error = failure(() => parseGraphSource(config({ version: undefined }), 'graph.json'));
    expect(error.message).toBe('graph.json: version: required (expected 1)');
  });

  it('refuses an execution config without a supergraph', () => {
    const error = failure(() => parseGraphSource(config({ supergraph: undefined }), 'graph.json'));
    expect(error.message).toContain('supergraph: required');
  });

  it('refuses an unknown subgraph kind, naming the subgraph', () => {
    const subgraphs = [
      { kind: 'graphql', name: 'accounts', url: ACCOUNTS_URL },
      { kind: 'soap', name: 'reviews', url: REVIEWS_URL },
    ];
    const error = failure(() => parseGraphSource(config({ subgraphs }), 'graph.json'));
    expect(error.message).toBe('graph.json: subgraph "reviews": unknown kind "soap" (supported kinds: graphql, grpc)');
  });

  it('refuses a graphql subgraph without an http(s) URL', () => {
    const subgraphs = [
      { kind: 'graphql', name: 'accounts', url: 'ftp://accounts' },
      { kind: 'graphql', name: 'reviews', url: REVIEWS_URL },
    ];
    const error = failure(() => parseGraphSource(config({ subgraphs }), 'graph.json'));
    expect(error.message).toContain('subgraph "accounts": url: required, an http(s) URL');
  });

  it('refuses a subgraph the supergraph does not declare', () => {
    const subgraphs = [
      { kind: 'graphql', name: 'accounts', url: ACCOUNTS_URL },
      { kind: 'graphql', name: 'reviews', url: REVIEWS_URL },
      { kind: 'graphql', name: 'inventory', url: 'http://127.0.0.1:4003/graphql' },
    ];
    const error = failure(() => parseGraphSource(config({ subgraphs }), 'graph.json'));
    expect(error.message).toContain(`unknown subgraph "inventory" (not in the supergraph's join__Graph)`);
  });

  it('refuses an execution config missing one of the supergraph subgraphs', () => {
    const subgraphs = [{ kind: 'graphql', name: 'accounts', url: ACCOUNTS_URL }];
    const error = failure(() => parseGraphSource(config({ subgraphs }), 'graph.json'));
    expect(error.message).toContain('missing subgraph "reviews"');
  });

  it('refuses a supergraph whose schema does not build', () => {
    const broken = supergraph.replace('reviews: [Review!]!', 'reviews: [Missing!]!');
    const error = failure(() => parseGraphSource(broken, 'supergraph.graphql'));
    expect(error.message).toContain('invalid supergraph schema');
    expect(error.message).toContain('Missing');
  });
});
