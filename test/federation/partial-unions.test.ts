import { describe, expect, it } from 'vitest';
import { boardsGraph } from './graphs/boards.js';
import { useFederatedGraph } from './support/use-federated-graph.js';

const graph = useFederatedGraph(boardsGraph);
const NOTES = '__typename ... on Text { body } ... on Sketch { strokes } ... on Voice { seconds }';

describe('partial unions (members differ per subgraph) under shareable fields', () => {
  it('resolves only the members every candidate subgraph has when another subgraph could serve the path too', async () => {
    // `panel.notes` could come from garage after a key jump, where Sketch is no member: Sketch's fields are null.
    expect(await graph().query(`{ kitchenBoard { panel { notes { ${NOTES} } } } }`)).toEqual({
      data: {
        kitchenBoard: {
          panel: {
            notes: [
              { __typename: 'Text', body: 'buy milk' },
              { __typename: 'Sketch', strokes: null },
            ],
          },
        },
      },
    });
    expect(graph().calls('kitchen')).toHaveLength(1);
    expect(graph().calls('kitchen')[0]!.query).not.toContain('Sketch');
    expect(graph().calls('garage')).toEqual([]);
  });

  it('does the same for a shareable root field both subgraphs serve', async () => {
    const body = await graph().query(`{ board { panel { notes { ${NOTES} } } } }`);
    const notes = (body.data as { board: { panel: { notes: { __typename: string }[] } } }).board.panel.notes;
    expect(notes[0]).toEqual({ __typename: 'Text', body: 'buy milk' });
    expect(notes[1]).toEqual(notes[1]!.__typename === 'Sketch' ? { __typename: 'Sketch', strokes: null } : { __typename: 'Voice', seconds: null });
    expect([...graph().calls('kitchen'), ...graph().calls('garage')]).toHaveLength(1);
  });

  it('keeps a type-only fragment on a member the subgraph lacks out of the answer', async () => {
    expect(await graph().query('{ kitchenBoard { panel { notes { __typename ... on Voice { seconds } } } } }')).toEqual({
      data: { kitchenBoard: { panel: { notes: [{ __typename: 'Text' }, { __typename: 'Sketch' }] } } },
    });
  });

  it('answers every member of the one subgraph a field forces a jump to', async () => {
    expect(await graph().query(`{ kitchenBoard { archive { notes { ${NOTES} } } } }`)).toEqual({
      data: {
        kitchenBoard: {
          archive: {
            notes: [
              { __typename: 'Text', body: 'buy milk' },
              { __typename: 'Voice', seconds: 7 },
            ],
          },
        },
      },
    });
    expect(graph().representations('garage')).toEqual([[{ __typename: 'Board', id: 'b1' }]]);
  });

  it('answers every member of the subgraph when no other subgraph can reach the path', async () => {
    expect(await graph().query(`{ fridgeDoor { notes { ${NOTES} } } }`)).toEqual({
      data: {
        fridgeDoor: {
          notes: [
            { __typename: 'Text', body: 'buy milk' },
            { __typename: 'Sketch', strokes: 42 },
          ],
        },
      },
    });
  });
});
