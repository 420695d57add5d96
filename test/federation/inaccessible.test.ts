import { describe, expect, it } from 'vitest';
import { staffGraph } from './graphs/staff.js';
import { useFederatedGraph } from './support/use-federated-graph.js';

const graph = useFederatedGraph(staffGraph);

function validationError(message: string, line: number, column: number) {
  return { status: 400, body: { errors: [{ message, locations: [{ line, column }], extensions: { code: 'GRAPHQL_VALIDATION_FAILED' } }] } };
}

describe('@inaccessible', () => {
  it('refuses an inaccessible field, without calling a subgraph', async () => {
    expect(await graph().send({ query: '{ employees { name salaryCents } }' })).toEqual(
      validationError('Cannot query field "salaryCents" on type "Employee".', 1, 20),
    );
    expect(await graph().send({ query: '{ employees { badge } }' })).toEqual(
      validationError('Cannot query field "badge" on type "Employee". Did you mean "name"?', 1, 15),
    );
    expect(graph().calls('directory')).toEqual([]);
  });

  it('refuses an inaccessible root field and an inaccessible type', async () => {
    expect(await graph().send({ query: '{ audit { entries } }' })).toEqual(validationError('Cannot query field "audit" on type "Query".', 1, 3));
    expect(await graph().send({ query: '{ employees { ... on AuditLog { entries } } }' })).toEqual(validationError('Unknown type "AuditLog".', 1, 22));
  });

  it('refuses an inaccessible argument', async () => {
    expect(await graph().send({ query: '{ employees(includeContractors: false) { name } }' })).toEqual(
      validationError('Unknown argument "includeContractors" on field "Query.employees".', 1, 13),
    );
  });

  it('leaves inaccessible elements out of introspection', async () => {
    expect(
      await graph().query('{ __type(name: "AuditLog") { name } employee: __type(name: "Employee") { fields { name } } query: __type(name: "Query") { fields { name args { name } } } }'),
    ).toEqual({
      data: {
        __type: null,
        employee: { fields: [{ name: 'id' }, { name: 'name' }, { name: 'bonusCents' }] },
        query: { fields: [{ name: 'employees', args: [] }, { name: 'payday', args: [] }] },
      },
    });
  });

  it('still uses an inaccessible field as a required field and an inaccessible key for jumps', async () => {
    expect(await graph().query('{ employees { name bonusCents } }')).toEqual({
      data: { employees: [{ name: 'Kofi', bonusCents: 50000 }, { name: 'Lena', bonusCents: 42000 }] },
    });
    expect(graph().representations('payroll')).toEqual([
      [
        { __typename: 'Employee', badge: 'B-100', salaryCents: 500000 },
        { __typename: 'Employee', badge: 'B-200', salaryCents: 420000 },
      ],
    ]);
  });

  it('reaches the owner through an inaccessible key from the other side', async () => {
    expect(await graph().query('{ payday { name bonusCents } }')).toEqual({ data: { payday: [{ name: 'Lena', bonusCents: 42000 }] } });
    expect(graph().representations('directory')).toEqual([[{ __typename: 'Employee', badge: 'B-200' }]]);
  });
});
