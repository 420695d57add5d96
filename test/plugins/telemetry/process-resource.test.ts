/**
 * The resource of each process's telemetry: worker processes (`--workers`)
 * export their own cumulative series, so their `service.instance.id` must
 * differ even when OTEL_RESOURCE_ATTRIBUTES names one instance for the pod.
 */
import { describe, expect, it } from 'vitest';
import { processResource } from '../../../plugins/telemetry/start-telemetry.js';

function withResourceAttributes<T>(value: string | undefined, run: () => T): T {
  const before = process.env.OTEL_RESOURCE_ATTRIBUTES;
  if (value === undefined) delete process.env.OTEL_RESOURCE_ATTRIBUTES;
  else process.env.OTEL_RESOURCE_ATTRIBUTES = value;
  try {
    return run();
  } finally {
    if (before === undefined) delete process.env.OTEL_RESOURCE_ATTRIBUTES;
    else process.env.OTEL_RESOURCE_ATTRIBUTES = before;
  }
}

const instanceOf = (workerId: number | undefined) => processResource('router', workerId).attributes['service.instance.id'];

describe('the telemetry resource of a process', () => {
  it('gets a random instance id per process, in the primary and in workers alike', () => {
    withResourceAttributes(undefined, () => {
      expect(instanceOf(undefined)).toMatch(/^[0-9a-f-]{36}$/);
      expect(instanceOf(1)).not.toBe(instanceOf(1));
    });
  });

  it('keeps an instance id set in OTEL_RESOURCE_ATTRIBUTES, and tells the workers of that instance apart', () => {
    withResourceAttributes('service.instance.id=pod-7,deployment.environment=prod', () => {
      expect(instanceOf(undefined)).toBe('pod-7');
      expect([instanceOf(1), instanceOf(2)]).toEqual(['pod-7-worker-1', 'pod-7-worker-2']);
      expect(processResource('router', 2).attributes['deployment.environment']).toBe('prod');
    });
  });
});
