/**
 * The gRPC scenario's one-subgraph graph: `projects(first)` returning
 * project records (ID, strings, a nullable string, an enum, a float, a list
 * of strings). The same data is served two ways: as an HTTP GraphQL
 * subgraph (`projects`) and as a gRPC service generated from the same SDL
 * (`projects-grpc`, see servers/projects-grpc.ts).
 */
import type { BenchSubgraph } from './subgraphs.js';

/** The subgraph SDL; also what the gRPC service's proto and mapping are generated from. */
export const PROJECTS_SDL = /* GraphQL */ `
  type Query {
    projects(first: Int!): [Project!]!
  }
  type Project {
    id: ID!
    name: String!
    description: String
    status: ProjectStatus!
    budget: Float!
    tags: [String!]!
    createdAt: String!
  }
  enum ProjectStatus {
    ACTIVE
    PAUSED
    ARCHIVED
  }
`;

/** Projects the operation asks for. */
export const PROJECT_COUNT = 50;

/** The operation both contenders are loaded with. */
export const PROJECTS_QUERY = `{ projects(first: ${PROJECT_COUNT}) { id name description status budget tags createdAt } }`;

/** One project, shaped as GraphQL answers it (field order of `PROJECTS_QUERY`). */
export interface Project {
  readonly id: string;
  readonly name: string;
  readonly description: string | null;
  readonly status: 'ACTIVE' | 'PAUSED' | 'ARCHIVED';
  readonly budget: number;
  readonly tags: readonly string[];
  readonly createdAt: string;
}

const STATUSES = ['ACTIVE', 'PAUSED', 'ARCHIVED'] as const;

function project(i: number): Project {
  return {
    id: `project-${i}`,
    name: `Project ${i}`,
    description: i % 4 === 0 ? null : `Project ${i} moves the ${['billing', 'search', 'checkout'][i % 3]} work forward this quarter.`,
    status: STATUSES[i % 3]!,
    budget: 1000 + i * 12.5,
    tags: [`team-${i % 5}`, `area-${i % 7}`],
    createdAt: new Date(Date.UTC(2025, 0, 1 + i)).toISOString(),
  };
}

/** The first `first` projects. */
export function projects(first: number): Project[] {
  return Array.from({ length: Math.max(0, first) }, (_, i) => project(i));
}

/** The same projects as proto messages of the generated service (snake_case, wrapper, prefixed enum). */
export function projectsAsProto(first: number): Array<Record<string, unknown>> {
  return projects(first).map((p) => ({
    id: p.id,
    name: p.name,
    ...(p.description === null ? {} : { description: { value: p.description } }),
    status: `PROJECT_STATUS_${p.status}`,
    budget: p.budget,
    tags: [...p.tags],
    created_at: p.createdAt,
  }));
}

/** The HTTP GraphQL subgraph. */
export const projectsSubgraph: BenchSubgraph = {
  name: 'projects',
  sdl: PROJECTS_SDL,
  resolvers: { Query: { projects: (_: unknown, args: { first: number }) => projects(args.first) } },
};

/** The expected answer to `PROJECTS_QUERY`, as bytes a router would send. */
export function projectsExpected(): string {
  return JSON.stringify({ data: { projects: projects(PROJECT_COUNT) } });
}
