import { describe, expect, it } from 'vitest';
import { cookbookSubgraph, pantrySubgraph, recipeGraph } from './graphs/recipes.js';
import { staffGraph } from './graphs/staff.js';
import { useFederatedGraph } from './support/use-federated-graph.js';

const graph = useFederatedGraph(recipeGraph);
const staff = useFederatedGraph(staffGraph);
/** A cookbook deployed ahead of the supergraph: it answers a Cuisine value no subgraph of the supergraph declares. */
const ahead = useFederatedGraph(() => [
  { ...cookbookSubgraph(), reply: () => ({ body: JSON.stringify({ data: { recipe: { title: 'Bibimbap', cuisine: 'KOREAN' } } }) }) },
  pantrySubgraph(),
]);

describe('enum intersections', () => {
  it('returns output enum values that only one subgraph defines', async () => {
    expect(await graph().query('{ recipes(filter: { maxMinutes: 60 }) { title cuisine inspiredBy } }')).toEqual({
      data: {
        recipes: [
          { title: 'Carbonara', cuisine: 'ITALIAN', inspiredBy: 'ITALIAN' },
          { title: 'Chilaquiles', cuisine: 'MEXICAN', inspiredBy: 'THAI' },
        ],
      },
    });
  });

  it('nulls an @inaccessible enum value a subgraph returns, with an error at its path that does not name the value', async () => {
    expect(await graph().query('{ recipe(id: "r3") { title cuisine } }')).toEqual({
      data: { recipe: null },
      errors: [{ message: 'Enum "Cuisine" cannot represent a value that is not part of the schema.', path: ['recipe', 'cuisine'] }],
    });
  });

  it('names an enum value that no subgraph of the supergraph declares, which helps find the subgraph that sent it', async () => {
    expect(await ahead().query('{ recipe(id: "r9") { title cuisine } }')).toEqual({
      data: { recipe: null },
      errors: [{ message: 'Enum "Cuisine" cannot represent value: "KOREAN"', path: ['recipe', 'cuisine'] }],
    });
  });

  it('shows clients only the values of an input enum that every subgraph accepts', async () => {
    expect(await graph().query('{ __type(name: "Unit") { enumValues { name } } cuisine: __type(name: "Cuisine") { enumValues { name } } }')).toEqual({
      data: { __type: { enumValues: [{ name: 'GRAM' }] }, cuisine: { enumValues: [{ name: 'ITALIAN' }, { name: 'MEXICAN' }, { name: 'THAI' }] } },
    });
  });

  it('passes a shared input enum value on, as a literal and as a variable', async () => {
    expect(await graph().query('query($unit: Unit!) { convert(grams: 100, to: GRAM) shoppingList(unit: $unit) }', { unit: 'GRAM' })).toEqual({
      data: { convert: '100 g', shoppingList: ['eggs (any min)', 'flour in grams'] },
    });
    expect(
      graph()
        .calls('pantry')
        .map((c) => c.variables),
    ).toEqual([{ unit: 'GRAM' }]);
  });

  it('refuses input enum values only one subgraph knows, before calling any subgraph', async () => {
    const literal = await graph().send({ query: '{ convert(grams: 100, to: OUNCE) }' });
    expect(literal).toEqual({
      status: 400,
      body: {
        errors: [{ message: 'Value "OUNCE" does not exist in "Unit" enum.', locations: [{ line: 1, column: 27 }], extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }],
      },
    });
    const variable = await graph().send({ query: 'query($u: Unit!) { shoppingList(unit: $u) }', variables: { u: 'CUP' } });
    expect(variable.status).toBe(400);
    expect(variable.body.errors).toEqual([expect.objectContaining({ extensions: { code: 'BAD_USER_INPUT' } })]);
    expect(graph().calls('cookbook')).toEqual([]);
    expect(graph().calls('pantry')).toEqual([]);
  });
});

