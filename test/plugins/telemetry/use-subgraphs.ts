/** The telemetry tests' three subgraphs (fixtures.ts), started once for the calling file. */
import { afterAll, beforeAll } from 'vitest';
import { startSubgraph, type TestSubgraph } from '../../../src/testing/index.js';
import { productsSubgraph, reviewsSubgraph, usersSubgraph } from './fixtures.js';

export interface TelemetrySubgraphs {
  readonly products: TestSubgraph;
  readonly reviews: TestSubgraph;
  readonly users: TestSubgraph;
}

/** Starts products, reviews and users before the file's tests (handing them to `started`) and closes them after all. */
export function useTelemetrySubgraphs(started: (subgraphs: TelemetrySubgraphs) => void): void {
  let subgraphs: TestSubgraph[] = [];
  beforeAll(async () => {
    subgraphs = await Promise.all([startSubgraph(productsSubgraph()), startSubgraph(reviewsSubgraph()), startSubgraph(usersSubgraph())]);
    const [products, reviews, users] = subgraphs as [TestSubgraph, TestSubgraph, TestSubgraph];
    started({ products, reviews, users });
  });
  afterAll(async () => {
    await Promise.all(subgraphs.map((subgraph) => subgraph.close()));
  });
}
