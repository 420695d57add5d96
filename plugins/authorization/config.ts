/** The `authorization` section of router.config.yaml (read without loading the plugin). */
import { defineConfigSection, z, type SwitchyardPlugin } from '../../src/index.js';

/** Schema of `authorization`. */
export const authorizationConfigSchema = z.strictObject({
  /**
   * A request without a valid token is answered 401 `UNAUTHENTICATED`; introspection too, unless
   * `authentication.ignore_introspection` lets an introspection-only document through. Default: `false`.
   */
  require_authentication: z.boolean().default(false),
  /**
   * A field or type the token may not see fails the whole operation with 403
   * `UNAUTHORIZED_FIELD_OR_TYPE`, instead of coming back `null` with an error at its path. Default: `false`.
   */
  reject_operation_if_unauthorized: z.boolean().default(false),
});

/** `authorization` as written in the file. */
export type AuthorizationConfigInput = z.input<typeof authorizationConfigSchema>;
/** `authorization` with defaults filled in. */
export type AuthorizationConfig = z.output<typeof authorizationConfigSchema>;

/**
 * The `authorization` section. The plugin is on whenever `authorization` or
 * `authentication` is configured (the defaults apply without an
 * `authorization` section): the directives of the supergraph are enforced as
 * soon as tokens are read.
 */
export const authorizationSection = defineConfigSection({
  key: 'authorization',
  plugin: 'authorization',
  schema: authorizationConfigSchema,
  async fromConfig(section, { config }): Promise<SwitchyardPlugin[]> {
    if (!section && config.sections.authentication === undefined) return [];
    const { useAuthorization } = await import('./index.js');
    return [useAuthorization.fromParsed(section ?? authorizationConfigSchema.parse({}))];
  },
});
