import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { switchyard, tempDir } from '../grpc/support.js';

const SCHEMA = 'type Query { hello(name: String!): String! }\ntype Mutation { wave: Boolean }\n';

describe('switchyard grpc-service generate --connect-contract', () => {
  it('writes the contract proto, its lock and the OpenAPI document beside the operations, and names what it wrote', async ({ onTestFinished }) => {
    const dir = await tempDir(onTestFinished);
    const contract = join(dir, 'services', 'greeter', 'v1');
    await mkdir(contract, { recursive: true });
    await writeFile(join(dir, 'schema.graphql'), SCHEMA);
    await writeFile(join(contract, 'Hello.graphql'), 'query Hello($name: String!) { hello(name: $name) }\n');
    await writeFile(join(contract, 'Wave.graphql'), 'mutation Wave { wave }\n');
    const result = await switchyard(['grpc-service', 'generate', '-i', 'schema.graphql', '-o', 'out', '--connect-contract', 'services/greeter/v1'], dir);
    expect(result).toEqual({
      code: 0,
      stdout:
        'wrote services/greeter/v1/contract.proto, services/greeter/v1/contract.proto.lock.json, services/greeter/v1/contract.openapi.json (Connect contract greeter.v1.GreeterService: Hello, Wave)\n' +
        'wrote out/service.proto, out/mapping.json, out/service.proto.lock.json (package service.v1, service ServiceService)\n',
      stderr: '',
    });
    const proto = await readFile(join(contract, 'contract.proto'), 'utf8');
    expect(proto).toContain(
      'service GreeterService {\n  rpc Hello(HelloRequest) returns (HelloResponse) {\n    option idempotency_level = NO_SIDE_EFFECTS;\n  }\n\n  rpc Wave(WaveRequest) returns (WaveResponse) {}\n}',
    );
    const openapi = JSON.parse(await readFile(join(contract, 'contract.openapi.json'), 'utf8')) as { paths: Record<string, object> };
    expect(Object.keys(openapi.paths)).toEqual(['/greeter.v1.GreeterService/Hello', '/greeter.v1.GreeterService/Wave']);
  });

  it('fails with the file and the reason for an anonymous operation, and writes nothing', async ({ onTestFinished }) => {
    const dir = await tempDir(onTestFinished);
    const contract = join(dir, 'ops');
    await mkdir(contract, { recursive: true });
    await writeFile(join(dir, 'schema.graphql'), SCHEMA);
    await writeFile(join(contract, 'Anon.graphql'), '{ hello(name: "x") }\n');
    const result = await switchyard(['grpc-service', 'generate', '-i', 'schema.graphql', '-o', 'out', '--connect-contract', 'ops'], dir);
    expect(result).toEqual({
      code: 1,
      stdout: '',
      stderr: `error: ${join(contract, 'Anon.graphql')}: the operation is anonymous; name it (for example "query GetProject(...)"): its name becomes the RPC name\n`,
    });
    await expect(readFile(join(contract, 'contract.proto'), 'utf8')).rejects.toThrow(/ENOENT/);
  });
});
