/**
 * The cost of a valid token (issue 24): the benchmark operation, with its
 * plan cached, through Switchyard with the `authentication` and
 * `authorization` plugins on vs the same router without them.
 *
 * A local identity provider (servers/jwks-server.ts, in the bench process)
 * serves an RS256 key as a JWKS document on 127.0.0.1; every request, to
 * every contender, carries the same valid token signed with jose
 * (`Authorization: Bearer ...`, with `iss`, `aud` and scopes that allow
 * every field), so the requests are byte for byte the same and the only
 * difference is the plugins. The router with the plugins checks issuer,
 * audience and algorithm (RS256) as a production config would.
 *
 * The graph is the benchmark graph with a few auth directives, all of which
 * the token passes: `@authenticated` on `User.username` and on the `Review`
 * type (so every `reviews` field is judged by it too), and
 * `@requiresScopes` on `Product.name` and `Review.body`. The router without
 * the plugins gets the same supergraph and ignores them. The answer must be
 * the reference answer, so a run fails if the token were refused or any
 * field removed.
 *
 * One token for the whole run is what a client sending its token on every
 * request costs: the plugin remembers a verified token (until it expires or
 * `refresh_interval`, 1 minute, passes), so most requests pay a lookup, the
 * grant and the memoised filtered operation, and one per minute pays an
 * RS256 verification.
 *
 * Warm phases, as `profiling`: the target is a few percent, within what two
 * fresh processes differ by on this machine; `switchyard-twin`, a second
 * router without the plugins, is an A/A control.
 */
import type { BenchRequest, Contender, Launch, LaunchContext, Scenario, TargetCheck } from '../harness/scenario.js';
import { pairedRatioReference, ratioTarget, referenceRatio } from '../harness/targets.js';
import { composeSubgraphs } from '../../src/compose/index.js';
import { benchSubgraphs } from '../graph/subgraphs.js';
import { startJwksIssuer, type JwksIssuer } from '../servers/jwks-server.js';
import { switchyard } from './contenders.js';
import { benchExpected, GRAPHQL_POST } from './federated.js';

const OFF = 'switchyard';
const ON = 'switchyard-auth';
const TWIN = 'switchyard-twin';

/** The scopes the directives below name, and two the operation does not need (a real token carries others). */
const TOKEN_SCOPES = 'read:products read:reviews profile email';

/** Edits of the benchmark subgraphs' SDL: each `from` must occur exactly once in that subgraph. */
const AUTH_EDITS: Readonly<Record<string, ReadonlyArray<readonly [from: string, to: string]>>> = {
  accounts: [['username: String!', 'username: String! @authenticated']],
  products: [['name: String!', 'name: String! @requiresScopes(scopes: [["read:products"], ["admin"]])']],
  reviews: [
    ['type Review @key(fields: "id")', 'type Review @key(fields: "id") @authenticated'],
    ['body: String!', 'body: String! @requiresScopes(scopes: [["read:reviews", "profile"], ["admin"]])'],
  ],
};

const V23_LINK = 'federation/v2.3", import: [';
/** @authenticated and @requiresScopes need Federation v2.5. */
const V25_LINK = 'federation/v2.5", import: ["@authenticated", "@requiresScopes", ';

function replaceOnce(sdl: string, from: string, to: string, where: string): string {
  const at = sdl.indexOf(from);
  if (at < 0 || sdl.indexOf(from, at + from.length) >= 0) throw new Error(`auth scenario: "${from}" must occur once in the ${where} subgraph's SDL`);
  return sdl.slice(0, at) + to + sdl.slice(at + from.length);
}

/** The benchmark supergraph with the auth directives above. */
function authSupergraph(urls: Readonly<Record<string, string>>): string {
  const composed = composeSubgraphs(
    benchSubgraphs.map((subgraph) => {
      const url = urls[subgraph.name];
      if (!url) throw new Error(`no URL for benchmark subgraph "${subgraph.name}"`);
      let sdl = replaceOnce(subgraph.sdl, V23_LINK, V25_LINK, subgraph.name);
      for (const [from, to] of AUTH_EDITS[subgraph.name] ?? []) sdl = replaceOnce(sdl, from, to, subgraph.name);
      return { name: subgraph.name, url, sdl };
    }),
    'the benchmark subgraphs with auth directives',
  );
  return composed.supergraphSdl;
}

/** The identity provider and the token, made once per bench run by the first launch. */
let issuer: Promise<{ readonly issuer: JwksIssuer; readonly headers: Readonly<Record<string, string>> }> | undefined;
let headers: Readonly<Record<string, string>> | undefined;

