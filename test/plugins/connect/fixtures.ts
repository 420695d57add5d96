/**
 * A small federated graph (projects + users), its Connect contract, and a
 * router serving it with the `connect` plugin on a loopback port.
 */
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { GraphQLSchema } from 'graphql';
import { useConnect } from '../../../plugins/connect/index.js';
import { writeContractFiles } from '../../../src/connect/index.js';
import { composeSubgraphs } from '../../../src/compose/index.js';
import { readSupergraph } from '../../../src/kernel/graph/read-supergraph.js';
import { createLogger, type CoreConfigInput, type Logger, type SwitchyardPlugin } from '../../../src/index.js';
import { startSubgraph, startTestRouter, type TestRouter, type TestSubgraph } from '../../../src/testing/index.js';

export const PROJECTS_SDL = /* GraphQL */ `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])

  scalar DateTime

  type Query {
    project(id: ID!): Project
    projects(status: ProjectStatus, first: Int = 10): [Project!]!
    search(term: String!): [SearchResult!]!
    failing: String!
  }

  type Mutation {
    createProject(input: CreateProjectInput!): Project!
  }

  "How far a project is."
  enum ProjectStatus {
    ACTIVE
    ARCHIVED
    ON_HOLD
  }

  input CreateProjectInput {
    name: String!
    tags: [String!]
    status: ProjectStatus = ACTIVE
    dueAt: DateTime
  }

  type Project @key(fields: "id") {
    id: ID!
    "The project's display name."
    name: String!
    status: ProjectStatus!
    tags: [String!]!
    description: String
    score: Float
    dueAt: DateTime
    owner: User
    riskyNote: String
  }

  type Team {
    id: ID!
    name: String!
  }

  union SearchResult = Project | Team

  type User @key(fields: "id", resolvable: false) {
    id: ID!
  }
`;

export const USERS_SDL = /* GraphQL */ `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.3", import: ["@key"])

  type User @key(fields: "id") {
    id: ID!
    name: String!
  }
`;

interface ProjectRow {
  id: string;
  name: string;
  status: string;
  tags: string[];
  description: string | null;
  score: number | null;
  dueAt: string | null;
  ownerId: string | null;
}

/** The starting data; each graph gets its own copy. */
export function seedProjects(): ProjectRow[] {
  return [
    { id: '1', name: 'Switchyard', status: 'ACTIVE', tags: ['router', 'graphql'], description: 'A router', score: 4.5, dueAt: '2030-01-01', ownerId: 'u1' },
    { id: '2', name: 'Archive', status: 'ARCHIVED', tags: [], description: null, score: null, dueAt: null, ownerId: null },
    { id: '3', name: 'Paused', status: 'ON_HOLD', tags: ['later'], description: null, score: 1, dueAt: null, ownerId: 'u2' },
  ];
}

/** The two subgraphs, with in-memory data. */
export interface ProjectsGraph {
  readonly projects: TestSubgraph;
  readonly users: TestSubgraph;
  readonly rows: ProjectRow[];
  /** The graph's client-facing schema (what contracts are generated against). */
  readonly apiSchema: GraphQLSchema;
  close(): Promise<void>;
}

