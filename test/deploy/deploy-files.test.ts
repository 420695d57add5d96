/**
 * The deployment files (Dockerfile, .dockerignore, deploy/compose.yaml,
 * deploy/kubernetes/) as far as they can be checked without a container
 * runtime or a cluster: they parse, the router configs in them pass the
 * router's own config loader, ports and probe paths agree with those
 * configs, the shutdown timing fits, and the image's entrypoint and health
 * check work against the built package.
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml, parseAllDocuments } from 'yaml';
import { builtinSections } from '../../src/cli/builtin-plugins.js';
import { composeSubgraphs } from '../../src/compose/compose.js';
import { parseComposeFile } from '../../src/compose/compose-file.js';
import { parseConfigText, type LoadedConfig } from '../../src/kernel/config/load-config.js';
import { startSubgraph, type TestSubgraph } from '../../src/testing/index.js';
import { freePort, waitFor } from '../cli/run-cli.js';
import { builtSwitchyard, REPO } from '../examples/checkout-package.js';
import { librarySubgraph } from '../kernel/library-subgraphs.js';

// biome-ignore lint/suspicious/noExplicitAny: parsed YAML is walked by key in the assertions.
type Yaml = Record<string, any>;

const K8S = join(REPO, 'deploy/kubernetes');
const sections = builtinSections.map((s) => ({ key: s.key, schema: s.schema, plugin: s.plugin }));

/** The router's own validation: core keys and every built-in plugin section, no environment. */
function loadRouterConfig(text: string, file: string): LoadedConfig {
  return parseConfigText(text, { env: {}, sections, file });
}

function portOf(listenAddr: string): number {
  return Number(listenAddr.slice(listenAddr.lastIndexOf(':') + 1));
}

