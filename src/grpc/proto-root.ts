/**
 * Loads a generated `service.proto` into protobufjs reflection, with proto
 * field names kept as written (snake_case, as `mapping.json` names them) and
 * the well-known wrapper types the generator imports.
 */
import type { Root, Service } from 'protobufjs';

/** A loaded proto: the reflection root and the package it declares. */
export interface LoadedProto {
  readonly root: Root;
  /** `service.v1`, or empty when the file declares no package. */
  readonly packageName: string;
}

/** The proto files the generator may import that protobufjs ships with. */
const BUNDLED_IMPORTS = new Set(['google/protobuf/wrappers.proto', 'google/protobuf/empty.proto', 'google/protobuf/timestamp.proto']);

/**
 * Parses proto text and resolves every type. Throws an `Error` naming
 * `origin` for a syntax error, an unresolvable type or an import other than
 * the well-known types.
 */
export async function loadProto(text: string, origin: string): Promise<LoadedProto> {
  // protobufjs is loaded on first use so a router without gRPC subgraphs never pays for it.
  const protobuf = (await import('protobufjs')).default;
  const root = new protobuf.Root();
  try {
    const parsed = protobuf.parse(text, root, { keepCase: true });
    for (const file of [...(parsed.imports ?? []), ...(parsed.weakImports ?? [])]) {
      if (!BUNDLED_IMPORTS.has(file)) throw new Error(`imports "${file}", which the router cannot load; only well-known types are supported`);
      const common = protobuf.common.get(file);
      if (common?.nested) root.addJSON(common.nested);
    }
    root.resolveAll();
    return { root, packageName: parsed.package ?? '' };
  } catch (error) {
    throw new Error(`${origin}: ${error instanceof Error ? error.message : String(error)}`, { cause: error });
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
