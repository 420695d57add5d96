/**
 * `switchyard grpc-service generate` against the real `wgc grpc-service
 * generate` (the npm `wgc` CLI, a dev dependency that runs offline): both
 * run on the same inputs, each into its own folder, and every file they
 * write is compared byte for byte.
 */
import { execFile } from 'node:child_process';
import { cp, mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CATALOG_SDL } from '../plugins/grpc/catalog-fixture.js';
import { switchyard, tempDir, type Run } from './support.js';

const WGC = join(import.meta.dirname, '../../node_modules/.bin/wgc');

function wgc(args: readonly string[], cwd: string): Promise<Run> {
  return new Promise((resolve) => {
    execFile(WGC, ['grpc-service', 'generate', ...args], { cwd, env: { ...process.env, NO_COLOR: '1' } }, (error, stdout, stderr) => {
      resolve({ code: error ? (typeof error.code === 'number' ? error.code : 1) : 0, stdout, stderr });
    });
  });
}

/** Every file under `dir`, by relative path (sorted), with its text. */
async function filesOf(dir: string): Promise<Map<string, string>> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const paths = entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name).slice(dir.length + 1));
  const files = new Map<string, string>();
  for (const path of paths.sort()) files.set(path, await readFile(join(dir, path), 'utf8'));
  return files;
}

/**
 * Runs wgc in `<dir>/wgc` and switchyard in `<dir>/ours` with the same
 * arguments (each folder a copy of `<dir>/inputs` plus what earlier runs
 * left there), then expects the same files with the same bytes.
 */
async function bothWrite(dir: string, args: readonly string[]): Promise<Map<string, string>> {
  const [theirs, ours] = await Promise.all([wgc(args, join(dir, 'wgc')), switchyard(['grpc-service', 'generate', ...args], join(dir, 'ours'))]);
  expect(theirs.code, theirs.stderr + theirs.stdout).toBe(0);
  expect(ours.code, ours.stderr).toBe(0);
  const expected = await filesOf(join(dir, 'wgc'));
  const actual = await filesOf(join(dir, 'ours'));
  expect([...actual.keys()]).toEqual([...expected.keys()]);
  for (const [file, text] of expected) expect(actual.get(file), file).toBe(text);
  return actual;
}

/** A test folder with `inputs` copied into both runners' folders. */
async function workspace(onTestFinished: Parameters<typeof tempDir>[0], inputs: Record<string, string>): Promise<string> {
  const dir = await tempDir(onTestFinished);
  for (const [file, text] of Object.entries(inputs)) {
    await mkdir(join(dir, 'inputs', file, '..'), { recursive: true });
    await writeFile(join(dir, 'inputs', file), text);
  }
  await cp(join(dir, 'inputs'), join(dir, 'wgc'), { recursive: true });
  await cp(join(dir, 'inputs'), join(dir, 'ours'), { recursive: true });
  return dir;
}

async function writeBoth(dir: string, file: string, text: string): Promise<void> {
  for (const side of ['wgc', 'ours']) {
    await mkdir(join(dir, side, file, '..'), { recursive: true });
    await writeFile(join(dir, side, file), text);
  }
}

/** A second schema: several and compound keys, nested inputs, nullable list items, an interface list, descriptions. */
const ACCOUNTS_SDL = /* GraphQL */ `
  extend schema @link(url: "https://specs.apollo.dev/federation/v2.5", import: ["@key"])

  """
  A customer account.
  """
  type Account @key(fields: "id") @key(fields: "email accountNumber") {
    id: ID!
    email: String!
    accountNumber: Int!
    region: Region!
    "Balance in cents."
    balance: Int!
    nicknames: [String]
    scores: [[Float]]
    lastLogin: String
    owner: Owner
    members: [Owner!]!
  }

  type Region {
    code: String!
    name: String
  }

  interface Owner {
    id: ID!
    displayName: String!
  }

  type Person implements Owner {
    id: ID!
    displayName: String!
    age: Int
  }

  type Company implements Owner {
    id: ID!
    displayName: String!
    employees: [Person!]
  }

  enum Plan {
    FREE
    TEAM
    "Paid per seat."
    ENTERPRISE
  }

  input AddressInput {
    street: String!
    lines: [String!]
    region: RegionInput!
  }

  input RegionInput {
    code: String!
  }

  input OpenAccountInput {
    email: String!
    plan: Plan = FREE
    address: AddressInput
    tags: [[String!]!]
  }

  type Query {
    account(id: ID!): Account
    accounts(plan: Plan, ids: [ID!]): [Account!]!
    owners: [Owner]!
    ping: Boolean!
  }

  type Mutation {
    openAccount(input: OpenAccountInput!): Account!
    closeAccount(id: ID!, reason: String): Boolean
  }
`;

