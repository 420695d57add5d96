/**
 * A third-party plugin package as `plugins: [{package}]` loads it: an
 * envelop plugin from npm (graphql-armor's block-field-suggestions), used
 * unchanged. Plain JavaScript, so the built CLI (`node dist/cli/main.js`)
 * loads it as well as the sources through tsx. Its `configure` is the
 * factory shape `definePlugin` gives; the plugin takes no options.
 */
import { blockFieldSuggestionsPlugin } from '@escape.tech/graphql-armor-block-field-suggestions';

export default {
  pluginName: 'block-field-suggestions',
  configure: () => ({
    name: 'block-field-suggestions',
    setup: () => ({ envelop: [blockFieldSuggestionsPlugin()] }),
  }),
};
