/**
 * The Connect plugin at run time: loads the contracts, binds their methods
 * to the graph being served, serves them on the Connect listener, and
 * reloads them when the services folder or the graph changes.
 */
import { resolve } from 'node:path';
import type { PluginContext } from '../../src/index.js';
import { binaryHandler, type BinaryHandler } from './binary-adapter.js';
import { servicesFolder, type ConnectConfig } from './config.js';
import { startConnectListener, type ConnectListener } from './connect-listener.js';
import { loadContracts, type LoadedContract } from './contract-loader.js';
import { watchContracts } from './contract-watcher.js';
import { bindMethods, type MethodTable } from './method-table.js';
import { createDispatcher } from './request-dispatch.js';

interface Serving {
  readonly table: MethodTable;
  readonly binary: BinaryHandler;
}

/** A running Connect service. */
export interface ConnectService {
  /** `http://host:port` of the listener. */
  readonly url: string;
  stop(): Promise<void>;
}

/**
 * Starts serving. Fails startup when the services folder cannot be read or
 * a contract in it is broken; later, a broken contract keeps its previous
 * version in service (and is logged).
 */
export async function startConnectService(context: PluginContext, options: ConnectConfig): Promise<ConnectService> {
  const root = resolve(servicesFolder(options, context.config));
  const maxBody = context.config.limits.max_request_body;
  const { log, router } = context;
  let contracts = new Map<string, LoadedContract>();

  const first = await loadContracts(root);
  const failed = first.find((result) => 'error' in result);
  if (failed && 'error' in failed) throw failed.error;
  for (const result of first) if ('contract' in result) contracts.set(result.dir, result.contract);

  const bind = (): Serving => {
    const table = bindMethods([...contracts.values()], router.graph?.apiSchema, log);
    return { table, binary: binaryHandler(table, router, maxBody) };
  };
  let serving = bind();
  const describe = () => ({ services: [...contracts.values()].map((c) => c.proto.service.typeName), rpcs: serving.table.size });

  const reload = async (): Promise<void> => {
    let results;
    try {
      results = await loadContracts(root);
    } catch (error) {
      log.error({ path: root, reason: error instanceof Error ? error.message : String(error) }, 'Connect contracts cannot be reloaded; the previous ones stay in service');
      return;
    }
    const next = new Map<string, LoadedContract>();
    for (const result of results) {
      if ('contract' in result) next.set(result.dir, result.contract);
      else {
        log.error({ dir: result.dir, reason: result.error.message }, 'Connect contract cannot be loaded; its previous version stays in service');
        const previous = contracts.get(result.dir);
        if (previous) next.set(result.dir, previous);
      }
    }
    contracts = next;
    serving = bind();
    log.info(describe(), 'Connect contracts reloaded');
  };

  const unsubscribe = router.onGraphChange(() => {
    // bindMethods keeps a method's failure to that method; this only guards against the unforeseen.
    try {
      serving = bind();
    } catch (error) {
      log.error({ err: error }, 'Connect RPCs cannot be bound to the new graph; the previous ones stay in service');
    }
  });
  let listener: ConnectListener;
  try {
    listener = await startConnectListener(options.server.listen_addr, createDispatcher({ router, log, maxBody, current: () => serving }), { log });
  } catch (error) {
    unsubscribe();
    throw error;
  }
  const unwatch = watchContracts(root, reload, log);
  if (contracts.size === 0) log.warn({ path: root }, 'No Connect contracts in the services folder yet; add one and it is served without a restart');
  const baseUrl = options.server.base_url === undefined ? {} : { base_url: options.server.base_url };
  log.info({ listen_addr: listener.address, ...baseUrl, path: root, ...describe() }, 'Connect endpoints listening');
  return {
    url: listener.url,
    async stop() {
      unwatch();
      unsubscribe();
      await listener.close();
    },
  };
}