// Each test starts several wgc processes (a few seconds each on a busy machine).
describe('grpc-service generate writes what wgc grpc-service generate writes', { timeout: 180_000 }, () => {
  it('from a schema using every construct: the same service.proto, mapping.json and lock, for several names and packages', async ({ onTestFinished }) => {
    const inputs = { 'catalog.graphql': CATALOG_SDL, 'accounts.graphqls': ACCOUNTS_SDL };
    const runs = [
      ['-i', 'catalog.graphql', '-o', 'catalog', 'Service'],
      ['-i', 'accounts.graphqls', '-o', 'gen/accounts/v1', '-p', 'accounts.v1', '-g', 'example.com/accounts/gen/v1;accountsv1', 'accounts-service'],
      // A package without a version segment, and a name with punctuation and an acronym.
      ['-i', 'catalog.graphql', '-o', 'plain', '-p', 'catalog', 'myAPI.v1'],
    ];
    // One workspace per run, so the runs can go side by side.
    const written = await Promise.all(runs.map(async (args) => bothWrite(await workspace(onTestFinished, inputs), args)));
    const catalog = written[0]!;
    expect([...catalog.keys()]).toEqual(['accounts.graphqls', 'catalog.graphql', 'catalog/mapping.json', 'catalog/service.proto', 'catalog/service.proto.lock.json'].sort());
    expect(catalog.get('catalog/service.proto')).toContain('package service.v1;');
    expect(catalog.get('catalog/service.proto')).toContain('service Service {');
    expect(catalog.get('catalog/service.proto')).not.toContain('ServiceService');
    expect(written[1]!.get('gen/accounts/v1/service.proto')).toContain('option go_package = "example.com/accounts/gen/v1;accountsv1";');
    expect(written[1]!.get('gen/accounts/v1/service.proto')).toContain('service AccountsService {');
    expect(written[2]!.get('plain/service.proto')).toMatch(/^package catalog;$/m);
    expect(written[2]!.get('plain/service.proto')).toContain('service MyApiV1 {');
  });

  it('reuses the lock in the output folder, or the one -l names, so field numbers stay where they were', async ({ onTestFinished }) => {
    const dir = await workspace(onTestFinished, { 'schema.graphql': ACCOUNTS_SDL });
    const first = await bothWrite(dir, ['-i', 'schema.graphql', '-o', 'out', 'Accounts']);
    const numberOf = (proto: string, message: string, field: string): number => Number(new RegExp(`message ${message} \\{[^}]*\\s${field} = (\\d+);`).exec(proto)?.[1]);
    const before = first.get('out/service.proto')!;

    // balance and nicknames go, a field is added before them.
    const changed = ACCOUNTS_SDL.replace('    "Balance in cents."\n    balance: Int!\n    nicknames: [String]\n', '').replace(
      '    email: String!\n',
      '    email: String!\n    phone: String\n',
    );
    // -l (below) in a copy of the workspace as the first generation left it, so it runs beside the second generation.
    const other = await tempDir(onTestFinished);
    await Promise.all(['wgc', 'ours'].map((side) => cp(join(dir, side), join(other, side), { recursive: true })));
    await writeBoth(dir, 'schema.graphql', changed);
    await writeBoth(other, 'schema.graphql', changed);
    // -l: start from a lock kept elsewhere (here the first generation's), write the new one into the output folder.
    await writeBoth(other, 'locks/first.json', first.get('out/service.proto.lock.json')!);
    const [second, fromOther] = await Promise.all([
      bothWrite(dir, ['-i', 'schema.graphql', '-o', 'out', 'Accounts']),
      bothWrite(other, ['-i', 'schema.graphql', '-o', 'elsewhere', '-l', 'locks/first.json', 'Accounts']),
    ]);
    const after = second.get('out/service.proto')!;
    for (const field of ['id', 'email', 'account_number', 'region', 'scores', 'last_login', 'owner', 'members']) {
      expect(numberOf(after, 'Account', field), field).toBe(numberOf(before, 'Account', field));
    }
    expect(numberOf(after, 'Account', 'phone')).toBeGreaterThan(
      Math.max(...['id', 'email', 'account_number', 'region', 'balance', 'nicknames', 'scores', 'last_login', 'owner', 'members'].map((f) => numberOf(before, 'Account', f))),
    );
    expect(after).toMatch(new RegExp(`message Account \\{\\s+reserved ${numberOf(before, 'Account', 'balance')} to ${numberOf(before, 'Account', 'nicknames')};`));

    expect(fromOther.get('elsewhere/service.proto')).toBe(after);
  });

  it('--with-operations: one RPC per operation, found recursively in .graphql, .gql and .graphqls files, with fragments, variables and custom scalar types; the lock reused', async ({
    onTestFinished,
  }) => {
    const operations = {
      'schema.graphql': CATALOG_SDL,
      'ops/GetProduct.graphql': /* GraphQL */ `
        query GetProduct($id: ID!) {
          product(id: $id) { ...ProductCard category { id name parent { name } } }
        }
        fragment ProductCard on Product { id name price stock tags kind createdAt }
      `,
      'ops/catalog/ListProducts.gql': /* GraphQL */ `
        query ListProducts($filter: ProductFilter, $first: Int = 5) {
          products(filter: $filter, first: $first) { id name aliases discontinued reviews(limit: 2) { rating body } }
        }
      `,
      'ops/catalog/search/Search.graphqls': /* GraphQL */ `
        query Search($term: String!) {
          search(term: $term) {
            __typename
            ... on Product { id name }
            ... on Article { id title author { name } }
          }
          node(id: "a1") { id ... on Author { name } }
        }
      `,
      'ops/mutations/SetPrice.graphql': /* GraphQL */ `
        mutation SetPrice($id: ID!, $price: Float!) { setPrice(id: $id, price: $price) { id price } }
      `,
      'ops/README.md': 'not an operation',
    };
    const dir = await workspace(onTestFinished, operations);
    const scalars = JSON.stringify({ DateTime: 'google.protobuf.Timestamp', JSON: 'string' });
    const args = ['-i', 'schema.graphql', '-o', 'proto', '--with-operations', 'ops', '-p', 'catalog.v1', '--custom-scalar-mapping', scalars, '--max-depth', '20', 'CatalogService'];
    const first = await bothWrite(dir, args);
    const proto = first.get('proto/service.proto')!;
    expect([...first.keys()].filter((file) => file.startsWith('proto/'))).toEqual(['proto/service.proto', 'proto/service.proto.lock.json']);
    expect([...proto.matchAll(/rpc (\w+)\(/g)].map((m) => m[1])).toEqual(['GetProduct', 'ListProducts', 'Search', 'SetPrice']);
    expect(proto).toMatch(/google\.protobuf\.Timestamp created_at = \d+;/);

    // A new field in one operation and a new operation: the numbers already given stay.
    await writeBoth(dir, 'ops/GetProduct.graphql', operations['ops/GetProduct.graphql'].replace('{ id name price', '{ id name discontinued price'));
    await writeBoth(dir, 'ops/a/Now.graphql', 'query Now { serverTime }\n');
    const second = await bothWrite(dir, args);
    expect(second.get('proto/service.proto')).toMatch(/rpc Now\(NowRequest\)/);
    expect(second.get('proto/service.proto.lock.json')).not.toBe(first.get('proto/service.proto.lock.json'));
  });
});
