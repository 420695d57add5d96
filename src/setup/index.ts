/**
 * `switchyard/setup`: a router set up the way `switchyard router` sets it up,
 * from a `router.config.yaml` (its built-in plugins and the `plugins:` list),
 * for programs that start the router themselves. Kept out of the SDK entry:
 * it loads every built-in plugin's config schema, and plugins import the SDK.
 */
export { loadRouterSetup, type RouterSetup, type RouterSetupOptions } from '../cli/router-setup.js';
