/**
 * The library (and people) test subgraphs, and a router over them, started
 * once for the tests of the calling file (or describe block) and closed after
 * them all.
 */
import { afterAll, beforeAll } from 'vitest';
import { startSubgraph, startTestRouter, type TestRouter, type TestSubgraph } from '../../src/testing/index.js';
import { librarySubgraph, peopleSubgraph } from './library-subgraphs.js';

export interface LibraryRouter {
  readonly library: TestSubgraph;
  readonly router: TestRouter;
}

/** The library subgraph and a router over it listening on loopback, handed to `started`. */
export function useLibraryRouter(started: (setup: LibraryRouter) => void): void {
  let library: TestSubgraph | undefined;
  let router: TestRouter | undefined;
  beforeAll(async () => {
    library = await startSubgraph(librarySubgraph());
    router = await startTestRouter({ subgraphs: [library], listen: true });
    started({ library, router });
  });
  afterAll(async () => {
    await router?.close();
    await library?.close();
  });
}

export interface LibraryAndPeople {
  readonly library: TestSubgraph;
  readonly people: TestSubgraph;
}

/** The library and people subgraphs (no router), handed to `started`. */
export function useLibraryAndPeople(started: (subgraphs: LibraryAndPeople) => void): void {
  let library: TestSubgraph | undefined;
  let people: TestSubgraph | undefined;
  beforeAll(async () => {
    library = await startSubgraph(librarySubgraph());
    people = await startSubgraph(peopleSubgraph());
    started({ library, people });
  });
  afterAll(async () => {
    await Promise.all([library?.close(), people?.close()]);
  });
}
