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
import { readFileSync } from 'node:fs';
import { CliError, EXIT } from './exit.js';

const HEX = /^[0-9a-fA-F]{64}$/;
const BASE64 = /^[A-Za-z0-9+/]{43}=$/;

function refuse(flag: string, path: string, why: string): never {
  throw new CliError(`invalid ${flag} ${JSON.stringify(path)}: ${why} (expected 32 raw bytes, 64 hex characters, or 44 base64 characters)`, EXIT.usage, 'CLI_USAGE');
}

/** The key in `path`; a usage error when the file is missing or holds no key in a known form. */
export function readKeyFile(path: string, flag = '--key-file'): Buffer {
  let raw: Buffer;
  try {
    raw = readFileSync(path);
  } catch (e) {
    refuse(flag, path, `cannot be read (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
  }
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
