import { Kind, type SelectionSetNode } from 'graphql';
import type { FederationIndex } from '../graph/federation-index.js';

/** One step of a response path from the operation's root: a field, or a type condition. */
export type UnionPathStep =
  | { readonly kind: 'field'; readonly field: { readonly name: string }; readonly parentType: string }
  | { readonly kind: 'fragment'; readonly typeCondition: string };

/**
 * Members of a union whose member list differs per subgraph ("partial
 * union") that the response may contain at a position, or undefined when
 * the plan's subgraph's own members apply.
 *
 * The reading of the federation-gateway-audit (and of Hive's Rust planner):
 * when more than one subgraph could serve the union field at this path —
 * through the same shareable fields, or after an entity jump to another
 * subgraph — the answer must not depend on which one the planner picks, so
 * only the members every candidate subgraph has are resolved. Fragments on
 * the other members are not sent; an object of such a member keeps only its
 * `__typename`, and the client's fields on it come back null.
 *
 * `steps` lead from the operation's root to the union field (that field is
 * the last step); `planned` is the subgraph the plan fetches it from.
 */
export function sharedUnionMembers(index: FederationIndex, rootType: string, steps: readonly UnionPathStep[], unionType: string, planned: string): readonly string[] | undefined {
  const last = steps.at(-1);
  if (last?.kind !== 'field' || !membersDiffer(index, unionType)) return undefined;
  // Most union fields have one subgraph that resolves them: nothing to compare then.
  if (!index.subgraphNames().some((s) => s !== planned && index.canResolve(last.parentType, last.field.name, s))) return undefined;
  // The answer depends only on the path and the subgraph: plans of other operations reuse it.
  let memo = memos.get(index);
  if (!memo) memos.set(index, (memo = new Map()));
  const key = `${planned}|${rootType}|${steps.map((step) => (step.kind === 'field' ? step.field.name : `~${step.typeCondition}`)).join('|')}`;
  if (memo.has(key)) return memo.get(key);
  const members = computeSharedMembers(index, rootType, steps, last.field.name, unionType, planned);
  // Paths are many in a recursive schema: keep the memo bounded.
  if (memo.size >= MEMO_LIMIT) memo.clear();
  memo.set(key, members);
  return members;
}

const memos = new WeakMap<FederationIndex, Map<string, readonly string[] | undefined>>();
const MEMO_LIMIT = 4096;

function computeSharedMembers(
  index: FederationIndex,
  rootType: string,
  steps: readonly UnionPathStep[],
  fieldName: string,
  unionType: string,
  planned: string,
): readonly string[] | undefined {
  const { candidates, parentType } = candidateSubgraphs(index, rootType, steps);
  candidates.add(planned);
  if (candidates.size < 2) return undefined;
  let shared = index.possibleTypesIn(unionType, planned);
  for (const subgraph of candidates) {
    // A subgraph that returns an object type here (`@join__field(type:)`) has no union to narrow by.
    const declared = index.fieldSource(parentType, fieldName, subgraph)?.type;
    if (declared && declared.replace(/[[\]!]/g, '') !== unionType) return undefined;
    const members = index.possibleTypesIn(unionType, subgraph);
    shared = shared.filter((member) => members.includes(member));
  }
  return shared;
}

/** Whether some subgraph that knows the union lacks one of its members. */
function membersDiffer(index: FederationIndex, unionType: string): boolean {
  const type = index.type(unionType);
  if (type?.kind !== 'UNION') return false;
  for (const graphs of type.unionMembersIn.values()) {
    for (const subgraph of type.subgraphs) if (!graphs.has(subgraph)) return true;
  }
  return false;
}

/**
 * Subgraphs that could resolve the last step of the path, and the type that
 * step's field is on: walking from the root, a subgraph stays a candidate
 * while it resolves each field, and at an entity any subgraph that can look
 * it up by a key one of the candidates resolves joins.
 */
function candidateSubgraphs(index: FederationIndex, rootType: string, steps: readonly UnionPathStep[]): { candidates: Set<string>; parentType: string } {
  let candidates = new Set(index.subgraphNames());
  let type = rootType;
  let parentType = rootType;
  for (const step of steps) {
    if (step.kind === 'fragment') {
      const parent = type;
      type = step.typeCondition;
      candidates = keep(candidates, (s) => index.hasType(type, s) && (!index.isAbstract(parent) || index.isAbstract(type) || index.possibleTypesIn(parent, s).includes(type)));
      continue;
    }
    const name = step.field.name;
    const reachable = new Set(candidates);
    const from = [...candidates];
    for (const subgraph of index.subgraphNames()) {
      if (reachable.has(subgraph)) continue;
      const keys = index.resolvableKeys(type, subgraph);
      if (keys.some((key) => from.some((source) => fieldSetIn(index, type, key.selectionSet, source)))) reachable.add(subgraph);
    }
    candidates = keep(reachable, (s) => index.canResolve(type, name, s));
    parentType = type;
    type = index.field(type, name)?.namedType ?? '';
    if (candidates.size === 0) break;
  }
  return { candidates, parentType };
}

function keep(subgraphs: ReadonlySet<string>, test: (subgraph: string) => boolean): Set<string> {
  return new Set([...subgraphs].filter(test));
}

/** Whether the subgraph resolves every field of a key by itself. */
function fieldSetIn(index: FederationIndex, type: string, set: SelectionSetNode, subgraph: string): boolean {
  return set.selections.every((selection) => {
    if (selection.kind !== Kind.FIELD) return false;
    const name = selection.name.value;
    if (!index.canResolve(type, name, subgraph)) return false;
    return !selection.selectionSet || fieldSetIn(index, index.field(type, name)?.namedType ?? '', selection.selectionSet, subgraph);
  });
}
