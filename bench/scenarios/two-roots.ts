/**
 * Two root fields to different subgraphs (issue 21): `users` (accounts) and
 * `topProducts` (products), each walking reviews -> authors -> reviews ->
 * products with the `@requires` field at the deepest products, in the shape
 * of the public graphql-gateways-benchmark. The minimal plan is 6 calls:
 * accounts and products for the roots, one reviews call for both branches,
 * then accounts and products, then inventory; the floor
 * (servers/floor-two-roots.ts) sends exactly those.
 */
import { referenceResponse } from '../graph/reference.js';
import type { Contender, LaunchContext, Launch, Scenario, Sharing } from '../harness/scenario.js';
import { medianEquals, ratioTarget } from '../harness/targets.js';
import { hiveGateway, switchyard } from './contenders.js';

export const TWO_ROOTS_QUERY = /* GraphQL */ `query TwoRoots($first: Int!, $users: Int!) {
  users(first: $users) {
    id
    username
    reviews {
      body
      product {
        upc
        reviews {
          id
          author {
            name
            reviews {
              body
              product { name inStock shippingEstimate }
            }
          }
        }
      }
    }
  }
  topProducts(first: $first) {
    name
    reviews {
      body
      author {
        name
        reviews {
          product { name inStock shippingEstimate }
        }
      }
    }
  }
}`;

/** Two users (10 reviews each) and five top products: about 800 + 200 products at the leaves. */
const VARIABLES = { first: 5, users: 2 };

const SHARING = 'switchyard';
const NO_SHARING = 'switchyard-nosharing';

/** The hand-written router of servers/floor-two-roots.ts. */
function twoRootsFloor(sharing: Sharing, baseline: string): Contender {
  return {
    id: sharing === 'on' ? 'floor-sharing' : 'floor',
    label: 'Floor: hand-written, 6 fetches',
    role: 'floor',
    sharing,
    baseline,
    launch(context: LaunchContext): Launch {
      const args = [context.programs.servers['floor-two-roots'], '--port', String(context.port)];
      for (const [name, url] of Object.entries(context.subgraphUrls)) args.push(`--${name}`, url);
      if (sharing === 'on') args.push('--sharing');
      return { command: process.execPath, args };
    },
  };
}

export const twoRootsScenario: Scenario = {
  name: 'two-roots',
  description: 'users + topProducts, each -> reviews -> authors -> reviews -> products (@requires): fetch merging across root fields',
  request: {
    method: 'POST',
    path: '/graphql',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ query: TWO_ROOTS_QUERY, operationName: 'TwoRoots', variables: VARIABLES }),
  },
  contenders: [
    switchyard({ sharing: 'on', baseline: SHARING }),
    switchyard({ id: NO_SHARING, sharing: 'off', baseline: NO_SHARING }),
    hiveGateway({ rust: true, baseline: SHARING }),
    twoRootsFloor('off', NO_SHARING),
    twoRootsFloor('on', SHARING),
  ],
  expected: (supergraphSdl) => referenceResponse(supergraphSdl, TWO_ROOTS_QUERY, { ...VARIABLES }),
  targets: (summaries) => [
    medianEquals(summaries, SHARING, 'fetchesAlone', 6, 'subgraph requests of one request'),
    ratioTarget(summaries, NO_SHARING, 'floor', 'rps', { atLeast: 0.8 }),
    ratioTarget(summaries, SHARING, 'floor-sharing', 'rps', { atLeast: 1.2 }),
  ],
};
