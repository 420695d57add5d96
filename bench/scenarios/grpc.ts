/**
 * A gRPC-backed root query vs the same data from an HTTP GraphQL subgraph
 * (issue 7). The subgraph server runs the `projects` graph
 * (graph/projects.ts): one HTTP GraphQL subgraph and one @grpc/grpc-js
 * service generated from the same SDL, both answering from memory. Two
 * Switchyard contenders load the same operation: one whose graph routes
 * `projects` to the HTTP subgraph (the scenario's supergraph), one whose
 * execution config routes it to the gRPC service (subgraph kind `grpc`, the
 * generated proto and mapping embedded, as `switchyard compose` writes it).
 *
 * In-flight fetch sharing is off for both, so every client request makes
 * exactly one subgraph call and the transports are compared call for call.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { composeSubgraphs, renderOutput } from '../../src/compose/index.js';
import { generateService } from '../../src/grpc/generate.js';
import { PROJECTS_QUERY, PROJECTS_SDL, projectsExpected } from '../graph/projects.js';
import type { LaunchContext, Scenario } from '../harness/scenario.js';
import { ratioTarget } from '../harness/targets.js';
import { switchyard } from './contenders.js';

const HTTP = 'switchyard-http-subgraph';
const GRPC = 'switchyard-grpc-subgraph';

function urlOf(urls: Readonly<Record<string, string>>, name: string): string {
  const url = urls[name];
  if (!url) throw new Error(`the subgraph server did not report "${name}" (is BENCH_SUBGRAPH_GRAPH=projects?)`);
  return url;
}

/** Writes the execution config that routes `projects` to the gRPC service; returns its path. */
async function grpcExecutionConfig(context: LaunchContext): Promise<string> {
  const generated = await generateService({ sdl: PROJECTS_SDL });
  const graph = composeSubgraphs(
    [{ name: 'projects', url: urlOf(context.subgraphUrls, 'projects-grpc'), sdl: PROJECTS_SDL, grpc: { proto: generated.proto, mapping: generated.mapping } }],
    'the projects gRPC service',
  );
  const file = join(context.dir, 'router.execution.config.json');
  writeFileSync(file, renderOutput(graph, 'execution-config'));
  return file;
}

export const grpcScenario: Scenario = {
  name: 'grpc',
  description: 'Switchyard: a root query (projects, 50 records) from a gRPC subgraph vs the same data from an HTTP GraphQL subgraph',
  request: {
    method: 'POST',
    path: '/graphql',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ query: PROJECTS_QUERY }),
  },
  subgraphs: { graph: 'projects' },
  supergraph: (urls) =>
    composeSubgraphs([{ name: 'projects', url: urlOf(urls, 'projects'), sdl: PROJECTS_SDL }], 'the projects HTTP subgraph').supergraphSdl,
  ratioLabel: 'req/s / HTTP subgraph',
  contenders: [
    switchyard({ id: HTTP, label: 'Switchyard, HTTP GraphQL subgraph', sharing: 'off', baseline: HTTP }),
    switchyard({ id: GRPC, label: 'Switchyard, gRPC subgraph', sharing: 'off', baseline: HTTP, graphFile: grpcExecutionConfig }),
  ],
  expected: () => Promise.resolve(projectsExpected()),
  // The target is the p50; p99 and req/s are in the table beside it.
  targets: (summaries) => [ratioTarget(summaries, GRPC, HTTP, 'latencyP50Ms', { atMost: 1.3 })],
};