describe('input object intersections', () => {
  it('passes the shared input fields to each subgraph, as a literal and as a variable', async () => {
    expect(await graph().query('{ recipes(filter: { maxMinutes: 30 }) { title } shoppingList(filter: { maxMinutes: 30 }) }')).toEqual({
      data: { recipes: [{ title: 'Carbonara' }], shoppingList: ['eggs (30 min)', 'flour in grams'] },
    });
    expect(await graph().query('query($f: RecipeFilter) { recipes(filter: $f) { title } shoppingList(filter: $f) }', { f: { maxMinutes: 45 } })).toEqual({
      data: { recipes: [{ title: 'Carbonara' }, { title: 'Chilaquiles' }], shoppingList: ['eggs (45 min)', 'flour in grams'] },
    });
  });

  it('hides input fields only one subgraph defines', async () => {
    expect(await graph().query('{ __type(name: "RecipeFilter") { inputFields { name } } }')).toEqual({
      data: { __type: { inputFields: [{ name: 'maxMinutes' }] } },
    });
    for (const field of ['vegan', 'vegetarian']) {
      const response = await graph().send({ query: `{ recipes(filter: { ${field}: true }) { title } }` });
      expect(response).toEqual({
        status: 400,
        body: {
          errors: [
            {
              message: `Field "${field}" is not defined by type "RecipeFilter".`,
              locations: [{ line: 1, column: 21 }],
              extensions: { code: 'GRAPHQL_VALIDATION_FAILED' },
            },
          ],
        },
      });
    }
  });

  it('refuses a variable carrying an input field only one subgraph defines', async () => {
    const response = await graph().send({ query: 'query($f: RecipeFilter) { recipes(filter: $f) { title } }', variables: { f: { vegan: true } } });
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([expect.objectContaining({ extensions: { code: 'BAD_USER_INPUT' } })]);
    expect(graph().calls('cookbook')).toEqual([]);
  });
});

function validationError(message: string, line: number, column: number) {
  return { status: 400, body: { errors: [{ message, locations: [{ line, column }], extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }] } };
}

describe('@inaccessible', () => {
  it('refuses an inaccessible field, without calling a subgraph', async () => {
    expect(await staff().send({ query: '{ employees { name salaryCents } }' })).toEqual(validationError('Cannot query field "salaryCents" on type "Employee".', 1, 20));
    expect(await staff().send({ query: '{ employees { badge } }' })).toEqual(validationError('Cannot query field "badge" on type "Employee". Did you mean "name"?', 1, 15));
    expect(staff().calls('directory')).toEqual([]);
  });

  it('refuses an inaccessible root field and an inaccessible type', async () => {
    expect(await staff().send({ query: '{ audit { entries } }' })).toEqual(validationError('Cannot query field "audit" on type "Query".', 1, 3));
    expect(await staff().send({ query: '{ employees { ... on AuditLog { entries } } }' })).toEqual(validationError('Unknown type "AuditLog".', 1, 22));
  });

  it('refuses an inaccessible argument', async () => {
    expect(await staff().send({ query: '{ employees(includeContractors: false) { name } }' })).toEqual(
      validationError('Unknown argument "includeContractors" on field "Query.employees".', 1, 13),
    );
  });

  it('leaves inaccessible elements out of introspection', async () => {
    expect(
      await staff().query(
        '{ __type(name: "AuditLog") { name } employee: __type(name: "Employee") { fields { name } } query: __type(name: "Query") { fields { name args { name } } } }',
      ),
    ).toEqual({
      data: {
        __type: null,
        employee: { fields: [{ name: 'id' }, { name: 'name' }, { name: 'bonusCents' }] },
        query: {
          fields: [
            { name: 'employees', args: [] },
            { name: 'payday', args: [] },
          ],
        },
      },
    });
  });

  it('still uses an inaccessible field as a required field and an inaccessible key for jumps', async () => {
    expect(await staff().query('{ employees { name bonusCents } }')).toEqual({
      data: {
        employees: [
          { name: 'Kofi', bonusCents: 50000 },
          { name: 'Lena', bonusCents: 42000 },
        ],
      },
    });
    expect(staff().representations('payroll')).toEqual([
      [
        { __typename: 'Employee', badge: 'B-100', salaryCents: 500000 },
        { __typename: 'Employee', badge: 'B-200', salaryCents: 420000 },
      ],
    ]);
  });

  it('reaches the owner through an inaccessible key from the other side', async () => {
    expect(await staff().query('{ payday { name bonusCents } }')).toEqual({ data: { payday: [{ name: 'Lena', bonusCents: 42000 }] } });
    expect(staff().representations('directory')).toEqual([[{ __typename: 'Employee', badge: 'B-200' }]]);
  });
});
