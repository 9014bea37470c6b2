/**
 * `--key-file <path>`: the store's 32-byte key, read from a file the host keeps (never from the
 * command line, where `ps` and shell history would show it). The file holds the key in exactly
 * one of three forms, told apart by their lengths (none can be mistaken for another):
 *
 * - 32 raw bytes (`head -c 32 /dev/urandom > key`);
 * - 64 hexadecimal characters (`openssl rand -hex 32 > key`);
 * - 44 characters of standard base64 (`openssl rand -base64 32 > key`).
 *
 * A trailing newline (LF or CRLF) after the hex or base64 text is allowed. Anything else is a
 * usage error naming the file and its length, never its bytes. Keep the file readable by its owner
 * alone (`chmod 600`).
 */
import { closeSync, constants, fstatSync, openSync, readFileSync, type Stats } from 'node:fs';
import { CliError, EXIT } from './exit.js';

const HEX = /^[0-9a-fA-F]{64}$/;
const BASE64 = /^[A-Za-z0-9+/]{43}=$/;

function refuse(flag: string, path: string, why: string): never {
  throw new CliError(
    `invalid ${flag} ${JSON.stringify(path)}: ${why} (expected 32 raw bytes, 64 hex characters, or 44 base64 characters)`,
    EXIT.usage,
    'CLI_USAGE',
  );
}

/** Longer than any of the three forms: refused before a byte is read. */
const MAX_BYTES = 4096;

function kind(st: Stats): string {
  if (st.isFIFO()) return 'a FIFO';
  if (st.isDirectory()) return 'a directory';
  if (st.isCharacterDevice() || st.isBlockDevice()) return 'a device';
  if (st.isSocket()) return 'a socket';
  return 'not a regular file';
}

/**
 * The bytes of the regular file `path`. Opened without blocking and judged by its descriptor:
 * a FIFO would block a plain open (and the CLI) until a writer came, a device could be endless.
 */
function readRegular(path: string, flag: string): Buffer {
  let fd: number;
  try {
    // O_NONBLOCK does not exist on Windows, where opening a named pipe does not wait.
    fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  } catch (e) {
    refuse(flag, path, `cannot be read (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) refuse(flag, path, `is ${kind(st)}, not a regular file`);
    if (st.size > MAX_BYTES) refuse(flag, path, `holds ${st.size} bytes in no known form`);
    return readFileSync(fd);
  } catch (e) {
    if (e instanceof CliError) throw e;
    refuse(flag, path, `cannot be read (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
  } finally {
    closeSync(fd);
  }
}

/**
 * The key in `path`; a usage error when the file is missing, is not a regular file (a FIFO, a
 * device, a directory) or holds no key in a known form.
 */
export function readKeyFile(path: string, flag = '--key-file'): Buffer {
  const raw = readRegular(path, flag);
  try {
    if (raw.length === 32) return Buffer.from(raw);
    // The text forms: ASCII only, so the latin1 view is the text, and a stray byte just fails the patterns.
    const text = raw.toString('latin1').replace(/\r?\n$/, '');
    if (HEX.test(text)) return Buffer.from(text, 'hex');
    if (BASE64.test(text)) return Buffer.from(text, 'base64');
    refuse(flag, path, `holds ${raw.length} bytes in no known form`);
  } finally {
    raw.fill(0);
  }
}