export async function startProjectsGraph(options: { projectsCacheControl?: string } = {}): Promise<ProjectsGraph> {
  const rows = seedProjects();
  const toProject = (row: ProjectRow) => ({ ...row, owner: row.ownerId === null ? null : { id: row.ownerId } });
  const projects = await startSubgraph({
    name: 'projects',
    typeDefs: PROJECTS_SDL,
    resolvers: {
      Query: {
        project: (_: unknown, { id }: { id: string }) => {
          const row = rows.find((r) => r.id === id);
          return row ? toProject(row) : null;
        },
        projects: (_: unknown, { status, first }: { status?: string; first: number }) =>
          rows
            .filter((r) => status === undefined || status === null || r.status === status)
            .slice(0, first)
            .map(toProject),
        search: (_: unknown, { term }: { term: string }) => [
          ...rows.filter((r) => r.name.toLowerCase().includes(term.toLowerCase())).map((r) => ({ __typename: 'Project', ...toProject(r) })),
          ...(term === 'core' ? [{ __typename: 'Team', id: 't1', name: 'Core team' }] : []),
        ],
        failing: () => {
          throw new Error('the failing field always fails');
        },
      },
      Mutation: {
        createProject: (_: unknown, { input }: { input: { name: string; tags?: string[]; status: string; dueAt?: string } }) => {
          const row: ProjectRow = {
            id: String(rows.length + 1),
            name: input.name,
            status: input.status,
            tags: input.tags ?? [],
            description: null,
            score: null,
            dueAt: input.dueAt ?? null,
            ownerId: null,
          };
          rows.push(row);
          return toProject(row);
        },
      },
      SearchResult: { __resolveType: (value: { __typename: string }) => value.__typename },
      Project: {
        __resolveReference: (ref: { id: string }) => toProject(rows.find((r) => r.id === ref.id)!),
        riskyNote: () => {
          throw new Error('notes are unavailable');
        },
      },
    },
    reply: () => (options.projectsCacheControl ? { headers: { 'cache-control': options.projectsCacheControl } } : undefined),
  });
  const names: Record<string, string> = { u1: 'Ada', u2: 'Grace' };
  const users = await startSubgraph({
    name: 'users',
    typeDefs: USERS_SDL,
    resolvers: { User: { __resolveReference: (ref: { id: string }) => ({ id: ref.id, name: names[ref.id] ?? 'Unknown' }) } },
    reply: () => (options.projectsCacheControl ? { headers: { 'cache-control': options.projectsCacheControl } } : undefined),
  });
  const composed = composeSubgraphs([
    { name: 'projects', url: projects.url, sdl: PROJECTS_SDL },
    { name: 'users', url: users.url, sdl: USERS_SDL },
  ]);
  return {
    projects,
    users,
    rows,
    apiSchema: readSupergraph(composed.supergraphSdl).apiSchema,
    async close() {
      await projects.close();
      await users.close();
    },
  };
}

/** The operations of the contract most tests use. */
export const PROJECT_OPERATIONS: Readonly<Record<string, string>> = {
  'GetProject.graphql': /* GraphQL */ `
    query GetProject($id: ID!) {
      project(id: $id) {
        id
        name
        status
        ...Details
      }
    }

    fragment Details on Project {
      tags
      description
      score
      dueAt
      owner {
        id
        ownerName: name
      }
    }
  `,
  'ListProjects.graphql': /* GraphQL */ `
    query ListProjects($status: ProjectStatus, $first: Int) {
      projects(status: $status, first: $first) {
        id
        name
        status
      }
    }
  `,
  'Search.graphql': /* GraphQL */ `
    query Search($term: String!) {
      search(term: $term) {
        __typename
        ... on Project {
          id
          name
        }
        ... on Team {
          id
          name
        }
      }
    }
  `,
  'CreateProject.graphql': /* GraphQL */ `
    mutation CreateProject($input: CreateProjectInput!) {
      createProject(input: $input) {
        id
        name
        status
        tags
        dueAt
      }
    }
  `,
  'GetProjectNote.graphql': /* GraphQL */ `
    query GetProjectNote($id: ID!) {
      project(id: $id) {
        id
        riskyNote
      }
    }
  `,
  'Failing.graphql': /* GraphQL */ `
    query Failing {
      failing
    }
  `,
};

/** A temporary folder, removed when the test finishes. */
export async function tempDir(onFinished: (fn: () => Promise<void>) => void): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'switchyard-connect-'));
  onFinished(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** Writes operation files into `dir` and generates the contract there. */
export async function writeContract(dir: string, operations: Readonly<Record<string, string>>, schema: GraphQLSchema | string) {
  await mkdir(dir, { recursive: true });
  for (const [name, text] of Object.entries(operations)) await writeFile(join(dir, name), text);
  return writeContractFiles({ dir, schema });
}

/** A loopback port that is free now. */
export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const server = createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** A router over the graph with the connect plugin, and the Connect listener's base URL. */
export interface ConnectRouter {
  readonly test: TestRouter;
  /** `http://127.0.0.1:<port>` */
  readonly connectUrl: string;
  close(): Promise<void>;
}

export async function startConnectRouter(
  graph: ProjectsGraph,
  servicesPath: string,
  options: { plugins?: readonly SwitchyardPlugin[]; config?: Omit<CoreConfigInput, 'version'>; logger?: Logger } = {},
): Promise<ConnectRouter> {
  const port = await freePort();
  const test = await startTestRouter({
    subgraphs: [graph.projects, graph.users],
    plugins: [...(options.plugins ?? []), useConnect({ enabled: true, server: { listen_addr: `127.0.0.1:${port}` }, services: { path: servicesPath } })],
    config: options.config,
    logger: options.logger,
  });
  return { test, connectUrl: `http://127.0.0.1:${port}`, close: () => test.close() };
}

/** An HTTP answer with its body parsed as JSON (or kept as text when it is not JSON). */
export interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: unknown;
}

