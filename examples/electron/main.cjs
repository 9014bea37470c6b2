// A minimal Electron app for CI (.github/workflows/ci.yml, job "electron"): the main process
// loads the package and does a round trip, then forks a utilityProcess that does its own in
// another store, and finally reopens the utility's store itself. Exits 0 only if every answer is
// the contract's. Run: xvfb-run electron --no-sandbox examples/electron/main.cjs
'use strict';
const { app, utilityProcess } = require('electron');
const { mkdtempSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const { RaboshMemoryToolHandler } = require('rabosh-memory');
const { roundTrip, check } = require('./round-trip.cjs');
const { runThenExit } = require('./run-main.cjs');

function utility(dir) {
  return new Promise((resolve, reject) => {
    const child = utilityProcess.fork(join(__dirname, 'utility.cjs'), [dir], { stdio: 'inherit' });
    let answer;
    child.on('message', (m) => (answer = m));
    child.on('exit', (code) => {
      if (!answer) reject(new Error(`utilityProcess exited ${code} without answering`));
      else if (!answer.ok) reject(new Error(`utilityProcess failed: ${answer.error}`));
      else resolve(answer.result);
    });
  });
}

async function main() {
  const work = mkdtempSync(join(tmpdir(), 'rabosh-electron-'));
  try {
    check(await roundTrip(join(work, 'main'), 'main'), 'main');
    check(await utility(join(work, 'utility')), 'utility');
    // The utility process has exited: its lock is gone and its write is durable.
    const again = await RaboshMemoryToolHandler.open(join(work, 'utility'));
    const viewed = await again.execute({ command: 'view', path: '/memories/utility.md' });
    await again.close();
    if (viewed.text !== "Here's the content of /memories/utility.md with line numbers:\n     1\thello from utility") {
      throw new Error(`reopened in main: ${JSON.stringify(viewed.text)}`);
    }
    console.log(`electron ${process.versions.electron}: main process and utilityProcess round trips ok`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

runThenExit(app, main);
