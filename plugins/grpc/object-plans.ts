/**
 * What completing an object does, worked out once per selection set, object
 * type and message type: for each response key, whether it is `__typename`,
 * a field resolver, a message field (its field number and how to read it)
 * or always null, and which keys each field number fills. List items share
 * one plan, and so do later fetches of the same operation text when no
 * `@skip` / `@include` made the selection depend on variables (fetch texts
 * are parsed once, so their nodes are the same).
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
import { slotOf } from './proto-slot.js';
import type { ResolverRpc, ServiceModel } from './service-model.js';
import { Codecs, type Codec } from './value-codecs.js';

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
  /**
   * Not a field of the type, or absent from the message (an @external or
   * @requires field, filled by another RPC or not at all). Fields the
   * message should have were checked when the subgraph loaded (src/grpc/message-fields.ts).
   */
  | { readonly kind: 'null'; readonly key: string }
  | {
      readonly kind: 'resolver';
      readonly key: string;
      readonly resolver: ResolverRpc;
      readonly field: GraphQLField<unknown, unknown>;
      readonly nodes: readonly FieldNode[];
    }
  | ValueStep;

/** A response key read from a message field. */
export interface ValueStep {
  readonly kind: 'value';
  readonly key: string;
  /** Number of the message field carrying the value. */
  readonly number: number;
  readonly codec: Codec;
  /** The selection sets under the field's nodes. */
  readonly selections: readonly SelectionSetNode[];
}

/** The plan of one object. */
export interface ObjectPlan {
  /** Every response key, in selection order. */
  readonly steps: readonly FieldStep[];
  /**
   * The value steps a field number fills (several when a field is selected
   * under several keys), indexed by field number: generated messages number
   * their fields from 1 up, so an array lookup per field read beats a map's.
   */
  readonly byNumber: ReadonlyArray<readonly ValueStep[] | undefined>;
  /** Whether a step is a field resolver (which reads the message's fields itself). */
  readonly hasResolvers: boolean;
  /** Whether the plan holds for any variables and is kept for later fetches (then worth compiling, compiled-object.ts). */
  readonly shared: boolean;
}

type PlansByType = Map<GraphQLObjectType, Map<Type, ObjectPlan>>;

interface SharedPlans {
  readonly codecs: Codecs;
  readonly bySelection: WeakMap<SelectionSetNode, PlansByType>;
}

/** Codecs, and plans that hold for any variables, by model. */
const sharedPlans = new WeakMap<ServiceModel, SharedPlans>();

/** The codecs of a compiled service. */
export function codecsOf(model: ServiceModel): Codecs {
  return shared(model).codecs;
}

function shared(model: ServiceModel): SharedPlans {
  let found = sharedPlans.get(model);
  if (!found) sharedPlans.set(model, (found = { codecs: new Codecs(model, model.schema), bySelection: new WeakMap() }));
  return found;
}

/** Object plans for one fetch: shared ones when they hold for any variables, the fetch's own otherwise. */
export class ObjectPlans {
  private readonly shared: WeakMap<SelectionSetNode, PlansByType>;
  private readonly own = new Map<SelectionSetNode, PlansByType>();
  /** How fields are read. */
  readonly codecs: Codecs;

  constructor(
    private readonly model: ServiceModel,
    private readonly collect: CollectContext,
  ) {
    const plans = shared(model);
    this.shared = plans.bySelection;
    this.codecs = plans.codecs;
  }

  /** The last plan handed out, and what for: the items of a list ask for the same one in turn. */
  private last: { selections: readonly SelectionSetNode[]; type: GraphQLObjectType; messageType: Type; plan: ObjectPlan } | undefined;

  /** The plan completing an object of `type` read from a `messageType` message, for `selections`. */
  planFor(type: GraphQLObjectType, messageType: Type, selections: readonly SelectionSetNode[]): ObjectPlan {
    const last = this.last;
    if (last !== undefined && last.selections === selections && last.type === type && last.messageType === messageType) return last.plan;
    const plan = this.lookUp(type, messageType, selections);
    this.last = { selections, type, messageType, plan };
    return plan;
  }

  private lookUp(type: GraphQLObjectType, messageType: Type, selections: readonly SelectionSetNode[]): ObjectPlan {
    if (selections.length !== 1) return this.plan(type, messageType, selections, { variables: false }, false);
    const selection = selections[0]!;
    const found = this.shared.get(selection)?.get(type)?.get(messageType) ?? this.own.get(selection)?.get(type)?.get(messageType);
    if (found) return found;
    const use: VariableUse = { variables: false };
    const plan = this.plan(type, messageType, selections, use, true);
    const store = plan.shared ? this.shared : this.own;
    let byType = store.get(selection);
    if (!byType) store.set(selection, (byType = new Map()));
    let byMessage = byType.get(type);
    if (!byMessage) byType.set(type, (byMessage = new Map()));
    byMessage.set(messageType, plan);
    return plan;
  }

  /** The plan of `type` from `messageType`; `keep`: it is stored for later fetches unless it turns out to depend on variables. */
  private plan(type: GraphQLObjectType, messageType: Type, selections: readonly SelectionSetNode[], use: VariableUse, keep: boolean): ObjectPlan {
    const definitions = type.getFields();
    const steps: FieldStep[] = [];
    const byNumber: ValueStep[][] = [];
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
      const step: ValueStep = { kind: 'value', key, number: protoField.id, codec: this.codecs.codecFor(slotOf(protoField), kindOf(field.type)), selections: subSelections(nodes) };
      steps.push(step);
      const same = byNumber[step.number];
      if (same) same.push(step);
      else byNumber[step.number] = [step];
    }
    return { steps, byNumber, hasResolvers: steps.some((step) => step.kind === 'resolver'), shared: keep && !use.variables };
  }
}
