/** Every scenario `--scenario` can name; the first is the default. */
import type { Scenario } from '../harness/scenario.js';
import { authScenario } from './auth.js';
import { connectScenario } from './connect.js';
import { federatedScenario } from './federated.js';
import { grpcScenario } from './grpc.js';
import { profilingScenario } from './profiling.js';
import { responseCacheScenario } from './response-cache.js';
import { twoRootsScenario } from './two-roots.js';
import { telemetryScenario } from './telemetry.js';
import { workersScenario } from './workers.js';

export const scenarios: readonly Scenario[] = [
  federatedScenario,
  workersScenario,
  responseCacheScenario,
  grpcScenario,
  profilingScenario,
  connectScenario,
  authScenario,
  telemetryScenario,
  twoRootsScenario,
];
