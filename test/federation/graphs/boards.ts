/**
 * Pin boards, a graph with a partial union under shareable fields: the
 * `kitchen` subgraph knows `Note = Text | Sketch`, the `garage` subgraph
 * `Note = Text | Voice`. Both resolve `Board.panel` and `Panel.notes`
 * (shareable) and can look a Board up by its key; only `garage` has
 * `Board.archive`, and only `kitchen` has `Query.fridgeDoor` (a Panel that
 * is no entity, so no other subgraph can reach its notes).
 */
import type { SubgraphOptions } from '../../../src/testing/index.js';
import { linkFederation } from '../support/sdl.js';

const TEXT = { __typename: 'Text', body: 'buy milk' };
const SKETCH = { __typename: 'Sketch', strokes: 42 };
const VOICE = { __typename: 'Voice', seconds: 7 };
const BOARD = { id: 'b1' };

const resolveType = { __resolveType: (note: { __typename: string }) => note.__typename };
const lookUpBoard = (ref: { id: string }) => (ref.id === BOARD.id ? BOARD : null);

export function kitchenSubgraph(): SubgraphOptions {
  const notes = [TEXT, SKETCH];
  return {
    name: 'kitchen',
    typeDefs: /* GraphQL */ `
      ${linkFederation('key', 'shareable')}
      type Query { kitchenBoard: Board board: Board @shareable fridgeDoor: Panel }
      type Board @key(fields: "id") { id: ID! panel: Panel @shareable }
      type Panel @shareable { notes: [Note!]! @shareable }
      union Note = Text | Sketch
      type Text @shareable { body: String }
      type Sketch { strokes: Int }
    `,
    resolvers: {
      Query: { kitchenBoard: () => BOARD, board: () => BOARD, fridgeDoor: () => ({ notes }) },
      Board: { __resolveReference: lookUpBoard, panel: () => ({ notes }) },
      Note: resolveType,
    },
  };
}

export function garageSubgraph(): SubgraphOptions {
  const notes = [TEXT, VOICE];
  return {
    name: 'garage',
    typeDefs: /* GraphQL */ `
      ${linkFederation('key', 'shareable')}
      type Query { garageBoard: Board board: Board @shareable }
      type Board @key(fields: "id") { id: ID! panel: Panel @shareable archive: Panel }
      type Panel @shareable { notes: [Note!]! @shareable }
      union Note = Text | Voice
      type Text @shareable { body: String }
      type Voice { seconds: Int }
    `,
    resolvers: {
      Query: { garageBoard: () => BOARD, board: () => BOARD },
      Board: { __resolveReference: lookUpBoard, panel: () => ({ notes }), archive: () => ({ notes }) },
      Note: resolveType,
    },
  };
}

export function boardsGraph(): SubgraphOptions[] {
  return [kitchenSubgraph(), garageSubgraph()];
}
