/**
 * `traffic_shaping` policies per subgraph, for the internal plugins that
 * apply them, and `PerSubgraph`, what such a plugin (and the header rules)
 * builds once per subgraph.
 */
import type { CircuitBreakerPolicy, CoreConfig, RetryPolicy } from '../config/core-schema.js';

type TrafficShaping = CoreConfig['traffic_shaping'];

/** What `all` and a subgraph's own section may set. */
interface PolicySection {
  readonly retry?: RetryPolicy | undefined;
  readonly circuit_breaker?: CircuitBreakerPolicy | undefined;
}

export type PolicyName = keyof PolicySection;

/** The policy for `subgraph`: its own section's when it sets one, else `all`'s. */
export function policyFor<N extends PolicyName>(shaping: TrafficShaping, name: N, subgraph: string): NonNullable<PolicySection[N]> {
  const own: PolicySection | undefined = shaping.subgraphs[subgraph];
  const all: PolicySection = shaping.all;
  return (own?.[name] ?? all[name]) as NonNullable<PolicySection[N]>;
}

/** Whether `test` holds for `all`'s policy or any subgraph's own. */
export function anyPolicy<N extends PolicyName>(shaping: TrafficShaping, name: N, test: (policy: NonNullable<PolicySection[N]>) => boolean): boolean {
  const sections: Array<PolicySection | undefined> = [shaping.all, ...Object.values(shaping.subgraphs)];
  return sections.some((section) => {
    const policy = section?.[name];
    return policy !== undefined && test(policy as NonNullable<PolicySection[N]>);
  });
}

/** Per subgraph name, what `make` builds for it, on first use (a reloaded graph may bring new subgraphs). */
export class PerSubgraph<T> {
  private readonly made = new Map<string, T>();

  constructor(private readonly make: (subgraph: string) => T) {}

  for(subgraph: string): T {
    if (this.made.has(subgraph)) return this.made.get(subgraph) as T;
    const value = this.make(subgraph);
    this.made.set(subgraph, value);
    return value;
  }
}