/** Dockerfile instructions per stage, continuation lines joined, comments dropped. */
function dockerStages(text: string): Array<{ name: string; instructions: Array<{ op: string; args: string }> }> {
  const lines = text.split('\n').filter((line) => !/^\s*#/.test(line));
  const joined = lines.join('\n').replace(/\\\n/g, ' ');
  const stages: Array<{ name: string; instructions: Array<{ op: string; args: string }> }> = [];
  for (const line of joined.split('\n')) {
    const match = /^\s*([A-Za-z]+)\s+(.*)$/.exec(line);
    if (!match) continue;
    const op = match[1]!.toUpperCase();
    const args = match[2]!.trim();
    if (op === 'FROM') stages.push({ name: /\bAS\s+(\S+)/i.exec(args)?.[1] ?? String(stages.length), instructions: [] });
    stages.at(-1)?.instructions.push({ op, args });
  }
  return stages;
}

let manifests: Yaml[];
let configMap: Yaml;
let deployment: Yaml;
let routerConfig: LoadedConfig;
let dockerfile: string;

beforeAll(async () => {
  manifests = [];
  for (const file of (await readdir(K8S)).filter((f) => f.endsWith('.yaml')).sort()) {
    for (const doc of parseAllDocuments(await readFile(join(K8S, file), 'utf8'))) {
      expect(doc.errors, file).toEqual([]);
      manifests.push(doc.toJS() as Yaml);
    }
  }
  configMap = manifests.find((m) => m.kind === 'ConfigMap')!;
  deployment = manifests.find((m) => m.kind === 'Deployment')!;
  routerConfig = loadRouterConfig(configMap.data['router.config.yaml'], 'configmap.yaml router.config.yaml');
  dockerfile = await readFile(join(REPO, 'Dockerfile'), 'utf8');
});

describe('deploy/kubernetes', () => {
  it('has a Deployment, Service, HorizontalPodAutoscaler and ConfigMap, and a kustomization listing every file', async () => {
    expect(manifests.map((m) => m.kind).sort()).toEqual(['ConfigMap', 'Deployment', 'HorizontalPodAutoscaler', 'Kustomization', 'Service']);
    const kustomization = manifests.find((m) => m.kind === 'Kustomization')!;
    const files = (await readdir(K8S)).filter((f) => f.endsWith('.yaml') && f !== 'kustomization.yaml').sort();
    expect([...kustomization.resources].sort()).toEqual(files);
  });

  it("the ConfigMap's router.config.yaml passes the router's config loader, on all interfaces, with Redis", () => {
    expect(routerConfig.core.listen_addr).toBe('0.0.0.0:3002');
    expect(routerConfig.core.storage_providers.sharedstore.map((p: { id: string }) => p.id)).toContain('main');
    expect(routerConfig.sections.response_cache).toMatchObject({ enabled: true, storage: { provider: 'sharedstore', provider_id: 'main' } });
    expect(routerConfig.sections.automatic_persisted_queries).toMatchObject({ enabled: true, storage: { provider_id: 'main' } });
  });

  it('probes and ports agree with the config, and the config and graph are mounted where the image looks', () => {
    const pod = deployment.spec.template.spec;
    const [container] = pod.containers;
    const port = container.ports.find((p: Yaml) => p.name === 'http');
    expect(port.containerPort).toBe(portOf(routerConfig.core.listen_addr));
    expect(container.readinessProbe.httpGet).toEqual({ path: '/health/ready', port: 'http' });
    expect(container.livenessProbe.httpGet).toEqual({ path: '/health/live', port: 'http' });
    expect(container.lifecycle?.preStop).toBeUndefined();
    // The image's CMD reads /config/router.config.yaml; the graph path in the config is in the same mount.
    const mount = container.volumeMounts.find((m: Yaml) => m.name === 'config');
    expect(mount.mountPath).toBe('/config');
    expect(dockerfile).toContain('"-c", "/config/router.config.yaml"');
    expect(container.args ?? container.command).toBeUndefined();
    expect(posix.dirname(routerConfig.core.execution_config.file.path!)).toBe(mount.mountPath);
    const sources = pod.volumes.find((v: Yaml) => v.name === 'config').projected.sources.map((s: Yaml) => s.configMap.name);
    expect(sources).toContain(configMap.metadata.name);
    // Runs as the image's unprivileged user.
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000 });
  });

  it('terminationGracePeriodSeconds exceeds shutdown_delay + grace_period', () => {
    const { shutdown_delay, grace_period } = routerConfig.core;
    expect(shutdown_delay).toBeGreaterThan(0);
    expect(deployment.spec.template.spec.terminationGracePeriodSeconds * 1000).toBeGreaterThan(shutdown_delay + grace_period);
  });

  it('the Service selects the pods and targets the http port; the HPA scales the Deployment on CPU against a CPU request', () => {
    const service = manifests.find((m) => m.kind === 'Service')!;
    const labels = deployment.spec.template.metadata.labels;
    expect(labels).toMatchObject(service.spec.selector);
    expect(labels).toMatchObject(deployment.spec.selector.matchLabels);
    expect(service.spec.ports[0]).toMatchObject({ port: 3002, targetPort: 'http' });
    const hpa = manifests.find((m) => m.kind === 'HorizontalPodAutoscaler')!;
    expect(hpa.apiVersion).toBe('autoscaling/v2');
    expect(hpa.spec.scaleTargetRef).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: deployment.metadata.name });
    expect(hpa.spec.metrics[0].resource.name).toBe('cpu');
    expect(deployment.spec.template.spec.containers[0].resources.requests.cpu).toBeDefined();
  });
});

