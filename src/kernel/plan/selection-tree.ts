import { Kind, print, type ArgumentNode, type ValueNode } from 'graphql';

/** One field in a subgraph selection being built. */
export interface TreeField {
  /** Key under which the subgraph answers it (alias or name). */
  readonly responseKey: string;
  readonly name: string;
  readonly arguments: readonly ArgumentNode[];
  /** Printed arguments, to tell `f(a: 1)` from `f(a: 2)`. */
  readonly argumentsKey: string;
  /** Sub-selection, for composite fields. */
  readonly children: SelectionTree | undefined;
  /** The field's type in the subgraph (`ID!`), to tell fields that cannot share a key apart. */
  readonly typeText: string;
}

/**
 * A mutable selection set for one subgraph fetch: fields by response key and
 * inline fragments by type condition, printed once when the plan is built.
 */
export class SelectionTree {
  readonly fields = new Map<string, TreeField>();
  readonly fragments = new Map<string, SelectionTree>();
  /** For a fragment's tree: the tree the fragment sits in (same response objects). */
  private readonly outer: SelectionTree | undefined;
  /**
   * On the outermost tree of a level: every field of the level (its own and
   * its fragments', nested ones too) by response key, so a new field is
   * checked against the fields sharing its key only, not against every
   * fragment (a selection with thousands of fragments stays linear).
   */
  private byKey: Map<string, TreeField[]> | undefined;

  constructor(outer?: SelectionTree) {
    this.outer = outer;
  }

  get isEmpty(): boolean {
    return this.fields.size === 0 && this.fragments.size === 0;
  }

  /**
   * Adds a field under `responseKey`, or returns the one already there when it
   * is the same field with the same arguments. Returns undefined when the key
   * is taken by a different field (the caller then picks another key).
   */
  add(responseKey: string, name: string, args: readonly ArgumentNode[], composite: boolean, typeText = ''): TreeField | undefined {
    const argumentsKey = printArguments(args);
    const existing = this.fields.get(responseKey);
    if (existing) {
      if (existing.name !== name || existing.argumentsKey !== argumentsKey) return undefined;
      return existing;
    }
    // Sibling fragments answer into the same objects: one key may not hold fields of different types.
    const level = this.level();
    level.byKey ??= new Map();
    const sharing = level.byKey.get(responseKey);
    for (const other of sharing ?? []) {
      if (other.name !== name || other.argumentsKey !== argumentsKey || (typeText && other.typeText && other.typeText !== typeText)) return undefined;
    }
    const field: TreeField = {
      responseKey,
      name,
      arguments: args,
      argumentsKey,
      children: composite ? new SelectionTree() : undefined,
      typeText,
    };
    this.fields.set(responseKey, field);
    if (sharing) sharing.push(field);
    else level.byKey.set(responseKey, [field]);
    return field;
  }

  addTypename(): void {
    this.add('__typename', '__typename', [], false);
  }

  /** The tree of the response objects this tree selects on (fragments climb to their outer tree). */
  private level(): SelectionTree {
    let tree: SelectionTree = this;
    while (tree.outer) tree = tree.outer;
    return tree;
  }

  fragment(typeCondition: string): SelectionTree {
    let tree = this.fragments.get(typeCondition);
    if (!tree) {
      tree = new SelectionTree(this);
      this.fragments.set(typeCondition, tree);
    }
    return tree;
  }

  /** Fields in the selection, nested ones included (`__typename` not counted). */
  fieldCount(): number {
    let count = 0;
    for (const field of this.fields.values()) {
      if (field.name !== '__typename') count++;
      if (field.children) count += field.children.fieldCount();
    }
    for (const tree of this.fragments.values()) count += tree.fieldCount();
    return count;
  }

  /** GraphQL text of the selection set, `{ ... }`. */
  print(): string {
    const parts: string[] = [];
    for (const field of this.fields.values()) {
      let text = field.responseKey === field.name ? field.name : `${field.responseKey}: ${field.name}`;
      if (field.argumentsKey) text += `(${field.argumentsKey})`;
      if (field.children) text += ` ${field.children.printOrTypename()}`;
      parts.push(text);
    }
    for (const [typeCondition, tree] of this.fragments) {
      if (!tree.isEmpty) parts.push(`... on ${typeCondition} ${tree.print()}`);
    }
    return `{ ${parts.join(' ')} }`;
  }

  /** A composite field must select something; `__typename` is the cheapest valid choice. */
  private printOrTypename(): string {
    if (this.fields.size === 0 && [...this.fragments.values()].every((f) => f.isEmpty)) return '{ __typename }';
    return this.print();
  }

  /** Names of the variables the selection's arguments read. */
  collectVariables(into: Set<string>): Set<string> {
    for (const field of this.fields.values()) {
      for (const argument of field.arguments) collectValueVariables(argument.value, into);
      field.children?.collectVariables(into);
    }
    for (const tree of this.fragments.values()) tree.collectVariables(into);
    return into;
  }
}

function printArguments(args: readonly ArgumentNode[]): string {
  if (args.length === 0) return '';
  return args.map((arg) => `${arg.name.value}: ${print(arg.value)}`).join(', ');
}

function collectValueVariables(value: ValueNode, into: Set<string>): void {
  if (value.kind === Kind.VARIABLE) into.add(value.name.value);
  else if (value.kind === Kind.LIST) for (const item of value.values) collectValueVariables(item, into);
  else if (value.kind === Kind.OBJECT) for (const field of value.fields) collectValueVariables(field.value, into);
}
