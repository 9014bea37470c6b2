// An Electron main process opening an encrypted store with the key pattern of key.cjs.
// Run: electron examples/electron/encrypted.cjs (needs a keychain / secret service).
'use strict';
const { app, safeStorage } = require('electron');
const { join } = require('node:path');
const { RaboshMemoryToolHandler } = require('rabosh-memory');
const { loadKey } = require('./key.cjs');
const { runThenExit } = require('./run-main.cjs');

async function main() {
  const dir = join(app.getPath('userData'), 'memories');
  const keyFile = join(app.getPath('userData'), 'memory.key');
  const memory = await RaboshMemoryToolHandler.open(dir, {
    encryption: { keyProvider: () => loadKey(safeStorage, keyFile) },
  });
  try {
    await memory.execute({ command: 'create', path: '/memories/hello.md', file_text: 'kept encrypted at rest' });
    console.log((await memory.execute({ command: 'view', path: '/memories/hello.md' })).text);
  } finally {
    await memory.close();
  }
}

runThenExit(app, main);
