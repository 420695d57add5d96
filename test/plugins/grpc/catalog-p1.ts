/**
 * Product p1 of the catalog service (catalog-fixture.ts) through GraphQL:
 * a selection of every kind of field the generator maps (wrappers, lists,
 * nested lists, enums, custom scalars, nested objects) and the answer to it.
 */

/** The fields of `Product` to select, in this order. */
export const P1_SELECTION = 'id name price stock discontinued tags aliases sizes createdAt metadata kind category { name parent { name parent { name } } }';

/** p1 as the router answers P1_SELECTION. */
export const P1_ANSWER = {
  id: 'p1',
  name: 'Table',
  price: 899.5,
  stock: 3,
  discontinued: false,
  tags: ['wood', 'dining'],
  aliases: ['desk'],
  sizes: [[120, 80], []],
  createdAt: '2024-01-02T03:04:05Z',
  metadata: '{"origin":"oak"}',
  kind: 'PHYSICAL',
  category: { name: 'Tables', parent: { name: 'Furniture', parent: null } },
} as const;
