// Loads the linux-x64-musl addon under musl's own dynamic loader, on this Debian machine.
//
// Why a C host and not a musl Node or Bun: there is no musl Node build to install here, and
// Bun's musl build (`@oven/bun-linux-x64-musl`) needs a musl libstdc++ Debian does not have (with
// one taken from a musllinux wheel it segfaults at start). So this is the next best thing, and
// it is only that: a small program compiled with Debian's `musl-gcc` that exports a stub for
// every napi_* / node_api_* / uv_* function the addon imports, then dlopen()s the addon with
// RTLD_NOW. musl binds everything at load, so a load that succeeds proves that every other
// import resolves against musl's libc (Debian's musl), and it runs the addon's constructors.
//
// It does NOT call napi_register_module_v1: napi-rs's init treats what napi_* returns as live
// JS handles, so driving it with stubs is not sound (faking a JS engine is writing a Node).
// Every stub records its name and returns napi_generic_failure, so a call would show in `called`.

import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** `readelf` output for `file` (binutils; the `--dyn-syms` / `-d` views). */
function readelf(args, file) {
  return execFileSync('readelf', [...args, file], { encoding: 'utf8' });
}

/** The names of the undefined dynamic symbols of `file`: what it imports. */
export function importedSymbols(file) {
  const names = new Set();
  for (const line of readelf(['--dyn-syms', '-W'], file).split('\n')) {
    // Num: Value Size Type Bind Vis Ndx Name
    const f = line.trim().split(/\s+/);
    if (f.length >= 8 && f[6] === 'UND' && f[7]) names.add(f[7].replace(/@.*$/, ''));
  }
  return [...names].sort();
}

/** The Node-API and libuv functions among them: what a Node host would provide. */
export function hostImports(file) {
  return importedSymbols(file).filter((n) => /^(napi_|node_api_|uv_)/.test(n));
}

/** The DT_NEEDED libraries of `file`. */
export function neededLibraries(file) {
  return [...readelf(['-d', '-W'], file).matchAll(/\(NEEDED\)\s+Shared library: \[([^\]]+)\]/g)].map((m) => m[1]);
}

/** The program interpreter of `file` (its PT_INTERP), or null for a library. */
export function interpreter(file) {
  return /Requesting program interpreter: ([^\]]+)\]/.exec(readelf(['-l', '-W'], file))?.[1] ?? null;
}

/** C source of the host: one recording stub per name in `stubs`, then dlopen + dlsym. */
export function hostSource(stubs) {
  const defs = stubs.map((n) => `int ${n}(void) { record("${n}"); return 9; }`).join('\n');
  return `#include <dlfcn.h>
#include <stdio.h>
/* Names of stubs called, so a test sees if loading alone made the addon call into "Node". */
static const char *called[256];
static int ncalled;
static void record(const char *name) { if (ncalled < 256) called[ncalled++] = name; }
/* 9 is napi_generic_failure. Called with arguments but declared without: harmless in the
   x86-64 SysV ABI (the caller owns its argument registers and stack). */
${defs}
static void print_called(void) {
  printf("\\"called\\":[");
  for (int i = 0; i < ncalled; i++) printf("%s\\"%s\\"", i ? "," : "", called[i]);
  printf("]");
}
int main(int argc, char **argv) {
  if (argc != 2) return 2;
  void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    const char *e = dlerror();
    printf("{\\"loaded\\":false,\\"error\\":\\"");
    for (; e && *e; e++) if (*e != '"' && *e != '\\\\') putchar(*e);
    printf("\\",");
    print_called();
    printf("}\\n");
    return 1;
  }
  void *entry = dlsym(lib, "napi_register_module_v1");
  printf("{\\"loaded\\":true,\\"entry\\":%s,\\"stubs\\":%d,", entry ? "\\"napi_register_module_v1\\"" : "null", ${stubs.length});
  print_called();
  printf("}\\n");
  return entry ? 0 : 1;
}
`;
}

/**
 * Builds, in `workDir`, a host exporting the stubs `stubs` (default: what `addon` imports from
 * Node) and runs it on `addon`; returns the JSON line it printed, its exit status and stderr.
 * Passing the musl addon's stubs to the glibc addon, or one stub fewer, shows the refusals.
 */
export function runMuslHost(addon, workDir, stubs = hostImports(addon)) {
  mkdirSync(workDir, { recursive: true });
  const src = join(workDir, 'host.c');
  const exe = join(workDir, 'host');
  writeFileSync(src, hostSource(stubs));
  execFileSync('musl-gcc', ['-O1', '-rdynamic', '-o', exe, src]);
  // Only musl's configured library path: nothing of the caller's may make a load succeed.
  const env = { ...process.env };
  delete env.LD_LIBRARY_PATH;
  delete env.LD_PRELOAD;
  const run = spawnSync(exe, [addon], { encoding: 'utf8', env });
  const line = run.stdout.split('\n').find((l) => l.startsWith('{'));
  return { status: run.status, signal: run.signal, stderr: run.stderr, result: line ? JSON.parse(line) : null };
}
