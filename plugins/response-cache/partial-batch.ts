import type { GraphQLErrorJSON, JsonObject, SubgraphResponse } from '../../src/index.js';

/**
 * Marks an error as the router's own, not the subgraph's: the kernel forwards
 * it as made, with `extensions.serviceName`, whatever
 * `subgraph_error_propagation` says. The kernel's registered symbol
 * (src/kernel/execute/subgraph-errors.ts, `ROUTER_MADE_ERROR`, not exported
 * from src/index.ts), read through the symbol registry.
 */
const ROUTER_MADE_ERROR = Symbol.for('switchyard.router-made-error');

function routerMade(error: GraphQLErrorJSON): GraphQLErrorJSON {
  (error as GraphQLErrorJSON & { [ROUTER_MADE_ERROR]?: true })[ROUTER_MADE_ERROR] = true;
  return error;
}

/**
 * Puts a partial hit back together: the subgraph answered only the missing
 * representations (at `missing` positions of the original batch); the
 * answer the kernel gets has every position, cached ones included, and
 * error paths point at the original positions.
 */
export function rebuildEntities(
  output: SubgraphResponse,
  cached: ReadonlyArray<JsonObject | undefined>,
  missing: readonly number[],
  subgraph: string,
  /** The answer's field: `_entities`, or a part's alias in a batched call (`_1`). */
  field = '_entities',
): SubgraphResponse {
  const fetched = output.data?.[field];
  const usable = Array.isArray(fetched) && fetched.length === missing.length;
  const entities: unknown[] = cached.map((value) => value ?? null);
  if (usable) missing.forEach((position, i) => (entities[position] = fetched[i] ?? null));
  const errors = (output.errors ?? []).map((error) => remapPath(error, missing, field));
  if (!usable && fetched !== undefined && fetched !== null) {
    const count = Array.isArray(fetched) ? `${fetched.length} entities` : 'no list';
    // Found by the router, not sent by the subgraph: router-made.
    errors.push(
      routerMade({
        message: `Subgraph "${subgraph}" sent an invalid response: it returned ${count} for ${missing.length} representations.`,
        // At the first entity it left unanswered, as the kernel reports a whole batch's invalid answer.
        path: [field, missing[0] ?? 0],
        extensions: { code: 'SUBGRAPH_INVALID_RESPONSE' },
      }),
    );
  }
  const rebuilt: SubgraphResponse = { ...output, data: { ...output.data, [field]: entities } };
  return errors.length > 0 ? { ...rebuilt, errors } : rebuilt;
}

function remapPath(error: GraphQLErrorJSON, missing: readonly number[], field: string): GraphQLErrorJSON {
  const path = error.path;
  if (path?.[0] !== field || typeof path[1] !== 'number') return error;
  const position = missing[path[1]];
  return position === undefined ? error : { ...error, path: [field, position, ...path.slice(2)] };
}