describe('deploy/compose.yaml', () => {
  it('parses; router, redis:7 and the demo subgraphs; the inline configs pass their loaders', async () => {
    const compose = parseYaml(await readFile(join(REPO, 'deploy/compose.yaml'), 'utf8')) as Yaml;
    expect(Object.keys(compose.services).sort()).toEqual(['redis', 'router', 'subgraphs']);
    expect(compose.services.redis.image).toBe('redis:7');
    expect(compose.services.subgraphs.build.target).toBe('build');
    expect(compose.services.subgraphs.command).toEqual(['npm', 'start']);
    const packageJson = JSON.parse(await readFile(join(REPO, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    expect(packageJson.scripts.start).toContain('examples/demo/start.ts');
    expect(compose.services.router.build.target).toBe('runtime');
    expect(compose.services.router.network_mode).toBe('service:subgraphs');

    const config = loadRouterConfig(compose.configs['router-config'].content, 'compose.yaml router-config');
    expect(compose.services.subgraphs.ports).toContain(`${portOf(config.core.listen_addr)}:${portOf(config.core.listen_addr)}`);
    expect(config.core.storage_providers.sharedstore[0]!.urls).toEqual(['redis://redis:6379']);
    // The router composes the graph to the path its config reads.
    expect(compose.services.router.command.join(' ')).toContain(`-o ${config.core.execution_config.file.path}`);
    const composeFile = parseComposeFile(compose.configs['router-compose'].content, 'router.compose.yaml');
    // Names and ports of the demo's subgraphs (examples/demo: 4001-4004 in this order).
    const demo = await readFile(join(REPO, 'examples/demo/subgraphs.ts'), 'utf8');
    const demoNames = [...demo.matchAll(/^\s{2}name: '([a-z]+)'/gm)].map((m) => m[1]);
    expect(composeFile.subgraphs.map((s) => s.name)).toEqual(demoNames);
    expect(composeFile.subgraphs.map((s) => s.routingUrl)).toEqual(demoNames.map((_, i) => `http://127.0.0.1:${4001 + i}/graphql`));
    expect(composeFile.subgraphs.map((s) => s.kind)).toEqual(demoNames.map(() => 'introspection'));
  });
});

describe('Dockerfile', () => {
  it('is multi-stage on one Node LTS slim image, non-root, exposes the listen port, health check on /health/live', () => {
    const stages = dockerStages(dockerfile);
    expect(stages.map((s) => s.name)).toEqual(['build', 'runtime']);
    const nodeVersion = /^ARG NODE_VERSION=(\d+)$/m.exec(dockerfile)?.[1];
    expect(Number(nodeVersion) % 2).toBe(0); // even majors are the LTS lines
    for (const stage of stages) expect(stage.instructions[0]!.args).toMatch(/^node:\$\{NODE_VERSION\}-bookworm-slim AS /);
    const build = stages[0]!.instructions;
    expect(build.some((i) => i.op === 'RUN' && /npm (ci|install)\b/.test(i.args))).toBe(true);
    expect(build.some((i) => i.op === 'RUN' && i.args === 'npm run build')).toBe(true);
    const runtime = stages[1]!.instructions;
    expect(runtime.some((i) => i.op === 'RUN' && i.args.includes('--omit=dev'))).toBe(true);
    expect(runtime.find((i) => i.op === 'USER')?.args).toBe('node');
    const listen = /LISTEN_ADDR=(\S+)/.exec(
      runtime
        .filter((i) => i.op === 'ENV')
        .map((i) => i.args)
        .join(' '),
    )?.[1];
    expect(listen).toBe('0.0.0.0:3002');
    expect(runtime.find((i) => i.op === 'EXPOSE')?.args).toBe(String(portOf(listen!)));
    expect(runtime.find((i) => i.op === 'HEALTHCHECK')?.args).toContain(`http://127.0.0.1:${portOf(listen!)}/health/live`);
  });

  it('copies only what exists, and .dockerignore keeps none of it out', async () => {
    const ignored = (await readFile(join(REPO, '.dockerignore'), 'utf8'))
      .split('\n')
      .map((l) => l.trim())
      .filter((l) => l && !l.startsWith('#'));
    for (const stage of dockerStages(dockerfile)) {
      for (const { args } of stage.instructions.filter((i) => i.op === 'COPY' && !i.args.startsWith('--from'))) {
        const sources = args.split(/\s+/).slice(0, -1);
        for (const source of sources) {
          expect(existsSync(join(REPO, source)), source).toBe(true);
          expect(
            ignored.filter((pattern) => pattern === source || pattern === `${source}/`),
            source,
          ).toEqual([]);
        }
      }
    }
    for (const needed of ['examples/demo/start.ts', 'examples/demo/subgraphs.ts', 'src/cli/main.ts']) {
      expect(
        ignored.some((pattern) => needed === pattern || needed.startsWith(`${pattern}/`)),
        needed,
      ).toBe(false);
    }
  });

  describe('entrypoint and health check against the built package', () => {
    let subgraph: TestSubgraph;
    let dir: string;

    beforeAll(async () => {
      subgraph = await startSubgraph(librarySubgraph());
      dir = await mkdtemp(join(tmpdir(), 'switchyard-deploy-'));
    });

    afterAll(async () => {
      await subgraph?.close();
      if (dir) await rm(dir, { recursive: true, force: true });
    });

    it('ENTRYPOINT + CMD paths exist after the build; the entrypoint serves, and HEALTHCHECK passes then fails after stop', { timeout: 300_000 }, async () => {
      const pkg = await builtSwitchyard();
      const runtime = dockerStages(dockerfile)[1]!.instructions;
      const workdir = runtime.find((i) => i.op === 'WORKDIR')!.args;
      const entrypoint = JSON.parse(runtime.find((i) => i.op === 'ENTRYPOINT')!.args) as string[];
      const cmd = JSON.parse(runtime.find((i) => i.op === 'CMD')!.args) as string[];
      expect(cmd.slice(0, 2)).toEqual(['router', '-c']);
      // /app/dist/... is copied from the build stage's /app/dist: the package's dist/.
      const inImage = entrypoint.filter((arg) => arg.startsWith(`${workdir}/`));
      expect(inImage).toEqual([`${workdir}/dist/cli/main.js`]);
      expect(runtime.some((i) => i.op === 'COPY' && i.args === `--from=build ${workdir}/dist ./dist`)).toBe(true);
      const local = (arg: string) => (arg.startsWith(`${workdir}/`) ? join(pkg, arg.slice(workdir.length + 1)) : arg);
      for (const path of inImage) expect(existsSync(local(path)), path).toBe(true);

      // Start the image's command line (node + flags + main.js) on a free port, with LISTEN_ADDR as the image sets it.
      const port = await freePort();
      const supergraph = join(dir, 'supergraph.graphql');
      await writeFile(supergraph, composeSubgraphs([{ name: subgraph.name, url: subgraph.url, sdl: subgraph.typeDefs }]).supergraphSdl);
      const [node, ...nodeArgs] = entrypoint.map(local);
      expect(node).toBe('node');
      const child = spawn(process.execPath, [...nodeArgs, 'router', '--supergraph', supergraph], {
        env: { ...process.env, LISTEN_ADDR: `127.0.0.1:${port}`, NODE_ENV: 'production' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
      const healthcheck = JSON.parse(/HEALTHCHECK .*?CMD (\[.*\])$/m.exec(dockerfile.replace(/\\\n\s*/g, ''))![1]!) as string[];
      const runHealthcheck = () =>
        new Promise<number | null>((resolve) => {
          const args = healthcheck.slice(1).map((a) => a.replace(':3002/', `:${port}/`));
          spawn(process.execPath, args, { stdio: 'ignore' }).on('exit', (code) => resolve(code));
        });
      try {
        await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/health/ready`)).ok, 60_000);
        const response = await fetch(`http://127.0.0.1:${port}/graphql`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ query: '{ book(id: "b1") { title } }' }),
        });
        expect(await response.json()).toEqual({ data: { book: { title: 'Dune' } } });
        expect(healthcheck[0]).toBe('node');
        expect(await runHealthcheck()).toBe(0);
        child.kill('SIGTERM');
        expect(await exited).toBe(0);
        expect(await runHealthcheck()).toBe(1);
      } finally {
        child.kill('SIGKILL');
      }
    });
  });
});
