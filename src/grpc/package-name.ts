/**
 * Proto package and service names of generated gRPC services.
 * `grpc-service generate -p` takes any proto package, as wgc does
 * (`protoPackageProblem`); Connect contracts, named after their folder, keep
 * a version segment as `buf lint` asks (`packageNameProblem`). A service
 * generated without a name argument is named after its package
 * (`serviceNameFor`).
 */

/** Package of a generated service when `-p` is not given. */
export const DEFAULT_PACKAGE = 'service.v1';

const SEGMENT = /^[a-z][a-z0-9_]*$/;
/** buf's PACKAGE_VERSION_SUFFIX forms: v1, v1beta1, v1alpha, v2test, v1p1beta1. */
const VERSION = /^v[1-9][0-9]*(p[1-9][0-9]*)?((alpha|beta)[1-9]?[0-9]*|test[a-z0-9]*)?$/;

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

/**
 * Why `name` cannot be the package of a generated service, or `undefined`
 * when it can: dot-separated proto identifiers, with or without a version
 * segment (`service.v1`, `service`, `Acme.Catalog`). wgc writes any text it
 * is given; text that is not a package would give a proto nothing can load.
 */
export function protoPackageProblem(name: string): string | undefined {
  const bad = name.split('.').find((segment) => !IDENTIFIER.test(segment));
  if (bad === undefined) return undefined;
  return `"${name}" is not a proto package: ${bad === '' ? 'it has an empty segment' : `segment "${bad}" must start with a letter or _ and use only letters, digits and _`}`;
}

/** Why a Connect contract's package name cannot be used (it needs a version segment), or `undefined` when it can. */
export function packageNameProblem(name: string): string | undefined {
  const segments = name.split('.');
  if (segments.length < 2) return `"${name}" has no version segment; use a name such as ${DEFAULT_PACKAGE} or acme.projects.v1`;
  const bad = segments.find((segment) => !SEGMENT.test(segment));
  if (bad !== undefined) {
    return `"${name}": segment "${bad}" must start with a lower-case letter and use only a-z, 0-9 and _`;
  }
  const last = segments[segments.length - 1]!;
  if (!VERSION.test(last)) return `"${name}" must end with a version segment such as v1 or v1beta1 (found "${last}")`;
  return undefined;
}

/**
 * The service name for a package: its last non-version segment in
 * PascalCase plus `Service` (`service.v1` -> `ServiceService`,
 * `acme.order_items.v2` -> `OrderItemsService`, `v2api.v1` -> `V2ApiService`).
 */
export function serviceNameFor(packageName: string): string {
  const segments = packageName.split('.');
  const base = segments.length > 1 ? segments[segments.length - 2]! : segments[0]!;
  // Words as lodash's camelCase (which wgc uses) finds them: runs of letters, runs of digits.
  const words = base.match(/[a-z]+|[0-9]+/g) ?? [];
  const pascal = words.map((word) => word[0]!.toUpperCase() + word.slice(1)).join('');
  return `${pascal}Service`;
}
