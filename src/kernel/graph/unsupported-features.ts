/**
 * Federation features a supergraph can use that Switchyard's planner does not
 * implement. Loading such a supergraph would serve wrong data silently, so it
 * is refused with `SUPERGRAPH_INVALID` naming the field and the feature.
 */
import { Kind, type ConstDirectiveNode } from 'graphql';
import { RouterError } from '../errors.js';
import { parseOverrideLabel } from './override-label.js';

/**
 * Throws for a `@join__field` on `owner` (`Type.field`) that needs a feature
 * the planner lacks: contextual arguments (`@context`/`@fromContext`), or a
 * progressive override label Switchyard cannot honour.
 */
export function refuseUnsupportedJoinField(owner: string, directive: ConstDirectiveNode): void {
  const contextArguments = argument(directive, 'contextArguments');
  if (contextArguments && contextArguments.kind !== Kind.NULL && !(contextArguments.kind === Kind.LIST && contextArguments.values.length === 0)) {
    throw unsupported(`@fromContext/@context (contextArguments on ${owner}) is not supported`);
  }
  const label = argument(directive, 'overrideLabel');
  if (label?.kind !== Kind.STRING) return;
  const parsed = parseOverrideLabel(label.value);
  if (parsed.kind === 'malformed') {
    throw unsupported(`${owner}: @override label "${label.value}" is not a valid percent(x) with 0 <= x <= 100`);
  }
  if (parsed.kind === 'percent' && parsed.percent !== 0 && parsed.percent !== 100) {
    throw unsupported(`${owner}: progressive @override label "${label.value}" is not supported; only percent(0), percent(100) and custom labels (never active in Switchyard) are`);
  }
}

function argument(directive: ConstDirectiveNode, name: string) {
  return directive.arguments?.find((a) => a.name.value === name)?.value;
}

function unsupported(message: string): RouterError {
  return new RouterError('SUPERGRAPH_INVALID', `invalid supergraph: ${message}`);
}
