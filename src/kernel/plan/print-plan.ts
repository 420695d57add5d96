import type { FetchNode, PlanNode, QueryPlan, RepresentationField } from './query-plan.js';

/**
 * The plan as indented text, in the shape users of other routers know:
 * `Sequence`, `Parallel`, `Flatten(path:)` and `Fetch(service:)` with the
 * representation fields (`=>` then the selection sent).
 */
export function printQueryPlan(plan: Pick<QueryPlan, 'node'>): string {
  if (!plan.node) return 'QueryPlan {\n}';
  return `QueryPlan {\n${printNode(plan.node, 1)}\n}`;
}

function indent(level: number): string {
  return '  '.repeat(level);
}

function printNode(node: PlanNode, level: number): string {
  const pad = indent(level);
  switch (node.kind) {
    case 'Sequence':
    case 'Parallel':
      return `${pad}${node.kind} {\n${node.nodes.map((n) => printNode(n, level + 1)).join(',\n')}\n${pad}}`;
    case 'Flatten': {
      // A merged fetch looks objects up at several paths in one call.
      const head = node.paths ? `paths: [${node.paths.map((p) => `"${p.join('.')}"`).join(', ')}]` : `path: "${node.path.join('.')}"`;
      return `${pad}Flatten(${head}) {\n${printNode(node.node, level + 1)}\n${pad}}`;
    }
    case 'Fetch':
      return printFetch(node, level);
  }
}

function printFetch(node: FetchNode, level: number): string {
  const pad = indent(level);
  const inner = indent(level + 1);
  const lines = [`${pad}Fetch(service: "${node.subgraph}") {`];
  // A batched call: each aliased `_entities` part with its own paths, representations and selection.
  node.parts?.forEach((part, i) => {
    const paths = part.entries ? part.entries.map((e) => e.path) : [part.mergePath];
    lines.push(`${inner}_${i}(${paths.length > 1 ? `paths: [${paths.map((p) => `"${p.join('.')}"`).join(', ')}]` : `path: "${paths[0]!.join('.')}"`}) {`);
    lines.push(
      ...printFetch(part, level + 1)
        .split('\n')
        .slice(1, -1),
    );
    lines.push(`${inner}}`);
  });
  if (node.parts) {
    lines.push(`${pad}}`);
    return lines.join('\n');
  }
  if (node.representations && node.representations.length > 0) {
    const parts = node.representations.map((spec) => `... on ${spec.typeCondition} { __typename ${printFields(spec.fields)} }`);
    lines.push(`${inner}{ ${parts.join(' ')} } =>`);
  }
  lines.push(`${inner}${node.fetchKind === 'root' && node.operationType !== 'query' ? `${node.operationType} ` : ''}${node.selectionSet}`);
  lines.push(`${pad}}`);
  return lines.join('\n');
}

function printFields(fields: readonly RepresentationField[]): string {
  return fields
    .map((f) => {
      const head = f.responseKey === f.name ? f.name : `${f.responseKey}: ${f.name}`;
      return f.children ? `${head} { ${printFields(f.children)} }` : head;
    })
    .join(' ');
}
