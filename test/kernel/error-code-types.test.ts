/**
 * The compiler rejects an error code nobody declared, and accepts one a
 * plugin adds by augmenting `ErrorCodes` (`declare module 'switchyard'`), as
 * docs/plugins.md shows. Checked by compiling a small file against the
 * kernel's error types with the TypeScript compiler.
 */
import { join } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const root = new URL('../..', import.meta.url).pathname;
/** Stands in for the package entry: re-exports, as src/index.ts does. */
const entry = join(root, 'test/kernel/__switchyard-entry.ts');
const fixture = join(root, 'test/kernel/__error-code-fixture.ts');

const ENTRY = `export { RouterError, type ErrorCode, type ErrorCodes } from '../../src/kernel/errors.js';\n`;

/** Diagnostics of `source` (the fixture file) as `line: message`, lines counted from 1. */
function compile(source: string): string[] {
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    strict: true,
    skipLibCheck: true,
    noEmit: true,
    types: [],
    baseUrl: root,
    paths: { switchyard: [entry] },
  };
  const host = ts.createCompilerHost(options);
  const virtual = new Map([
    [entry, ENTRY],
    [fixture, source],
  ]);
  const readFile = host.readFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  const getSourceFile = host.getSourceFile.bind(host);
  host.readFile = (file) => virtual.get(file) ?? readFile(file);
  host.fileExists = (file) => virtual.has(file) || fileExists(file);
  host.getSourceFile = (file, language, onError) => {
    const text = virtual.get(file);
    return text === undefined ? getSourceFile(file, language, onError) : ts.createSourceFile(file, text, language);
  };
  const program = ts.createProgram([fixture], options, host);
  const file = program.getSourceFile(fixture)!;
  return [...program.getSyntacticDiagnostics(file), ...program.getSemanticDiagnostics(file)].map((diagnostic) => {
    const { line } = file.getLineAndCharacterOfPosition(diagnostic.start ?? 0);
    return `${line + 1}: ${ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n').split('\n')[0]}`;
  });
}

describe('the ErrorCode type', () => {
  it("rejects a code nobody declared and accepts the router's codes and codes a plugin adds to ErrorCodes", () => {
    const diagnostics = compile(
      [
        `import { RouterError, type ErrorCode } from 'switchyard';`,
        `declare module 'switchyard' { interface ErrorCodes { ACME_AUGMENTED: true } }`,
        `new RouterError('GRAPH_NOT_READY');`,
        `new RouterError('ACME_AUGMENTED', 'accepted once declared');`,
        `new RouterError('GRAPH_NOT_REDY', 'a typo');`,
        `const code: ErrorCode = 'ACME_UNDECLARED';`,
        `export const codes: ErrorCode[] = [code, 'BAD_REQUEST'];`,
        '',
      ].join('\n'),
    );
    expect(diagnostics).toEqual([
      `5: Argument of type '"GRAPH_NOT_REDY"' is not assignable to parameter of type 'ErrorCode'.`,
      `6: Type '"ACME_UNDECLARED"' is not assignable to type 'ErrorCode'.`,
    ]);
  }, 60_000);
});
