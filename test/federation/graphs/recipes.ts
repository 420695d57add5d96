/**
 * Recipes, a graph built around enum and input object intersections:
 * `Cuisine` (output only) has values in one subgraph only and an
 * `@inaccessible` value; `Unit` (input only) keeps only the values both
 * subgraphs know; `RecipeFilter` keeps only the fields both subgraphs know.
 */
import type { SubgraphOptions } from '../../../src/testing/index.js';
import { linkFederation } from '../support/sdl.js';

interface Filter {
  readonly maxMinutes?: number;
  readonly vegetarian?: boolean;
}

const RECIPES = [
  { id: 'r1', title: 'Carbonara', cuisine: 'ITALIAN', minutes: 25 },
  { id: 'r2', title: 'Chilaquiles', cuisine: 'MEXICAN', minutes: 40 },
  { id: 'r3', title: 'Grandma’s stew', cuisine: 'FAMILY_SECRET', minutes: 180 },
];

export function cookbookSubgraph(): SubgraphOptions {
  return {
    name: 'cookbook',
    typeDefs: /* GraphQL */ `
      ${linkFederation('key', 'inaccessible')}
      type Query {
        recipes(filter: RecipeFilter): [Recipe!]!
        recipe(id: ID!): Recipe
        convert(grams: Int!, to: Unit!): String!
      }
      type Recipe @key(fields: "id") { id: ID! title: String! cuisine: Cuisine! minutes: Int! }
      enum Cuisine { ITALIAN MEXICAN FAMILY_SECRET @inaccessible }
      enum Unit { GRAM OUNCE }
      input RecipeFilter { maxMinutes: Int vegetarian: Boolean }
    `,
    resolvers: {
      Query: {
        recipes: (_: unknown, { filter }: { filter?: Filter }) => RECIPES.filter((r) => r.minutes <= (filter?.maxMinutes ?? Infinity)),
        recipe: (_: unknown, { id }: { id: string }) => RECIPES.find((r) => r.id === id) ?? null,
        convert: (_: unknown, { grams, to }: { grams: number; to: string }) => (to === 'OUNCE' ? `${(grams / 28.35).toFixed(1)} oz` : `${grams} g`),
      },
      Recipe: { __resolveReference: (ref: { id: string }) => RECIPES.find((r) => r.id === ref.id) ?? null },
    },
  };
}

export function pantrySubgraph(): SubgraphOptions {
  const pairings = new Map([
    ['r1', { cuisine: 'ITALIAN', pairing: 'Pecorino' }],
    ['r2', { cuisine: 'THAI', pairing: 'Lime' }],
  ]);
  return {
    name: 'pantry',
    typeDefs: /* GraphQL */ `
      ${linkFederation('key')}
      type Query {
        shoppingList(filter: RecipeFilter, unit: Unit! = GRAM): [String!]!
      }
      type Recipe @key(fields: "id") { id: ID! pairing: String inspiredBy: Cuisine }
      enum Cuisine { ITALIAN THAI }
      enum Unit { GRAM CUP }
      input RecipeFilter { maxMinutes: Int vegan: Boolean }
    `,
    resolvers: {
      Query: {
        shoppingList: (_: unknown, { filter, unit }: { filter?: Filter; unit: string }) => [`eggs (${filter?.maxMinutes ?? 'any'} min)`, `flour in ${unit.toLowerCase()}s`],
      },
      Recipe: {
        __resolveReference: (ref: { id: string }) => ({ id: ref.id, ...pairings.get(ref.id) }),
        inspiredBy: (r: { cuisine?: string }) => r.cuisine ?? null,
      },
    },
  };
}

export function recipeGraph(): SubgraphOptions[] {
  return [cookbookSubgraph(), pantrySubgraph()];
}
