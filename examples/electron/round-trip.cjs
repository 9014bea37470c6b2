// What the Electron main process and its utilityProcess each do with the package: open a store,
// create, view and list a memory, close. Plain CommonJS with no Electron in it, so the same file
// runs under Node in the test suite (__test__/example-electron.test.ts) and under Electron in CI.
'use strict';
const { RaboshMemoryToolHandler } = require('rabosh-memory');

/** The answers a round trip must give, for the process named `who`. */
function expected(who) {
  return {
    created: `File created successfully at: /memories/${who}.md`,
    viewed: `Here's the content of /memories/${who}.md with line numbers:\n     1\thello from ${who}`,
  };
}

async function roundTrip(dir, who) {
  const handler = await RaboshMemoryToolHandler.open(dir);
  try {
    const created = await handler.execute({ command: 'create', path: `/memories/${who}.md`, file_text: `hello from ${who}` });
    const viewed = await handler.execute({ command: 'view', path: `/memories/${who}.md` });
    return { created: created.text, viewed: viewed.text };
  } finally {
    await handler.close();
  }
}

/** Throws unless `got` is exactly what a round trip by `who` answers. */
function check(got, who) {
  const want = expected(who);
  for (const key of Object.keys(want)) {
    if (got[key] !== want[key]) throw new Error(`${who} ${key}: got ${JSON.stringify(got[key])}, want ${JSON.stringify(want[key])}`);
  }
}

module.exports = { roundTrip, check };