async function answerOf(response: Response): Promise<Answer> {
  const text = await response.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: response.status, headers: response.headers, body };
}

/** A Connect POST with a JSON body, as curl would send it. */
export async function connectPost(base: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<Answer> {
  return answerOf(
    await fetch(`${base}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'connect-protocol-version': '1', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    }),
  );
}

/** A Connect GET: `connect=v1&encoding=json&message=<json>` unless `params` says otherwise. */
export async function connectGet(base: string, path: string, params: Record<string, string>, headers: Record<string, string> = {}): Promise<Answer> {
  return answerOf(await fetch(`${base}${path}?${new URLSearchParams(params)}`, { headers }));
}

/** The GET parameters of a message. */
export function getParams(message: unknown): Record<string, string> {
  return { connect: 'v1', encoding: 'json', message: JSON.stringify(message) };
}

/** One JSON log line. */
export interface LogLine {
  readonly level: string;
  readonly msg: string;
  readonly [field: string]: unknown;
}

/** A logger whose lines are kept for assertions. */
export function captureLogs(): { logger: Logger; lines: LogLine[] } {
  const lines: LogLine[] = [];
  const logger = createLogger({
    level: 'info',
    destination: {
      write(text: string) {
        for (const line of text.split('\n')) if (line.trim() !== '') lines.push(JSON.parse(line) as LogLine);
      },
    },
  });
  return { logger, lines };
}

/** Retries `check` until it passes or `timeoutMs` ends (then its last failure is thrown). */
export async function eventually<T>(check: () => Promise<T>, timeoutMs = 5_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await check();
    } catch (error) {
      if (Date.now() > end) throw error;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
}

/** The projects graph, its contract (PROJECT_OPERATIONS in `<services>/projects/v1`) and a router serving it. */
export interface ServedProjects {
  readonly graph: ProjectsGraph;
  readonly served: ConnectRouter;
  /** The services folder. */
  readonly services: string;
  close(): Promise<void>;
}

/** A router serving the contracts under `services` for `subgraphs` on a free loopback port, its log lines kept. */
export async function serveContracts(subgraphs: readonly TestSubgraph[], services: string): Promise<{ router: TestRouter; connectUrl: string; lines: LogLine[] }> {
  const port = await freePort();
  const logs = captureLogs();
  const router = await startTestRouter({
    subgraphs: [...subgraphs],
    plugins: [useConnect({ enabled: true, server: { listen_addr: `127.0.0.1:${port}` }, services: { path: services } })],
    logger: logs.logger,
  });
  return { router, connectUrl: `http://127.0.0.1:${port}`, lines: logs.lines };
}

/** Starts the graph and a router serving its contract; `close` stops both and removes the folder. */
export async function serveProjects(
  options: { graph?: Parameters<typeof startProjectsGraph>[0]; router?: Parameters<typeof startConnectRouter>[2] } = {},
): Promise<ServedProjects> {
  const graph = await startProjectsGraph(options.graph);
  const services = await mkdtemp(join(tmpdir(), 'switchyard-connect-'));
  await writeContract(join(services, 'projects', 'v1'), PROJECT_OPERATIONS, graph.apiSchema);
  const served = await startConnectRouter(graph, services, options.router);
  return {
    graph,
    served,
    services,
    async close() {
      await served.close();
      await graph.close();
      await rm(services, { recursive: true, force: true });
    },
  };
}
