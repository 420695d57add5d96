/**
 * Random operations over the gateways-bench graph (graphs/gateways-bench.ts),
 * for differential tests: random fields at each level, aliases, inline
 * fragments and named fragments, several root fields. For any graph, with
 * type conditions and `@skip`/`@include`: generate-schema-operations.ts.
 */
/** Fields of the gateways-bench graph (graphs/gateways-bench.ts) by type. */
const SHAPE: Record<string, { leaves: string[]; composites: Array<[string, string]> }> = {
  Query: {
    leaves: [],
    composites: [
      ['users', 'User'],
      ['topProducts', 'Product'],
      ['topProducts(first: 2)', 'Product'],
      ['me', 'User'],
    ],
  },
  User: { leaves: ['id', 'name', 'username'], composites: [['reviews', 'Review']] },
  Product: { leaves: ['upc', 'name', 'price', 'weight', 'inStock', 'shippingEstimate', 'title(lang: "fr")'], composites: [['reviews', 'Review']] },
  Review: {
    leaves: ['id', 'body'],
    composites: [
      ['author', 'User'],
      ['product', 'Product'],
    ],
  },
};

/** A small seeded generator (mulberry32): the same operations on every run. */
export function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** A random operation: random fields at each level, some aliased, some under `... on Type`, some in a named fragment. */
export function generateOperation(random: () => number): string {
  let aliases = 0;
  const fragments: string[] = [];
  const selection = (type: string, depth: number): string => {
    const { leaves, composites } = SHAPE[type]!;
    const parts: string[] = [];
    for (const leaf of leaves) if (random() < 0.4) parts.push(random() < 0.2 ? `a${aliases++}: ${leaf}` : leaf);
    for (const [field, child] of composites) {
      if (depth >= 5 || random() > (type === 'Query' ? 0.6 : 0.45)) continue;
      const key = type === 'Query' || random() < 0.3 ? `a${aliases++}: ` : '';
      parts.push(`${key}${field} ${selection(child, depth + 1)}`);
    }
    if (parts.length === 0) parts.push(leaves[0] ?? '__typename');
    const roll = random();
    if (type !== 'Query' && roll < 0.15) return `{ ... on ${type} { ${parts.join(' ')} } }`;
    if (type !== 'Query' && roll < 0.25) {
      const name = `F${fragments.length}`;
      fragments.push(`fragment ${name} on ${type} { ${parts.join(' ')} }`);
      return `{ ...${name} }`;
    }
    return `{ ${parts.join(' ')} }`;
  };
  const operation = `query ${selection('Query', 0)}`;
  return [operation, ...fragments].join('\n');
}
