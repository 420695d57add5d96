/**
 * Which proto scalar types a contract may use for a GraphQL scalar: the
 * generator's choices, the widenings a hand-edited contract or
 * `--custom-scalar-mapping` makes, and what no GraphQL value fits.
 */
import { ScalarType } from '@bufbuild/protobuf';
import { GraphQLBoolean, GraphQLEnumType, GraphQLFloat, GraphQLID, GraphQLInt, GraphQLScalarType, GraphQLString } from 'graphql';
import { describe, expect, it } from 'vitest';
import { scalarMisfit } from '../../../plugins/connect/scalar-fit.js';

const custom = (name: string) => new GraphQLScalarType({ name });

describe('proto scalars for GraphQL scalars', () => {
  it('takes what the generator writes for the built-in scalars and enums', () => {
    expect(
      [
        [ScalarType.INT32, GraphQLInt],
        [ScalarType.DOUBLE, GraphQLFloat],
        [ScalarType.STRING, GraphQLString],
        [ScalarType.STRING, GraphQLID],
        [ScalarType.BOOL, GraphQLBoolean],
        [ScalarType.STRING, new GraphQLEnumType({ name: 'Size', values: { SMALL: {} } })],
      ].map(([proto, graphql]) => scalarMisfit(proto as ScalarType, graphql as GraphQLScalarType)),
    ).toEqual([undefined, undefined, undefined, undefined, undefined, undefined]);
  });

  it('takes a custom scalar mapped to any scalar type but bytes, whatever its name', () => {
    for (const proto of [ScalarType.STRING, ScalarType.INT64, ScalarType.UINT64, ScalarType.UINT32, ScalarType.FIXED64, ScalarType.DOUBLE, ScalarType.BOOL]) {
      expect(scalarMisfit(proto, custom('UnsignedLong')), String(proto)).toBeUndefined();
    }
    expect(scalarMisfit(ScalarType.STRING, custom('toString'))).toBeUndefined();
    expect(scalarMisfit(ScalarType.BYTES, custom('JSON'))).toBe(
      'the proto has bytes where the graph has JSON, which only string, int32, sint32, sfixed32, int64, sint64, sfixed64, double, float, uint32, uint64, fixed32, fixed64, bool can carry',
    );
  });

  it('refuses what cannot carry every value of a built-in scalar', () => {
    expect(scalarMisfit(ScalarType.UINT64, GraphQLID)).toBe('the proto has uint64 where the graph has ID, which only string can carry');
    expect(scalarMisfit(ScalarType.INT32, GraphQLFloat)).toBe('the proto has int32 where the graph has Float, which only double, float can carry');
    expect(scalarMisfit(ScalarType.UINT32, GraphQLInt)).toContain('the proto has uint32 where the graph has Int');
  });
});
