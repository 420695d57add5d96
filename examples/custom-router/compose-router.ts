/**
 * The custom router: a Switchyard router composed in code from a chosen set
 * of plugins, in the order their hooks run:
 *
 * 1. `block-field-suggestions`: an envelop plugin from npm
 *    (@escape.tech/graphql-armor-block-field-suggestions), used unchanged;
 * 2. `automatic-persisted-queries`: a plugin that ships with switchyard;
 * 3. `request-id` (./request-id.ts): a plugin of this project.
 */
import { blockFieldSuggestionsPlugin } from '@escape.tech/graphql-armor-block-field-suggestions';
import { createRouter, type GraphInput, type Logger, type Router, type SwitchyardPlugin } from 'switchyard';
import { useAutomaticPersistedQueries } from 'switchyard/plugins/automatic-persisted-queries';
import { useRequestId } from './request-id.js';

/** Options of `composeCustomRouter`. */
export interface CustomRouterOptions {
  /** The graph: an execution config or supergraph SDL file, or a composed graph. */
  readonly graph: GraphInput;
  /** Where `listen()` serves. Default: `localhost:3002`. */
  readonly listenAddr?: string;
  /** Default: JSON lines on standard output at `info`. */
  readonly logger?: Logger;
}

/** Any envelop plugin becomes a Switchyard plugin by returning it from `setup`. */
const blockFieldSuggestions: SwitchyardPlugin = {
  name: 'block-field-suggestions',
  setup: () => ({ envelop: [blockFieldSuggestionsPlugin()] }),
};

export function composeCustomRouter({ graph, listenAddr = 'localhost:3002', logger }: CustomRouterOptions): Promise<Router> {
  return createRouter({
    // No config file: the same keys as router.config.yaml, in code.
    config: { listen_addr: listenAddr },
    // After-hooks run in this order too: request-id's comes after the one APQ
    // uses to answer an unknown hash, so that answer carries the id as well.
    plugins: [blockFieldSuggestions, useAutomaticPersistedQueries({ enabled: true, cache: { size: 500 } }), useRequestId()],
    graph,
    logger,
  });
}
