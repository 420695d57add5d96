/**
 * The proto package and service of a contract, from its folder: the folder
 * is the contract, so its path names it (docs/connect.md).
 */
import { basename, dirname, resolve } from 'node:path';
import { packageNameProblem, serviceNameFor } from '../grpc/package-name.js';
import { contractError } from './contract-operations.js';

/** Package and service names of a contract. */
export interface ContractNames {
  /** Proto package with a version segment, e.g. `projects.v1`. */
  readonly packageName: string;
  /** Service name, e.g. `ProjectsService`. */
  readonly serviceName: string;
}

const VERSION_SEGMENT = /^v[1-9][0-9]*((alpha|beta)[1-9]?[0-9]*)?$/;

/** `My Projects` -> `my_projects`; a leading digit gets a `c` so the segment is a proto identifier. */
function segmentOf(name: string): string {
  const cleaned = name
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, '_')
    .replace(/^_+|_+$/g, '');
  if (cleaned === '') return 'contract';
  return /^[a-z]/.test(cleaned) ? cleaned : `c${cleaned}`;
}

/**
 * Names a contract after its folder: `services/projects.v1` -> `projects.v1`,
 * `services/projects/v1` -> `projects.v1` (the layout `buf lint` expects),
 * `services/projects` -> `projects.v1`. The service is named as
 * `grpc-service generate` names one for a package: `ProjectsService`.
 */
export function contractNamesFor(dir: string): ContractNames {
  const folder = resolve(dir);
  const name = basename(folder);
  let packageName: string;
  if (packageNameProblem(name) === undefined) packageName = name;
  else if (VERSION_SEGMENT.test(name) && basename(dirname(folder)) !== '') packageName = `${segmentOf(basename(dirname(folder)))}.${name}`;
  else packageName = `${segmentOf(name)}.v1`;
  const problem = packageNameProblem(packageName);
  if (problem) throw contractError(`contract folder ${folder}: cannot name a proto package after it: ${problem}`);
  return { packageName, serviceName: serviceNameFor(packageName) };
}
