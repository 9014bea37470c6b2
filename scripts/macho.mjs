// Reads what macOS's loader would read of a 64-bit Mach-O file: CPU, file type, the libraries it
// loads and the symbols it exports (from dyld's export trie). The macOS addons are linked on this
// Linux machine but cannot run here; this is how their tests check that each one is a library
// dyld can load for its CPU, asking only for system libraries, with the napi entry point exported.

import { readFileSync } from 'node:fs';

const MH_MAGIC_64 = 0xfeedfacf;
const CPU = new Map([
  [0x01000007, 'x86_64'],
  [0x0100000c, 'arm64'],
]);
const FILE_TYPE = { 6: 'dylib', 8: 'bundle' };
// Bitwise operators yield signed 32-bit numbers; load commands are read unsigned, hence >>> 0.
const LC_REQ_DYLD = 0x80000000;
const LC_LOAD_DYLIB = 0xc;
const LC_LOAD_WEAK_DYLIB = (0x18 | LC_REQ_DYLD) >>> 0;
const LC_REEXPORT_DYLIB = (0x1f | LC_REQ_DYLD) >>> 0;
const LC_DYLD_INFO_ONLY = (0x22 | LC_REQ_DYLD) >>> 0;
const LC_DYLD_EXPORTS_TRIE = (0x33 | LC_REQ_DYLD) >>> 0;

function uleb(buf, at) {
  let value = 0;
  let shift = 0;
  for (;;) {
    const b = buf[at++];
    if (b === undefined) throw new Error('export trie runs past the end of the file');
    value += (b & 0x7f) * 2 ** shift;
    shift += 7;
    if (b < 0x80) return [value, at];
  }
}

function cString(buf, at) {
  const end = buf.indexOf(0, at);
  if (end < 0) throw new Error('unterminated string');
  return [buf.toString('utf8', at, end), end + 1];
}

/** Every name in the export trie at `buf[off .. off + size]`. */
function trieExports(buf, off, size) {
  const trie = buf.subarray(off, off + size);
  const names = [];
  const seen = new Set();
  const walk = (node, prefix) => {
    if (seen.has(node)) throw new Error('export trie has a cycle');
    seen.add(node);
    let [terminal, at] = uleb(trie, node);
    if (terminal > 0) names.push(prefix);
    at += terminal;
    const children = trie[at++];
    for (let i = 0; i < children; i++) {
      const [edge, next] = cString(trie, at);
      const [child, after] = uleb(trie, next);
      at = after;
      walk(child, prefix + edge);
    }
  };
  if (size > 0) walk(0, '');
  return names;
}

/** `{ cpu, fileType, dylibs, exports }` of the Mach-O at `path`; throws when it is not one. */
export function inspectMachO(path) {
  const buf = readFileSync(path);
  if (buf.length < 32 || buf.readUInt32LE(0) !== MH_MAGIC_64) throw new Error(`${path}: not a 64-bit Mach-O file`);
  const cpu = CPU.get(buf.readUInt32LE(4)) ?? `unknown(0x${buf.readUInt32LE(4).toString(16)})`;
  const fileType = FILE_TYPE[buf.readUInt32LE(12)] ?? `other(${buf.readUInt32LE(12)})`;
  const ncmds = buf.readUInt32LE(16);
  const dylibs = [];
  let exports = [];
  let at = 32;
  for (let i = 0; i < ncmds; i++) {
    const cmd = buf.readUInt32LE(at);
    const size = buf.readUInt32LE(at + 4);
    if (size < 8 || at + size > buf.length) throw new Error(`${path}: load command ${i} is out of bounds`);
    if (cmd === LC_LOAD_DYLIB || cmd === LC_LOAD_WEAK_DYLIB || cmd === LC_REEXPORT_DYLIB) {
      dylibs.push(cString(buf, at + buf.readUInt32LE(at + 8))[0]);
    } else if (cmd === LC_DYLD_INFO_ONLY) {
      exports = trieExports(buf, buf.readUInt32LE(at + 40), buf.readUInt32LE(at + 44));
    } else if (cmd === LC_DYLD_EXPORTS_TRIE) {
      exports = trieExports(buf, buf.readUInt32LE(at + 8), buf.readUInt32LE(at + 12));
    }
    at += size;
  }
  return { cpu, fileType, dylibs, exports };
}
