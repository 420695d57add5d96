/**
 * The `headers` rules (which client headers a subgraph receives; compiled
 * by fetch/header-rules.ts) as an internal plugin. Registered only when some
 * rule exists; without one, subgraph requests carry no client header and no
 * hook runs.
 *
 * Its `fetch` hook sets the request's headers before any user plugin's
 * fetch hook, so those see (and may change) what will be sent. The headers
 * for one subgraph are built once per operation and shared by its calls to
 * that subgraph; a call to a subgraph no rule applies to is left as the
 * kernel built it (`NO_HEADERS`), without a copy.
 */
import type { HeadersConfig } from '../config/core-schema.js';
import { compileHeaderRules, type HeaderPropagation } from '../fetch/header-rules.js';
import { NO_HEADERS } from '../fetch/subgraph-types.js';
import type { StageEvent } from '../pipeline/hooks.js';
import type { SwitchyardPlugin } from '../pipeline/plugin.js';
import { StateKey, type RequestState } from '../pipeline/state.js';
import { PerSubgraph } from './subgraph-policies.js';

type Headers = Readonly<Record<string, string>>;

/** One operation's subgraph headers, built on first use per subgraph. */
class OperationHeaders {
  private built: Map<string, Headers> | undefined;

  constructor(
    /**
     * The request stage's event: its `input` is the request as it stands, and
     * by the first fetch every request hook has run, so it is the request the
     * operation runs with (a user plugin's request hook may change headers).
     */
    private readonly request: StageEvent<'request'>,
    private readonly rules: SubgraphRules,
  ) {}

  for(subgraph: string): Headers {
    let headers = this.built?.get(subgraph);
    if (headers === undefined) {
      const propagate = this.rules.for(subgraph);
      headers = propagate ? propagate(this.request.input.headers) : NO_HEADERS;
      (this.built ??= new Map()).set(subgraph, headers);
    }
    return headers;
  }
}

/** Compiled rules per subgraph name (undefined: no rule applies to it). */
type SubgraphRules = PerSubgraph<HeaderPropagation | undefined>;

const OPERATION_HEADERS = new StateKey<OperationHeaders>('header-rules');

/**
 * The headers an operation sends to `subgraph`: for what is not a fetch (a
 * subscription's stream to its subgraph). `NO_HEADERS` when no rule exists.
 */
export function subgraphHeaders(state: RequestState, subgraph: string): Headers {
  return state.get(OPERATION_HEADERS)?.for(subgraph) ?? NO_HEADERS;
}

export function headerRulesPlugin(config: HeadersConfig): SwitchyardPlugin {
  const rules: SubgraphRules = new PerSubgraph((subgraph) => compileHeaderRules(config, subgraph));
  return {
    name: 'switchyard/header-rules',
    setup: () => ({
      hooks: {
        onRequest(event) {
          event.state.set(OPERATION_HEADERS, new OperationHeaders(event, rules));
        },
        onFetch(event) {
          const input = event.input;
          if (rules.for(input.subgraph) === undefined) return;
          const headers = subgraphHeaders(event.state, input.subgraph);
          if (headers !== input.headers) event.setInput({ ...input, headers });
        },
      },
    }),
  };
}
