/**
 * Compiled entity collection: for a fetch node of an operation seen more
 * than once, finding the entity positions and building the deduplicated
 * representations is generated JavaScript (collect-codegen.ts): nested loops
 * along the merge path with property loads, one object literal per
 * representation, no per-position objects or path links. Whatever it
 * declines, the general code (`ResponseTree.collect` + `buildEntityBatch`)
 * does for the whole fetch; the batch is the same either way.
 */
import { compileGenerated } from '../code-generation.js';
import { assertSameResult, CompiledCache, compiledChecks } from '../compiled-code.js';
import type { FetchNode, PathSegment } from '../plan/query-plan.js';
import { generateCollectSource } from './collect-codegen.js';
import { MULTI } from './object-parts.js';
import { buildEntityBatch, type EntityBatch, type TypeFacts } from './representations.js';
import type { JsonObject, ResponseTree } from './response-tree.js';

type Extras = ReadonlyMap<JsonObject, readonly JsonObject[]>;
type CollectFn = (object: JsonObject, more: readonly JsonObject[] | undefined, extras: Extras, batch: CompiledBatch) => boolean;

/** A fetch node's compiled collector, with what its batches need to know of the merge path. */
interface Collector {
  readonly collect: CollectFn;
  /** How many list levels (`@`) the merge path crosses. */
  readonly lists: number;
}

/** A batch the compiled code fills; a representation's path is spelled from the list indices of its first position. */
class CompiledBatch implements EntityBatch {
  readonly representations: JsonObject[] = [];
  readonly targets: JsonObject[][] = [];
  /** Per representation, the list indices of its first position (`lists` of them). */
  readonly indices: number[] = [];
  /** The last representation with a given first key value; `sameFirst` links it to the one before with that value. */
  readonly byFirst = new Map<unknown, number>();
  readonly sameFirst: Array<number | undefined> = [];

  constructor(
    private readonly mergePath: readonly PathSegment[],
    private readonly lists: number,
  ) {}

  pathOf(index: number): ReadonlyArray<string | number> {
    const path: Array<string | number> = [];
    let next = index * this.lists;
    for (const segment of this.mergePath) {
      if (segment === '@') path.push(this.indices[next++]!);
      else if (!segment.startsWith('... on ')) path.push(segment);
    }
    return path;
  }
}

/** What the generated code receives as `H`. */
interface CollectHelpers {
  readonly MULTI: typeof MULTI;
  readonly typenameOf: (object: JsonObject, more: readonly JsonObject[] | undefined) => string | undefined;
  readonly satisfiesAny: (object: JsonObject, more: readonly JsonObject[] | undefined, condition: string) => boolean;
  readonly satisfies: (typename: string, condition: string) => boolean;
  readonly same: (a: unknown, b: unknown) => boolean;
}

const collectors = new CompiledCache<FetchNode, TypeFacts, Collector>((node, facts) => {
  const source = generateCollectSource(node.mergePath, node.representations ?? []);
  if (source === undefined) return undefined;
  const collect = compileGenerated<CollectHelpers, CollectFn>(source, helpersFor(facts));
  return collect && { collect, lists: node.mergePath.filter((segment) => segment === '@').length };
});

/**
 * The entity batch of a fetch: by its compiled collector when it has one
 * and it accepts this tree, else by the general code. Undefined when there
 * is nothing to fetch.
 */
export function collectEntityBatch(tree: ResponseTree, node: FetchNode, facts: TypeFacts): EntityBatch | undefined {
  const compiled = compiledBatch(tree, node, facts);
  if (compiled && compiledChecks.enabled) assertSameResult('entity collector', describe(compiled), describe(generalBatch(tree, node, facts)));
  const batch = compiled ?? generalBatch(tree, node, facts);
  return batch && batch.representations.length > 0 ? batch : undefined;
}

function compiledBatch(tree: ResponseTree, node: FetchNode, facts: TypeFacts): EntityBatch | undefined {
  const collector = collectors.get(node, facts);
  if (!collector) return undefined;
  const view = tree.viewOf(tree.roots);
  if (view.length === 0) return undefined;
  const batch = new CompiledBatch(node.mergePath, collector.lists);
  return collector.collect(view[0]!, view.length > 1 ? view.slice(1) : undefined, tree.extrasMap(), batch) ? batch : undefined;
}

function generalBatch(tree: ResponseTree, node: FetchNode, facts: TypeFacts): EntityBatch | undefined {
  const entities = tree.collect(node.mergePath, facts.satisfies);
  if (entities.length === 0) return undefined;
  return buildEntityBatch(tree, entities, node.representations ?? [], facts);
}

/** A batch as checks compare it: representations, targets by identity (as the index of each target), first paths. */
function describe(batch: EntityBatch | undefined): unknown {
  if (!batch || batch.representations.length === 0) return null;
  const ids = new Map<JsonObject, number>();
  const targets = batch.targets.map((list) => list.map((target) => ids.get(target) ?? ids.set(target, ids.size).size - 1));
  return { representations: batch.representations, targets, paths: batch.representations.map((_, i) => batch.pathOf(i)) };
}

function helpersFor(facts: TypeFacts): CollectHelpers {
  return {
    MULTI,
    satisfies: facts.satisfies,
    typenameOf(object, more) {
      // As runtimeTypenameOf: the first object type reported, else the first name reported.
      const own = object.__typename;
      if (more === undefined) return typeof own === 'string' ? own : undefined;
      if (typeof own === 'string' && facts.isObjectType(own)) return own;
      let first = typeof own === 'string' ? own : undefined;
      for (const part of more) {
        const name = part.__typename;
        if (typeof name !== 'string') continue;
        if (facts.isObjectType(name)) return name;
        first ??= name;
      }
      return first;
    },
    satisfiesAny(object, more, condition) {
      const own = object.__typename;
      if (typeof own === 'string' && facts.satisfies(own, condition)) return true;
      for (const part of more ?? []) if (typeof part.__typename === 'string' && facts.satisfies(part.__typename, condition)) return true;
      return false;
    },
    // Scalars equal as buildEntityBatch's keys compare them (its keys spell NaN as NaN).
    same: (a, b) => a === b || (a !== a && b !== b),
  };
}
