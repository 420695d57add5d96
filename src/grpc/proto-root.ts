/**
 * Loads a generated `service.proto` into protobufjs reflection, with proto
 * field names kept as written (snake_case, as `mapping.json` names them) and
 * the well-known wrapper types the generator imports.
 */
import type { NamespaceBase, Root, Service, Type } from 'protobufjs';

/** A loaded proto: the reflection root and the package it declares. */
export interface LoadedProto {
  readonly root: Root;
  /** `service.v1`, or empty when the file declares no package. */
  readonly packageName: string;
}

/** The proto files the generator may import that protobufjs ships with. */
const BUNDLED_IMPORTS = ['google/protobuf/wrappers.proto', 'google/protobuf/empty.proto', 'google/protobuf/timestamp.proto'];

/**
 * Parses proto text and resolves every type. Throws an `Error` naming
 * `origin` for a syntax error, an unresolvable type, an import other than
 * the well-known types the generator uses, or a file that is not proto3.
 */
export async function loadProto(text: string, origin: string): Promise<LoadedProto> {
  // protobufjs is loaded on first use so a router without gRPC subgraphs never pays for it.
  const protobuf = (await import('protobufjs')).default;
  const root = new protobuf.Root();
  try {
    refuseOtherSyntax(text);
    const parsed = protobuf.parse(text, root, { keepCase: true });
    for (const file of [...(parsed.imports ?? []), ...(parsed.weakImports ?? [])]) {
      if (!BUNDLED_IMPORTS.includes(file)) throw new Error(`imports "${file}", which the router cannot load; it loads only ${BUNDLED_IMPORTS.join(', ')}`);
      const common = protobuf.common.get(file);
      if (common?.nested) root.addJSON(common.nested);
    }
    refuseDefaults(root);
    root.resolveAll();
    return { root, packageName: parsed.package ?? '' };
  } catch (error) {
    throw new Error(`${origin}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
  }
}

/**
 * Refuses a file that is not proto3. The router reads answers as proto3
 * means them (an absent field is its zero value); proto2's defaults, required
 * fields and groups, and the editions' features, would load and then be
 * read wrongly or fail on every answer.
 */
function refuseOtherSyntax(text: string): void {
  // Only comments and whitespace may come before `syntax` or `edition`; a file declaring neither is proto2.
  const statement = /(syntax|edition)\s*=\s*(["'])([^"'\n]*)\2/y;
  statement.lastIndex = firstStatement(text);
  const head = statement.exec(text);
  if (head?.[1] === 'syntax' && head[3] === 'proto3') return;
  const declared = head ? `declares ${head[1]} = "${head[3]}"` : 'declares no syntax, which means proto2';
  throw new Error(
    `${declared}; the router reads proto3 only (it would ignore proto2's defaults and required fields, and misread its groups): write it as proto3, as switchyard grpc-service generate does`,
  );
}

/** Where the first statement of proto text starts: past a byte order mark, whitespace and comments. */
function firstStatement(text: string): number {
  let at = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  for (;;) {
    while (at < text.length && /\s/.test(text[at]!)) at++;
    let end: number;
    if (text.startsWith('//', at)) end = text.indexOf('\n', at);
    else if (text.startsWith('/*', at)) end = text.indexOf('*/', at + 2) + 1;
    else return at;
    at = end <= 0 ? text.length : end + 1;
  }
}

/** Refuses `[default = ...]`, which protobufjs accepts in proto3 although proto3 has no defaults (protoc refuses it). */
function refuseDefaults(namespace: NamespaceBase): void {
  for (const nested of namespace.nestedArray) {
    if ('fieldsArray' in nested) {
      for (const field of (nested as Type).fieldsArray) {
        if (field.options?.default !== undefined) throw new Error(`field ${field.name} of message ${(nested as Type).name} has [default = ...], which proto3 does not allow`);
      }
    }
    if ('nestedArray' in nested) refuseDefaults(nested as NamespaceBase);
  }
}

/** The service `name` of the proto's package, or `undefined`. */
export function findService({ root, packageName }: LoadedProto, name: string): Service | undefined {
  const found = root.lookup(packageName ? `${packageName}.${name}` : name);
  return isService(found) ? found : undefined;
}

function isService(value: unknown): value is Service {
  return typeof value === 'object' && value !== null && 'methods' in value && 'methodsArray' in value;
}
