/**
 * Switchyard with `--workers 1` and `--workers 2` on the benchmark
 * operation. Neither is pinned: two workers need both cores, so here they
 * share them with the subgraphs and the load generator (on a 2-core machine
 * the gain is bounded by that).
 */
import type { Scenario } from '../harness/scenario.js';
import { switchyard } from './contenders.js';
import { benchExpected, GRAPHQL_POST } from './federated.js';

const ONE = 'switchyard-workers-1';

export const workersScenario: Scenario = {
  name: 'workers',
  description: 'Switchyard --workers 1 vs 2 (unpinned), benchmark operation over POST /graphql',
  request: GRAPHQL_POST,
  ratioLabel: 'req/s / 1 worker',
  contenders: [
    switchyard({ id: ONE, label: 'Switchyard, 1 worker', args: ['--workers', '1'], pin: 'none', baseline: ONE }),
    switchyard({ id: 'switchyard-workers-2', label: 'Switchyard, 2 workers', args: ['--workers', '2'], pin: 'none', baseline: ONE }),
  ],
  expected: benchExpected,
};
