import { describe, expect, it } from 'vitest';
import { clientSegments } from '../../../src/kernel/execute/error-positions.js';

describe('subgraph error paths as clients see them', () => {
  const aliases = [{ path: ['@'], alias: 'value__sy_0', responseKey: 'value' }];

  it("puts a field the planner sent under an alias back under the client's key", () => {
    expect(clientSegments(['things', 1, 'value__sy_0'], aliases)).toEqual(['things', 1, 'value']);
  });

  it('cuts the path before a field the planner added under an internal key', () => {
    expect(clientSegments(['item', '__sy_weight'], aliases)).toEqual(['item']);
    expect(clientSegments(['items', 2, '__sy_dimensions_1x2', 'width'], undefined)).toEqual(['items', 2]);
  });

  it("keeps the client's own names, a name like an alias the fetch did not send included", () => {
    expect(clientSegments(['a', 0, 'b'], aliases)).toEqual(['a', 0, 'b']);
    expect(clientSegments(['x__sy_9'], aliases)).toEqual(['x__sy_9']);
  });
});
