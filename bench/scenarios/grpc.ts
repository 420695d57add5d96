/**
 * A gRPC-backed root query vs the same data from an HTTP GraphQL subgraph
 * (issue 7). The subgraph server runs the `projects` graph
 * (graph/projects.ts): one HTTP GraphQL subgraph and one gRPC service
 * generated from the same SDL, both answering from memory. Two
 * Switchyard contenders load the same operation: one whose graph routes
 * `projects` to the HTTP subgraph (the scenario's supergraph), one whose
 * execution config routes it to the gRPC service (subgraph kind `grpc`, the
 * generated proto and mapping embedded, as `switchyard compose` writes it).
 *
 * In-flight fetch sharing is off for both, so every client request makes
 * exactly one subgraph call and the transports are compared call for call.
 *
 * The gRPC service runs on node:http2's server, a server library users
 * run, as the HTTP subgraph runs on node:http's (servers/projects-grpc.ts).
 *
 * Three transport floors (servers/transport-floor.ts) are measured beside
 * them, not judged: per request one bare HTTP call, one bare @grpc/grpc-js
 * call (decoded), and the same gRPC call on bare node:http2. The difference
 * between the first two is what a gRPC call costs over an HTTP call in this
 * process (transport, and protobuf decode instead of a JSON parse); the
 * third shows how much of that is Node's HTTP/2 client. The references
 * below set Switchyard's gRPC cost beside theirs and beside the budget the
 * target leaves.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { composeSubgraphs, renderOutput } from '../../src/compose/index.js';
import { generateService } from '../../src/grpc/generate.js';
import { PROJECTS_QUERY, PROJECTS_SDL, projectsExpected } from '../graph/projects.js';
import type { LaunchContext, Scenario, TargetCheck } from '../harness/scenario.js';
import { ratioTarget, referenceRatio, type Summaries } from '../harness/targets.js';
import { switchyard, transportFloor } from './contenders.js';

const HTTP = 'switchyard-http-subgraph';
const GRPC = 'switchyard-grpc-subgraph';
const FLOOR_HTTP = 'transport-floor-http';
const FLOOR_GRPC = 'transport-floor-grpc';
const FLOOR_H2 = 'transport-floor-h2';

/**
 * What gRPC costs over HTTP, in CPU ms per request: Switchyard's extra (its
 * gRPC contender minus its HTTP one) beside the bare calls' extras (each
 * gRPC floor minus the HTTP floor), and the budget the 1.3x target leaves
 * (under this saturating load p50 follows CPU per request, so 1.3x the
 * latency allows 0.3x the HTTP contender's CPU on top). Not judged.
 */
function extraCost(summaries: Summaries): TargetCheck {
  const name = 'reference: CPU ms per request that gRPC adds over HTTP (Switchyard; bare @grpc/grpc-js call; bare node:http2 call) and what 1.3x leaves';
  const cpu = (id: string) => summaries.get(id)?.metrics.cpuMsPerRequest?.median;
  const [http, grpc, floorHttp, floorGrpc, floorH2] = [cpu(HTTP), cpu(GRPC), cpu(FLOOR_HTTP), cpu(FLOOR_GRPC), cpu(FLOOR_H2)];
  if (http === undefined || grpc === undefined || floorHttp === undefined || floorGrpc === undefined || floorH2 === undefined) return { name, shown: 'not measured' };
  const ms = (value: number) => `${value >= 0 ? '+' : ''}${value.toFixed(3)} ms`;
  return {
    name,
    value: grpc - http,
    shown: `Switchyard ${ms(grpc - http)}; bare @grpc/grpc-js ${ms(floorGrpc - floorHttp)}; bare node:http2 ${ms(floorH2 - floorHttp)}; the 1.3x target leaves ${ms(0.3 * http)}`,
  };
}

function urlOf(urls: Readonly<Record<string, string>>, name: string): string {
  const url = urls[name];
  if (!url) throw new Error(`the subgraph server did not report "${name}" (is BENCH_SUBGRAPH_GRAPH=projects?)`);
  return url;
}

/** The execution config routing `projects` to one of the subgraph server's gRPC services; the factory returns its writer. */
function grpcExecutionConfig(service: 'projects-grpc'): (context: LaunchContext) => Promise<string> {
  return async function writeGrpcExecutionConfig(context) {
    const generated = await generateService({ sdl: PROJECTS_SDL });
    const graph = composeSubgraphs(
      [{ name: 'projects', url: urlOf(context.subgraphUrls, service), sdl: PROJECTS_SDL, grpc: { proto: generated.proto, mapping: generated.mapping } }],
      'the projects gRPC service',
    );
    const file = join(context.dir, 'router.execution.config.json');
    writeFileSync(file, renderOutput(graph, 'execution-config'));
    return file;
  };
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
  supergraph: (urls) => composeSubgraphs([{ name: 'projects', url: urlOf(urls, 'projects'), sdl: PROJECTS_SDL }], 'the projects HTTP subgraph').supergraphSdl,
  ratioLabel: 'req/s / HTTP subgraph',
  contenders: [
    switchyard({ id: HTTP, label: 'Switchyard, HTTP GraphQL subgraph', sharing: 'off', baseline: HTTP }),
    switchyard({ id: GRPC, label: 'Switchyard, gRPC subgraph', sharing: 'off', baseline: HTTP, graphFile: grpcExecutionConfig('projects-grpc') }),
    transportFloor({ transport: 'http', baseline: HTTP }),
    transportFloor({ transport: 'grpc', baseline: HTTP }),
    transportFloor({ transport: 'h2', baseline: HTTP }),
  ],
  expected: () => Promise.resolve(projectsExpected()),
  // The target is the p50; p99 and req/s are in the table beside it.
  targets: (summaries) => [
    ratioTarget(summaries, GRPC, HTTP, 'latencyP50Ms', { atMost: 1.3 }),
    referenceRatio(summaries, FLOOR_GRPC, FLOOR_HTTP, 'latencyP50Ms', 'p50 latency of the bare calls'),
    referenceRatio(summaries, FLOOR_GRPC, FLOOR_HTTP, 'cpuMsPerRequest', 'CPU ms per request of the bare calls'),
    referenceRatio(summaries, FLOOR_H2, FLOOR_HTTP, 'latencyP50Ms', 'p50 latency of the bare calls'),
    referenceRatio(summaries, FLOOR_H2, FLOOR_HTTP, 'cpuMsPerRequest', 'CPU ms per request of the bare calls'),
    extraCost(summaries),
  ],
};
