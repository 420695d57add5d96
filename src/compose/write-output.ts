/**
 * Writes a composed graph: `.json` -> execution config, `.graphql` -> supergraph SDL.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, rename, rm, writeFile } from 'node:fs/promises';
import { dirname, extname, resolve } from 'node:path';
import { EXECUTION_CONFIG_VERSION, type ExecutionConfig } from '../kernel/graph/execution-config.js';
import type { ComposedGraph } from './compose.js';

/** What an output file holds, chosen by its extension. */
export type OutputFormat = 'execution-config' | 'supergraph-sdl';

const FORMAT_BY_EXTENSION: Readonly<Record<string, OutputFormat>> = {
  '.json': 'execution-config',
  '.graphql': 'supergraph-sdl',
  '.graphqls': 'supergraph-sdl',
  '.gql': 'supergraph-sdl',
};

/** Options of `writeOutput` and `renderOutput`. */
export interface OutputOptions {
  /** Composition time written to `compose.composedAt`; default now. */
  composedAt?: Date;
}

/** The format an output path asks for: `.json` or `.graphql`/`.graphqls`/`.gql`; `undefined` for anything else. */
export function outputFormatOf(path: string): OutputFormat | undefined {
  return FORMAT_BY_EXTENSION[extname(path).toLowerCase()];
}

/** Builds the execution config (version 1) of a composed graph. */
export function createExecutionConfig(graph: ComposedGraph, { composedAt = new Date() }: OutputOptions = {}): ExecutionConfig {
  return {
    version: EXECUTION_CONFIG_VERSION,
    supergraph: graph.supergraphSdl,
    subgraphs: graph.subgraphs,
    compose: { composedAt: composedAt.toISOString() },
  } satisfies ExecutionConfig;
}

/** The text of an output file in the given format, ending with a newline. */
export function renderOutput(graph: ComposedGraph, format: OutputFormat, options: OutputOptions = {}): string {
  switch (format) {
    case 'execution-config':
      return `${JSON.stringify(createExecutionConfig(graph, options), null, 2)}\n`;
    case 'supergraph-sdl':
      return graph.supergraphSdl.endsWith('\n') ? graph.supergraphSdl : `${graph.supergraphSdl}\n`;
  }
}

/**
 * Writes the graph to `path` in the format its extension names, creating
 * missing folders. The file is replaced atomically (write beside, then
 * rename), so a router watching it never reads half a file.
 * Throws an `Error` when the extension names no format.
 */
export async function writeOutput(path: string, graph: ComposedGraph, options: OutputOptions = {}): Promise<OutputFormat> {
  const format = outputFormatOf(path);
  if (!format) throw new Error(`cannot tell the output format of ${path}: use .json (execution config) or .graphql (supergraph SDL)`);
  const target = resolve(path);
  await mkdir(dirname(target), { recursive: true });
  const temporary = `${target}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    await writeFile(temporary, renderOutput(graph, format, options), 'utf8');
    await rename(temporary, target);
  } catch (error) {
    await rm(temporary, { force: true });
    throw error;
  }
  return format;
}
