import type { Frame } from './profile-builder.js';

const CALL = /^at (?:(?<name>.*?) \((?<where>.*)\)|(?<bare>.*))$/;
const POSITION = /^(?<file>.*?):(?<line>\d+)(?::\d+)?$/;

/**
 * Reads V8 stack lines (`at fn (file:line:col)`, `at file:line:col`,
 * `at async fn (...)`) as frames, top of the stack first. Lines that are
 * not calls (the error message) are skipped.
 */
export function parseStackLines(lines: readonly string[]): Frame[] {
  const frames: Frame[] = [];
  for (const raw of lines) {
    const match = CALL.exec(raw.trim());
    if (!match?.groups) continue;
    const { name, where, bare } = match.groups;
    const position = POSITION.exec(where ?? bare ?? '');
    frames.push({
      name: name ?? '(anonymous)',
      file: position?.groups?.file ?? where ?? bare ?? '',
      line: Number(position?.groups?.line ?? 0),
    });
  }
  return frames;
}

/** A frame that names something other than code: a thread kind, a libuv resource. */
export function syntheticFrame(name: string): Frame {
  return { name, file: '', line: 0 };
}
