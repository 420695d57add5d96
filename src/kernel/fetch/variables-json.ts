import { RouterError } from '../errors.js';
import { memoOn } from '../object-memo.js';

/** Where a variables object keeps its JSON text. */
const TEXT = Symbol('switchyard.variablesJson');

/** Where a variables object keeps how many uploaded files its JSON text left out (set only when there are any). */
const UPLOADS = Symbol('switchyard.uploads');

/** Set on every object and array of a client's `operations` a multipart `map` path went through: it leads to an uploaded file. */
const LEADS_TO_UPLOAD = Symbol('switchyard.leadsToUpload');

/** Files the JSON text being written left out (counted by `UploadedFile.toJSON`). */
let uploadsWritten = 0;

/**
 * A file of a multipart request (the GraphQL multipart request spec), as
 * the client's variables carry it to the subgraph calls. JSON writes it as
 * `null`, the spec's placeholder, so the `operations` part of the subgraph
 * call is the usual JSON body; writing one is how `variablesJson` learns,
 * at no cost to calls without files, that a call carries files.
 */
export class UploadedFile extends File {
  toJSON(): null {
    uploadsWritten++;
    return null;
  }
}

/** Marks an object or array of a client's `operations` that a multipart `map` path goes through (multipart-body.ts). */
export function markLeadsToUpload(container: object): void {
  if (!Object.hasOwn(container, LEADS_TO_UPLOAD) && Object.isExtensible(container)) Object.defineProperty(container, LEADS_TO_UPLOAD, { value: true, enumerable: false });
}

/**
 * The JSON text of a subgraph request's variables, made once per variables
 * object: the single-flight key and the request body both need it, and for
 * entity fetches it holds every representation. Uploaded files are written
 * as `null`.
 */
export function variablesJson(variables: Readonly<Record<string, unknown>>): string {
  return memoOn(variables, TEXT, () => write(variables));
}

function write(variables: Readonly<Record<string, unknown>>): string {
  // Saved and restored: a plugin's value with a toJSON of its own could write other variables meanwhile.
  const outer = uploadsWritten;
  uploadsWritten = 0;
  const text = JSON.stringify(variables);
  const written = uploadsWritten;
  uploadsWritten = outer + written;
  if (written > 0 && Object.isExtensible(variables)) Object.defineProperty(variables, UPLOADS, { value: written, enumerable: false });
  return text;
}

/**
 * How many uploaded files the variables hold (a file in two places counts
 * twice): learnt while their JSON text is written, so for variables whose
 * text is made already (the request body, the single-flight key) it is one
 * property read.
 */
export function uploadCount(variables: Readonly<Record<string, unknown>>): number {
  if (!Object.isExtensible(variables)) {
    const before = uploadsWritten;
    write(variables);
    return uploadsWritten - before;
  }
  variablesJson(variables);
  return (variables as { [UPLOADS]?: number })[UPLOADS] ?? 0;
}

/**
 * Whether any variable's value is an uploaded file or leads to one (a
 * multipart `map` path went through it). Reads only the top-level values:
 * for transports that never write the variables' JSON text.
 */
export function mayHoldUploads(variables: Readonly<Record<string, unknown>>): boolean {
  for (const name in variables) {
    const value = variables[name];
    if (value instanceof UploadedFile || leadsToUpload(value)) return true;
  }
  return false;
}

/** Most files one subgraph call may carry: a multipart `map` names at most this many paths (multipart-body.ts). */
const MAX_UPLOAD_PATHS = 1000;

/** Deepest a file may sit in a call's variables: client values nest at most 256 levels (variable-coercion.ts), under the variable's name. */
const MAX_UPLOAD_DEPTH = 258;

/**
 * The uploaded files of a subgraph call, each with its paths in the call's
 * operations (`variables.files.0`), in document order; `count` is
 * `uploadCount(variables)`. The walk, with an explicit stack, reads every
 * variable but goes down only through the objects and arrays a multipart
 * `map` path went through, at most MAX_UPLOAD_DEPTH levels, and stops at
 * the `count`th file: it reads only the containers on the map's paths,
 * whatever else the variables hold (representations). Throws when the files are not
 * all found (a plugin rebuilt the values that led to them).
 */
export function uploadsIn(variables: Readonly<Record<string, unknown>>, count: number, subgraph: string): Map<UploadedFile, string[]> {
  if (count > MAX_UPLOAD_PATHS) throw unplaced(subgraph);
  const files = new Map<UploadedFile, string[]>();
  let found = 0;
  const values: unknown[] = [];
  const paths: string[] = [];
  const depths: number[] = [];
  const names = Object.keys(variables);
  for (let i = names.length - 1; i >= 0; i--) {
    values.push(variables[names[i]!]);
    paths.push(`variables.${names[i]!}`);
    depths.push(1);
  }
  while (values.length > 0 && found < count) {
    const value = values.pop();
    const path = paths.pop()!;
    const depth = depths.pop()!;
    if (value instanceof UploadedFile) {
      found++;
      const known = files.get(value);
      if (known) known.push(path);
      else files.set(value, [path]);
      continue;
    }
    if (!leadsToUpload(value) || depth >= MAX_UPLOAD_DEPTH) continue;
    const container = value as Record<string, unknown>;
    const keys = Array.isArray(container) ? Array.from(container.keys(), String) : Object.keys(container);
    // Pushed last to first, so files are met in document order.
    for (let i = keys.length - 1; i >= 0; i--) {
      const child = container[keys[i]!];
      if (!(child instanceof UploadedFile) && !leadsToUpload(child)) continue;
      values.push(child);
      paths.push(`${path}.${keys[i]!}`);
      depths.push(depth + 1);
    }
  }
  if (found !== count) throw unplaced(subgraph);
  return files;
}

function leadsToUpload(value: unknown): boolean {
  return value !== null && typeof value === 'object' && (value as { [LEADS_TO_UPLOAD]?: true })[LEADS_TO_UPLOAD] === true;
}

function unplaced(subgraph: string): RouterError {
  return new RouterError('SUBGRAPH_REQUEST_FAILED', `The uploaded files of the request to subgraph "${subgraph}" could not be placed in its variables.`);
}
