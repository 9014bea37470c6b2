/**
 * `encrypt`, `decrypt` and `rotate-key`: moving a store directory between plain and encrypted
 * (the engine's crash-safe rewrite of a closed store: after a kill at any point the directory
 * opens with the old key or the new one, never neither), and replacing the key of an encrypted
 * store: the data key is rewrapped (no data is rewritten) or, with `--reencrypt`, replaced by a
 * fresh one (the same rewrite, encrypted to encrypted). Keys come from files (keyfile.ts).
 */
import type { Command } from 'commander';
import { Rabosh } from 'rabosh-memory';
import { CliError, EXIT, asCliError } from './exit.js';
import { readKeyFile } from './keyfile.js';
import { holdsNothing, isUrl, noStore, refuseNonDirectory, storeName } from './target.js';

interface Common {
  json?: boolean;
  keyFile?: string;
  newKeyFile?: string;
  reencrypt?: boolean;
}

type Sub = (name: string, description: string) => Command;
type Out = (opts: Common, human: string, json: unknown) => void;

function needKey(opts: Common, command: string): string {
  if (opts.keyFile === undefined) throw new CliError(`${command} needs --key-file <path>`, EXIT.usage, 'CLI_USAGE');
  return opts.keyFile;
}

function directoryStore(dir: string, command: string): void {
  if (isUrl(dir)) {
    throw new CliError(
      `${command} rewrites a store directory; a PostgreSQL store is encrypted from its first open with a key (export, then import into a new schema)`,
      EXIT.usage,
      'CLI_USAGE',
    );
  }
  refuseNonDirectory(dir);
  if (holdsNothing(dir)) throw noStore(dir);
}

async function rewrite(dir: string, from: Buffer | undefined, to: Buffer | undefined): Promise<void> {
  try {
    await Rabosh.reencrypt(dir, { ...(from === undefined ? {} : { from }), ...(to === undefined ? {} : { to }) });
  } catch (e) {
    throw asCliError(e, storeName(dir));
  } finally {
    from?.fill(0);
    to?.fill(0);
  }
}

export function addEncryptionCommands(sub: Sub, out: Out): void {
  sub('encrypt', 'encrypt a plain store directory in place under --key-file (crash-safe; the store must be closed)')
    .argument('<dir>', 'store directory')
    .action(async (dir: string, opts: Common) => {
      const keyFile = needKey(opts, 'encrypt');
      directoryStore(dir, 'encrypt');
      await rewrite(dir, undefined, readKeyFile(keyFile));
      out(opts, `encrypted ${dir}`, { encrypted: true, dir });
    });

  sub('decrypt', 'decrypt an encrypted store directory in place (crash-safe; the store must be closed)')
    .argument('<dir>', 'store directory')
    .action(async (dir: string, opts: Common) => {
      const keyFile = needKey(opts, 'decrypt');
      directoryStore(dir, 'decrypt');
      await rewrite(dir, readKeyFile(keyFile), undefined);
      out(opts, `decrypted ${dir}`, { encrypted: false, dir });
    });

  sub('rotate-key', "replace an encrypted store's key: the data key is rewrapped (no data rewritten), or re-keyed with --reencrypt")
    .argument('<dir>', 'store directory or postgres:// URL')
    .requiredOption('--new-key-file <path>', 'the new key, in the same forms as --key-file')
    .option(
      '--reencrypt',
      'rewrite every memory under a fresh data key, so a copy of the old KEY file opens nothing (crash-safe; the store must be closed)',
    )
    .action(async (dir: string, opts: Common) => {
      const keyFile = needKey(opts, 'rotate-key');
      if (opts.reencrypt === true) {
        directoryStore(dir, 'rotate-key --reencrypt');
        const oldKey = readKeyFile(keyFile);
        let newKey: Buffer;
        try {
          newKey = readKeyFile(opts.newKeyFile as string, '--new-key-file');
        } catch (e) {
          oldKey.fill(0);
          throw e;
        }
        await rewrite(dir, oldKey, newKey);
        out(opts, `re-keyed ${dir}`, { rotated: true, reencrypted: true, dir });
        return;
      }
      refuseNonDirectory(dir);
      if (!isUrl(dir) && holdsNothing(dir)) throw noStore(dir);
      const newKey = readKeyFile(opts.newKeyFile as string, '--new-key-file');
      // Both keys are zeroed once used (open copies the old one; rotateKey the new one).
      let oldKey: Buffer | undefined;
      try {
        oldKey = readKeyFile(keyFile);
        let db: Rabosh;
        try {
          db = await Rabosh.open(dir, { create: false, encryption: { key: oldKey } });
        } catch (e) {
          throw asCliError(e, storeName(dir));
        } finally {
          oldKey.fill(0);
        }
        try {
          await db.rotateKey(newKey);
        } finally {
          await db.close();
        }
      } finally {
        oldKey?.fill(0);
        newKey.fill(0);
      }
      out(opts, `rotated the key of ${storeName(dir)}`, { rotated: true, reencrypted: false, dir: storeName(dir) });
    });
}
