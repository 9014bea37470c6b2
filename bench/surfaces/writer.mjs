// Another process writing to a store while a surface watches it (bench/surfaces/mcp.ts): the
// built library (dist), so it starts as a host's process would. Usage:
//   node writer.mjs <lib> <store> <dir> <count> <gapMs>
// Creates <dir>/watched.md, then `count` times: a new memory <dir>/n<i>.md, then an edit of
// watched.md, `gapMs` apart; prints one line per commit, `<kind> <Date.now() after it>`
// (created, listed, updated); deletes <dir> at the end.
const [lib, store, dir, count, gapMs] = process.argv.slice(2);
const { RaboshMemoryToolHandler } = await import(lib);
const h = await RaboshMemoryToolHandler.open(store);
const sleep = (ms) => new Promise((done) => setTimeout(done, ms));
const run = async (kind, input) => {
  const r = await h.execute(input);
  if (r.isError) throw new Error(`${kind}: ${r.text}`);
  console.log(`${kind} ${Date.now()}`);
  await sleep(Number(gapMs));
};
await run('created', { command: 'create', path: `${dir}/watched.md`, file_text: 'watched 0\n' });
for (let i = 1; i <= Number(count); i++) {
  await run('listed', { command: 'create', path: `${dir}/n${i}.md`, file_text: `new ${i}\n` });
  await run('updated', { command: 'str_replace', path: `${dir}/watched.md`, old_str: `watched ${i - 1}`, new_str: `watched ${i}` });
}
const r = await h.execute({ command: 'delete', path: dir });
if (r.isError) throw new Error(`delete: ${r.text}`);
await h.close();