function startIssuer() {
  issuer ??= (async () => {
    const started = await startJwksIssuer();
    const token = await started.sign({ scope: TOKEN_SCOPES }, { subject: 'bench-user' });
    headers = { ...GRAPHQL_POST.headers, authorization: `Bearer ${token}` };
    return { issuer: started, headers };
  })();
  return issuer;
}

/**
 * The benchmark request with the token. Its headers are read only after a
 * contender has been launched (every launch here starts the issuer first);
 * the harness takes the request object earlier, so they are a getter.
 */
const AUTH_REQUEST: BenchRequest = {
  method: GRAPHQL_POST.method,
  path: GRAPHQL_POST.path,
  body: GRAPHQL_POST.body,
  get headers(): Readonly<Record<string, string>> {
    if (!headers) throw new Error('auth scenario: the token is read before the identity provider started');
    return headers;
  },
};

/** A contender whose launch starts the identity provider first, so the request's token exists whichever contender runs first. */
function withIssuer(contender: Contender): Contender {
  return {
    ...contender,
    async launch(context: LaunchContext): Promise<Launch> {
      await startIssuer();
      return contender.launch(context);
    },
  };
}

const ON_LABEL = 'Switchyard, authentication + authorization, valid RS256 token';

/** The router with both plugins, its provider pointed at the local JWKS server. */
function authenticated(): Contender {
  const checkLog = (log: string): string | undefined =>
    !log.includes('JWT authentication enabled')
      ? 'the router did not log "JWT authentication enabled"'
      : !log.includes('Authorization enabled')
        ? 'the router did not log "Authorization enabled"'
        : log.includes('JWKS fetch failed')
          ? 'a JWKS fetch failed (see its log)'
          : undefined;
  return {
    ...switchyard({ id: ON, label: ON_LABEL, baseline: OFF, checkLog }),
    async launch(context: LaunchContext): Promise<Launch> {
      const { issuer: idp } = await startIssuer();
      const config = {
        authentication: { jwt: { jwks: [{ url: idp.url, algorithms: ['RS256'], issuer: idp.issuer, audience: idp.audience }] } },
        authorization: { require_authentication: false, reject_operation_if_unauthorized: false },
      };
      return switchyard({ id: ON, label: ON_LABEL, baseline: OFF, config, checkLog }).launch(context);
    },
  };
}

/** What the identity provider served: shown with the targets, not judged (the answer check already proves the token verified). */
async function jwksFetches(): Promise<TargetCheck> {
  const name = 'key set fetches served by the local JWKS server (at least one per start of the router with the plugins)';
  if (!issuer) return { name, shown: 'not started' };
  const { issuer: idp } = await issuer;
  return { name, value: idp.fetches(), shown: `${idp.fetches()} (${idp.url})` };
}

export const authScenario: Scenario = {
  name: 'auth',
  description:
    'Switchyard with authentication + authorization (local RS256 JWKS, a valid token on every request, a few passing auth directives) vs without, cached plan, benchmark operation, warm phases, 8 rounds over 4 starts, with an identical second router as an A/A control',
  request: AUTH_REQUEST,
  defaultRounds: 8,
  warmPhases: { settleSeconds: 15, starts: 4 },
  ratioLabel: 'req/s / no auth plugins',
  supergraph: authSupergraph,
  contenders: [
    withIssuer(switchyard({ id: OFF, label: 'Switchyard, no auth plugins (token ignored)', baseline: OFF })),
    authenticated(),
    withIssuer(switchyard({ id: TWIN, label: 'Switchyard, no auth plugins: a second process (A/A control)', baseline: OFF })),
  ],
  expected: benchExpected,
  targets: (summaries) => [
    ratioTarget(summaries, ON, OFF, 'cpuMsPerRequest', { atMost: 1.05 }),
    pairedRatioReference(summaries, ON, OFF, 'cpuMsPerRequest', 'CPU ms per request'),
    referenceRatio(summaries, TWIN, OFF, 'cpuMsPerRequest', 'CPU ms per request of two identical routers (A/A control: how far apart this run puts equal costs)'),
    pairedRatioReference(summaries, TWIN, OFF, 'cpuMsPerRequest', 'CPU ms per request of two identical routers'),
    referenceRatio(summaries, ON, OFF, 'rps', 'req/s'),
  ],
  afterRounds: async () => [await jwksFetches()],
};
