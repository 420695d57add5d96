/**
 * __PLUGIN_NAME__: a plugin for the Switchyard router.
 *
 * As scaffolded it adds a response header with the time the router spent on
 * each operation. Replace the hooks with your own; docs/plugins.md in the
 * switchyard package describes every hook and what it may change.
 */
import { definePlugin, z } from 'switchyard';

/** Options, as written under `options` in router.config.yaml or passed to `__FACTORY_NAME__()`. */
export const optionsSchema = z.strictObject({
  /** Response header carrying the milliseconds spent on the operation. Default: `x-response-time`. */
  header: z
    .string()
    .regex(/^[a-z0-9-]+$/, 'must be a lower-case header name')
    .default('x-response-time'),
});

/** Options of `__FACTORY_NAME__`, as written. */
export type Options = z.input<typeof optionsSchema>;

/**
 * `__FACTORY_NAME__(options)` returns the plugin for `createRouter({ plugins })`;
 * the default export lets the router load it from config by package name.
 */
export const __FACTORY_NAME__ = definePlugin({
  name: '__PLUGIN_NAME__',
  options: optionsSchema,
  setup(ctx, options) {
    ctx.log.debug({ header: options.header }, 'Plugin ready');
    return {
      hooks: {
        onRequest() {
          const started = performance.now();
          // The after-hook runs once the response is ready, also when another plugin answered early.
          return function addResponseTime(after) {
            const elapsed = (performance.now() - started).toFixed(1);
            // Outputs are shared: build a new one instead of changing this one.
            after.setOutput({ ...after.output, headers: { ...after.output.headers, [options.header]: elapsed } });
          };
        },
      },
    };
  },
});

export default __FACTORY_NAME__;
