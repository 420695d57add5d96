/** The `authentication` section of router.config.yaml (read without loading the plugin). */
import { defineConfigSection, duration, url, z, type SwitchyardPlugin } from '../../src/index.js';

/** Algorithms a JWKS key may verify: asymmetric ones only (`none` and the HMAC family never). */
export const JWT_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA'] as const;

const algorithm = z.string().refine((value) => (JWT_ALGORITHMS as readonly string[]).includes(value), {
  error: (issue) => `unsupported algorithm ${JSON.stringify(issue.input)}; one of ${JWT_ALGORITHMS.join(', ')} (none and HS* are refused: a JWKS publishes public keys)`,
});

const oneOrMany = z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]);

/** One identity provider's key set. */
const jwksProviderSchema = z.strictObject({
  /**
   * URL of the JWKS document (`https://idp.example.com/.well-known/jwks.json`). Required.
   * A `user:password@` in it is sent as HTTP Basic authorization (percent-escapes decoded),
   * never in the URL, and never logged.
   */
  url: url(),
  /** How often the key set is fetched again in the background. Default: `1m`. */
  refresh_interval: duration({ min: '1s' }).prefault('1m'),
  /** Algorithms accepted for tokens verified with this key set. Default: every asymmetric one (RS*, PS*, ES*, EdDSA). */
  algorithms: z.array(algorithm).min(1).optional(),
  /**
   * A token with an unknown `kid`, or whose signature the held key under its `kid` (without a `kid`: every held key) does not verify,
   * fetches the key set again, at most once per this interval (concurrent requests share the fetch). Default: `10s`.
   */
  min_refetch_interval: duration({ min: '0ms' }).prefault('10s'),
  /** Accepted `iss` value(s). Default: not checked. */
  issuer: oneOrMany.optional(),
  /** Accepted `aud` value(s) (one must match). Default: not checked. */
  audience: oneOrMany.optional(),
  /** Time allowed for one fetch of the key set. Default: `5s`. */
  timeout: duration({ min: '1ms' }).prefault('5s'),
});

/** Header names a claim may not be sent as: they frame the HTTP request or carry the client's own credentials. */
export const RESERVED_CLAIM_HEADERS = [
  'host',
  'connection',
  'content-length',
  'content-type',
  'content-encoding',
  'transfer-encoding',
  'te',
  'trailer',
  'upgrade',
  'keep-alive',
  'proxy-connection',
  'expect',
  'authorization',
  'cookie',
] as const;

/** An HTTP field name (RFC 9110 token): no spaces, no colon. */
const HTTP_HEADER_NAME = /^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/;

const claimHeaderName = z
  .string()
  .regex(HTTP_HEADER_NAME, { error: 'must be an HTTP header name' })
  .transform((name) => name.toLowerCase())
  .refine((name) => !(RESERVED_CLAIM_HEADERS as readonly string[]).includes(name), {
    error: (issue) => `${JSON.stringify(issue.input)} cannot carry a claim (reserved: ${RESERVED_CLAIM_HEADERS.join(', ')})`,
  });

/** Schema of `authentication`. */
export const authenticationConfigSchema = z.strictObject({
  /**
   * An operation made only of introspection fields (`__schema`, `__type`,
   * `__typename`) may run without a token even with
   * `authorization.require_authentication` (Cosmo's key of the same name). A token
   * that is sent is still verified; `introspection.enabled: false` still refuses
   * introspection. Default: `false`.
   */
  ignore_introspection: z.boolean().default(false),
  /**
   * Claims of a valid token sent to every subgraph as headers: `{ claim: header-name }`
   * (`{ sub: x-user-id }`). Without a token (or without the claim) the header is not
   * sent, and a client header of that name is dropped (it cannot be spoofed). Default: none.
   */
  forward_claims: z.record(z.string().min(1), claimHeaderName).default(() => ({})),
  jwt: z.strictObject({
    /** Key sets of the identity providers whose tokens are accepted; tried in order. At least one. */
    jwks: z.array(jwksProviderSchema).min(1),
    /** Request header carrying the token. Default: `Authorization`. */
    header_name: z.string().regex(HTTP_HEADER_NAME, { error: "must be an HTTP header name (letters, digits and !#$%&'*+-.^_`|~; no spaces, no colon)" }).default('Authorization'),
    /**
     * Scheme before the token in that header (`Bearer <token>`); empty: the header is the token.
     * Spaces around it are dropped (`"Bearer "` reads as `Bearer`). Default: `Bearer`.
     */
    header_value_prefix: z.string().trim().default('Bearer'),
    /** Clock difference tolerated when checking `exp` and `nbf`; rounded up to whole seconds (JWT times are seconds). Default: `10s`. */
    clock_skew: duration({ min: '0ms', max: '5m' }).prefault('10s'),
  }),
});

/** `authentication` as written in the file. */
export type AuthenticationConfigInput = z.input<typeof authenticationConfigSchema>;
/** `authentication` with defaults filled in (durations in ms). */
export type AuthenticationConfig = z.output<typeof authenticationConfigSchema>;
/** One `authentication.jwt.jwks[]` entry with defaults filled in. */
export type JwksProviderConfig = AuthenticationConfig['jwt']['jwks'][number];

/** The `authentication` section: the plugin is on whenever the section is there. */
export const authenticationSection = defineConfigSection({
  key: 'authentication',
  plugin: 'authentication',
  schema: authenticationConfigSchema,
  async fromConfig(section): Promise<SwitchyardPlugin[]> {
    if (!section) return [];
    const { useAuthentication } = await import('./index.js');
    return [useAuthentication.fromParsed(section)];
  },
});
