// How a child is started for a backend whose runtime is not the bench's own Node: node:sqlite
// under the official Node 24 binary (fetched from npm's node-<os>-<arch> package and cached, as
// the tests fetch every supported line), bun:sqlite under the pinned `bun` devDependency. Bun
// runs the TypeScript itself; Node loads it through tsx.
import { bunBinary } from '../__test__/bun-binary.js';
import { nodeBinary } from '../__test__/node-binaries.js';
import type { BackendInfo } from './handlers/registry.js';

export interface ChildCommand {
  exe: string;
  /** Arguments before the script. */
  args: string[];
}

const cache = new Map<string, ChildCommand>();

export function childCommand(runtime: BackendInfo['runtime']): ChildCommand {
  const key = runtime ?? 'self';
  let c = cache.get(key);
  if (!c) {
    if (runtime === 'bun') c = { exe: bunBinary(), args: [] };
    else c = { exe: runtime === 'node24' ? nodeBinary(24) : process.execPath, args: ['--expose-gc', '--import', 'tsx'] };
    cache.set(key, c);
  }
  return c;
}

/**
 * The command line of one benchmark child: `bench/child.ts` under Bun, and under Node its bundle
 * (bench/child-bundle.ts) when the run made one, so no child pays for tsx.
 */
export function childLine(runtime: BackendInfo['runtime'], script: string, bundle: string | undefined): ChildCommand {
  const c = childCommand(runtime);
  if (runtime === 'bun' || !bundle) return { exe: c.exe, args: [...c.args, script] };
  return { exe: c.exe, args: ['--expose-gc', bundle] };
}
