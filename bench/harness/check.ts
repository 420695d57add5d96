/** Sending the benchmark request once and comparing the answer with the expected one. */
import { isDeepStrictEqual } from 'node:util';
import type { BenchRequest } from './scenario.js';

/** One answer, parsed. */
export interface Answer {
  readonly status: number;
  readonly text: string;
  readonly ms: number;
}

export async function sendOnce(baseUrl: string, request: BenchRequest, timeoutMs = 30_000): Promise<Answer> {
  const started = performance.now();
  const response = await fetch(`${baseUrl}${request.path}`, {
    method: request.method,
    headers: request.headers,
    body: request.body,
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await response.text();
  return { status: response.status, text, ms: performance.now() - started };
}

/** Undefined when `answer` is the expected JSON (deep-equal), else what differs. */
export function compareAnswer(answer: Answer, expected: unknown): string | undefined {
  let actual: unknown;
  try {
    actual = JSON.parse(answer.text);
  } catch {
    return `HTTP ${answer.status}, not JSON: ${answer.text.slice(0, 200)}`;
  }
  if (isDeepStrictEqual(actual, expected)) return undefined;
  return `HTTP ${answer.status}, ${firstDifference(actual, expected, '$')}`;
}

function describe(value: unknown): string {
  const text = JSON.stringify(value) ?? 'undefined';
  return text.length > 160 ? `${text.slice(0, 160)}...` : text;
}

/** The first place where two JSON values differ, as `path: got X, expected Y`. */
export function firstDifference(actual: unknown, expected: unknown, path: string): string {
  if (Array.isArray(expected) && Array.isArray(actual)) {
    for (let i = 0; i < Math.max(expected.length, actual.length); i++) {
      if (!isDeepStrictEqual(actual[i], expected[i])) return firstDifference(actual[i], expected[i], `${path}[${i}]`);
    }
  } else if (isObject(expected) && isObject(actual)) {
    for (const key of new Set([...Object.keys(expected), ...Object.keys(actual)])) {
      if (!isDeepStrictEqual(actual[key], expected[key])) return firstDifference(actual[key], expected[key], `${path}.${key}`);
    }
  }
  return `${path}: got ${describe(actual)}, expected ${describe(expected)}`;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
