/**
 * What completing an object does, worked out once per selection set, object
 * type and message type: for each response key, whether it is `__typename`,
 * a field resolver, a message field (its proto name, slot and GraphQL type)
 * or always null. List items share one plan, and so do later fetches of the
 * same operation text when no `@skip` / `@include` made the selection depend
 * on variables (fetch texts are parsed once, so their nodes are the same).
 */
import {
  isAbstractType,
  isEnumType as isGraphQLEnum,
  isListType,
  isNonNullType,
  isObjectType,
  type FieldNode,
  type GraphQLField,
  type GraphQLObjectType,
  type GraphQLOutputType,
  type SelectionSetNode,
} from 'graphql';
import type { Type } from 'protobufjs';
import { collectFields, subSelections, type CollectContext, type VariableUse } from './collect-fields.js';
import { slotOf, type Slot } from './proto-slot.js';
import type { ResolverRpc, ServiceModel } from './service-model.js';

/** What completing a value of a GraphQL output type does, non-null stripped (schema types live as long as the graph). */
export type TypeKind =
  | { readonly kind: 'list'; readonly item: TypeKind }
  | { readonly kind: 'enum' | 'abstract' | 'scalar'; readonly name: string }
  | { readonly kind: 'object'; readonly name: string; readonly type: GraphQLObjectType };

const kinds = new WeakMap<GraphQLOutputType, TypeKind>();

/** The kind of `type`, computed once per type. */
export function kindOf(type: GraphQLOutputType): TypeKind {
  let kind = kinds.get(type);
  if (!kind) {
    const nullable = isNonNullType(type) ? type.ofType : type;
    if (isListType(nullable)) kind = { kind: 'list', item: kindOf(nullable.ofType) };
    else if (isObjectType(nullable)) kind = { kind: 'object', name: nullable.name, type: nullable };
    else kind = { kind: isGraphQLEnum(nullable) ? 'enum' : isAbstractType(nullable) ? 'abstract' : 'scalar', name: nullable.name };
    kinds.set(type, kind);
  }
  return kind;
}

/** One response key of an object and where its value comes from. */
export type FieldStep =
  | { readonly kind: 'typename'; readonly key: string; readonly typeName: string }
  /** Not a field of the type, or absent from the message (an @external or @requires field, filled by another RPC or not at all). */
  | { readonly kind: 'null'; readonly key: string }
  | {
      readonly kind: 'resolver';
      readonly key: string;
      readonly resolver: ResolverRpc;
      readonly field: GraphQLField<unknown, unknown>;
      readonly nodes: readonly FieldNode[];
    }
  | {
      readonly kind: 'value';
      readonly key: string;
      /** The message field carrying the value. */
      readonly protoName: string;
      readonly slot: Slot;
      readonly type: TypeKind;
      readonly nodes: readonly FieldNode[];
      /** The selection sets under the field's nodes. */
      readonly selections: readonly SelectionSetNode[];
    };

type PlansByType = Map<GraphQLObjectType, Map<Type, readonly FieldStep[]>>;

/** Plans that hold for any variables, by model and selection set. */
const sharedPlans = new WeakMap<ServiceModel, WeakMap<SelectionSetNode, PlansByType>>();

/** Object plans for one fetch: shared ones when they hold for any variables, the fetch's own otherwise. */
export class ObjectPlans {
  private readonly shared: WeakMap<SelectionSetNode, PlansByType>;
  private readonly own = new Map<SelectionSetNode, PlansByType>();

  constructor(
    private readonly model: ServiceModel,
    private readonly collect: CollectContext,
  ) {
    let shared = sharedPlans.get(model);
    if (!shared) sharedPlans.set(model, (shared = new WeakMap()));
    this.shared = shared;
  }

  /** The steps completing an object of `type` read from a `messageType` message, for `selections`. */
  stepsFor(type: GraphQLObjectType, messageType: Type, selections: readonly SelectionSetNode[]): readonly FieldStep[] {
    if (selections.length !== 1) return this.plan(type, messageType, selections, { variables: false });
    const selection = selections[0]!;
    const found = this.shared.get(selection)?.get(type)?.get(messageType) ?? this.own.get(selection)?.get(type)?.get(messageType);
    if (found) return found;
    const use: VariableUse = { variables: false };
    const steps = this.plan(type, messageType, selections, use);
    const store = use.variables ? this.own : this.shared;
    let byType = store.get(selection);
    if (!byType) store.set(selection, (byType = new Map()));
    let byMessage = byType.get(type);
    if (!byMessage) byType.set(type, (byMessage = new Map()));
    byMessage.set(messageType, steps);
    return steps;
  }

  private plan(type: GraphQLObjectType, messageType: Type, selections: readonly SelectionSetNode[], use: VariableUse): FieldStep[] {
    const definitions = type.getFields();
    const steps: FieldStep[] = [];
    for (const [key, nodes] of collectFields(this.collect, type, selections, use)) {
      const name = nodes[0]!.name.value;
      const field = definitions[name];
      if (name === '__typename') {
        steps.push({ kind: 'typename', key, typeName: type.name });
        continue;
      }
      if (!field) {
        steps.push({ kind: 'null', key });
        continue;
      }
      const resolver = this.model.resolvers.get(`${type.name}.${name}`);
      if (resolver) {
        steps.push({ kind: 'resolver', key, resolver, field, nodes });
        continue;
      }
      const protoField = messageType.fields[this.model.protoField(type.name, name)];
      if (!protoField) {
        steps.push({ kind: 'null', key });
        continue;
      }
      steps.push({ kind: 'value', key, protoName: protoField.name, slot: slotOf(protoField), type: kindOf(field.type), nodes, selections: subSelections(nodes) });
    }
    return steps;
  }
}
