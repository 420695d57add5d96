/** Every scenario `--scenario` can name; the first is the default. */
import type { Scenario } from '../harness/scenario.js';
import { federatedScenario } from './federated.js';

export const scenarios: readonly Scenario[] = [federatedScenario];
