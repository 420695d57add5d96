/**
 * Connect GET vs POST /graphql (issue 8): the benchmark operation as a
 * Connect contract (`TopProducts`, package `bench.v1`), called with
 * `GET /bench.v1.BenchService/TopProducts?connect=v1&encoding=json&message=...`
 * on the Connect listener, against the same operation sent to `/graphql`.
 * Both contenders run the same router with the same contract served; only
 * the request differs. Target: a Connect GET costs at most 1.2x the
 * `/graphql` request, i.e. at least 1/1.2 of its req/s.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { writeContractFiles } from '../../src/connect/index.js';
import { readSupergraph } from '../../src/kernel/graph/read-supergraph.js';
import { BENCH_OPERATION_NAME, BENCH_QUERY, BENCH_VARIABLES } from '../graph/operation.js';
import type { Contender, LaunchContext, Launch, Scenario } from '../harness/scenario.js';
import { ratioTarget } from '../harness/targets.js';
import { switchyard } from './contenders.js';
import { benchExpected, GRAPHQL_POST } from './federated.js';

const GRAPHQL = 'switchyard-graphql';
const CONNECT = 'switchyard-connect-get';
const CONTRACT_DIR = join('services', 'bench', 'v1');

/** The path and query of the Connect GET for the benchmark variables. */
const CONNECT_PATH = `/bench.v1.BenchService/${BENCH_OPERATION_NAME}?${new URLSearchParams({ connect: 'v1', encoding: 'json', message: JSON.stringify(BENCH_VARIABLES) })}`;

/** Writes the contract into the contender's folder and turns the Connect listener on (on a second port). */
async function withContract(context: LaunchContext, launch: Launch, useConnect: boolean): Promise<Launch> {
  const dir = join(context.dir, CONTRACT_DIR);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, `${BENCH_OPERATION_NAME}.graphql`), BENCH_QUERY);
  const schema = readSupergraph(readFileSync(context.supergraphFile, 'utf8')).apiSchema;
  await writeContractFiles({ dir, schema });
  const port = await context.freePort();
  const env = {
    ...launch.env,
    CONNECT_RPC_ENABLED: 'true',
    CONNECT_RPC_SERVER_LISTEN_ADDR: `127.0.0.1:${port}`,
    CONNECT_RPC_SERVICES_PATH: join(context.dir, 'services'),
  };
  return { ...launch, env, url: useConnect ? `http://127.0.0.1:${port}` : launch.url };
}

/** proto3 JSON has no null: a Connect answer leaves null fields out. */
function withoutNulls(value: unknown): unknown {
  if (Array.isArray(value)) return value.filter((item) => item !== null).map(withoutNulls);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).flatMap(([key, item]) => (item === null ? [] : [[key, withoutNulls(item)]])));
  }
  return value;
}

function contender(id: string, label: string, useConnect: boolean): Contender {
  const base = switchyard({
    id,
    label,
    baseline: GRAPHQL,
    checkLog: (log) => (log.includes('Connect endpoints listening') ? undefined : 'the router did not log "Connect endpoints listening"'),
  });
  return {
    ...base,
    async launch(context) {
      return withContract(context, await base.launch(context), useConnect);
    },
    ...(useConnect
      ? {
          request: { method: 'GET' as const, path: CONNECT_PATH, headers: {} },
          // A Connect answer is the response message: the operation's data, nulls left out.
          expect: (expected: unknown) => withoutNulls((expected as { data: unknown }).data),
        }
      : {}),
  };
}

export const connectScenario: Scenario = {
  name: 'connect',
  description: 'benchmark operation as a Connect GET (contract TopProducts) vs POST /graphql, same router',
  request: GRAPHQL_POST,
  ratioLabel: 'req/s / POST /graphql',
  contenders: [contender(GRAPHQL, 'Switchyard, POST /graphql', false), contender(CONNECT, 'Switchyard, Connect GET', true)],
  expected: benchExpected,
  // "Costs at most 1.2x": the Connect GET keeps at least 1/1.2 of the /graphql throughput.
  targets: (summaries) => [ratioTarget(summaries, CONNECT, GRAPHQL, 'rps', { atLeast: Number((1 / 1.2).toFixed(3)) })],
};
