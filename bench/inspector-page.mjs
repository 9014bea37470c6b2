// The inspector's page timings in a real browser, on a store you give it:
//
//   node bench/inspector-page.mjs <store> [--writes N] [--json] [--trace] [--cli main.js]
//
// Needs `npm run build` (the CLI and the library in dist) and a chromium (RABOSH_CHROMIUM, else
// /usr/bin/chromium, else Google Chrome where the hosted runners keep it). It serves the store
// with `rabosh-memory ui` and opens the page in headless chromium, then measures, each from the
// page's own clock and the browser's task accounting:
//
//   - page usable: from navigation until the root's names are shown and the main thread is free
//     (and the same from the URL printed, the page opened at once);
//   - the first answer (the root's names): its bytes and the server's time;
//   - opening a directory of directories (the middle one of the root) and one of its
//     directories (the middle one again), from the click to its names shown;
//   - one filter keystroke, a common match and one that matches a single path (which reads the
//     scope's keys up to it), from the keystroke to the matches shown; then that path typed
//     whole, from /memories (a filter that is a path reads from where it sorts);
//   - writes from another process into a directory the page has not opened, one a second
//     (20 by default): the page's main thread per write (CPU, from a trace, less what it does
//     idle; and wall, which a busy machine stretches), its longest task, the requests and the
//     server's time per write, and how long after its commit the page shows each write;
//   - the server's resident memory after the load and at the end (all, and its own).
//
// `--trace` adds where the writes' main-thread time went, by trace event.
//
// The writes go under a new directory `inspector-bench-<time>` of the root's first directory and
// are deleted at the end: use a copy of a store you care about. Times on a busy machine are
// inflated: report `uptime`'s load average with them (the script prints it).
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { chromium } from 'playwright-core';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const args = process.argv.slice(2);
const option = (name) => (args.includes(name) ? args[args.indexOf(name) + 1] : undefined);
// `--cli <main.js>`: another build of the CLI, to compare (the library is this checkout's).
const cli = resolve(option('--cli') ?? join(root, 'apps', 'cli', 'dist', 'main.js'));
const lib = join(root, 'dist', 'esm', 'index.js');

const store = args.find((a, i) => !a.startsWith('--') && !['--cli', '--writes'].includes(args[i - 1] ?? ''));
const WRITES = Number(option('--writes') ?? 20);
if (store === undefined || !Number.isSafeInteger(WRITES) || WRITES < 1) {
  console.error('usage: node bench/inspector-page.mjs <store> [--writes N] [--json] [--trace] [--cli main.js]');
  process.exit(2);
}
for (const f of [cli, lib]) if (!existsSync(f)) throw new Error(`${f} is missing: run npm run build`);

const browserPath = () => {
  const found = [
    process.env['RABOSH_CHROMIUM'],
    '/usr/bin/chromium',
    '/usr/bin/google-chrome',
    '/Applications/Google Chrome.app/Contents/MacOS/Google Chrome',
  ].find((p) => p && existsSync(p));
  if (found === undefined) throw new Error('no chromium: set RABOSH_CHROMIUM');
  return found;
};

const sleep = (ms) => new Promise((done) => setTimeout(done, ms));
const round = (n) => Math.round(n * 10) / 10;

/**
 * The server's resident memory in MB (Linux only; null elsewhere): all of it, and the part that
 * is its own (anonymous) rather than the store's files mapped in, which the kernel can drop.
 */
function rssMb(pid) {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const mb = (field) => Math.round(Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)?.[1] ?? Number.NaN) / 1024);
    return { total: mb('VmRSS'), anon: mb('RssAnon') };
  } catch {
    return null;
  }
}

function startUi() {
  const child = spawn(process.execPath, [cli, 'ui', store], { stdio: ['ignore', 'pipe', 'inherit'] });
  const url = new Promise((done, fail) => {
    let out = '';
    child.stdout.on('data', (d) => {
      out += d;
      if (out.includes('\n')) done(out.split('\n')[0].trim());
    });
    child.once('exit', (code) => fail(new Error(`ui exited with ${code}`)));
  });
  return { child, url };
}

/** Runs `source` as a module in another process with the library as `lib`. */
function otherProcess(source, ...argv) {
  const script = `const lib = await import(${JSON.stringify(lib)});\n${source}`;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script, ...argv], { stdio: ['ignore', 'pipe', 'inherit'] });
  child.out = '';
  child.stdout.on('data', (d) => {
    child.out += d;
  });
  return child;
}

const exited = (child) =>
  new Promise((done, fail) => child.once('close', (code) => (code === 0 ? done() : fail(new Error(`exit ${code}`)))));

const context = await chromium.launchPersistentContext(mkdtempSync(join(tmpdir(), 'inspector-page-')), {
  executablePath: browserPath(),
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  viewport: { width: 1360, height: 780 },
});
const page = context.pages()[0] ?? (await context.newPage());
page.setDefaultTimeout(600_000);
await page.addInitScript(() => {
  window.__long = [];
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.__long.push([e.startTime, e.duration]);
  }).observe({ type: 'longtask', buffered: true });
});
const cdp = await context.newCDPSession(page);
const now = () => page.evaluate(() => performance.now());
/** Long tasks that start in [from, to]: their durations. */
const longTasks = (from, to) => page.evaluate(([a, b]) => window.__long.filter(([s]) => s >= a && s <= b).map(([, d]) => d), [from, to]);
/** The server's time for each API answer since `from`: [name, ms from request sent to last byte, bytes]. */
const answers = (from) =>
  page.evaluate(
    (a) =>
      performance
        .getEntriesByType('resource')
        .filter((e) => e.startTime >= a && e.name.includes('/api/') && !e.name.includes('/api/events'))
        .map((e) => [new URL(e.name).pathname.split('/api/')[1], e.responseEnd - e.requestStart, e.encodedBodySize]),
    from,
  );
const marked = (name, from) =>
  page.evaluate(
    ([n, a]) =>
      new Promise((done) => {
        const look = () => {
          const m = performance.getEntriesByName(n).find((e) => e.startTime >= a);
          if (m) done(m.startTime);
          else setTimeout(look, 5);
        };
        look();
      }),
    [name, from],
  );
/** Waits until the main thread has had no long task for `quietMs`, then says when the last one ended. */
const settled = async (from, quietMs = 500) => {
  for (;;) {
    const [t, ends] = await page.evaluate((a) => [performance.now(), window.__long.filter(([s]) => s >= a).map(([s, d]) => s + d)], from);
    const last = Math.max(from, ...ends);
    if (t - last >= quietMs) return last;
    await sleep(100);
  }
};

/** The page's main thread in a trace: [name, wall ms, CPU ms] of each complete event on it. */
function mainThread(events) {
  const main = events.find((e) => e.name === 'thread_name' && e.args?.name === 'CrRendererMain');
  if (main === undefined) return [];
  return events
    .filter((e) => e.ph === 'X' && e.pid === main.pid && e.tid === main.tid && e.dur)
    .map((e) => [e.name, e.dur / 1000, (e.tdur ?? e.dur) / 1000]);
}

/** Runs `work` with the browser tracing; its main thread's events. */
async function traced(work) {
  const events = [];
  const collect = (d) => events.push(...d.value);
  cdp.on('Tracing.dataCollected', collect);
  await cdp.send('Tracing.start', { categories: 'toplevel,devtools.timeline,v8', transferMode: 'ReportEvents' });
  await work();
  const done = new Promise((d) => cdp.once('Tracing.tracingComplete', d));
  await cdp.send('Tracing.end');
  await done;
  cdp.off('Tracing.dataCollected', collect);
  return mainThread(events);
}

/** The main thread's tasks: wall and CPU milliseconds (a busy machine stretches wall, not CPU). */
const TASK = 'ThreadControllerImpl::RunTask';
const tasks = (events) => events.filter(([n]) => n === TASK).reduce(([w, c], [, dw, dc]) => [w + dw, c + dc], [0, 0]);

/** `--trace`: CPU per write by event name, the biggest first (nested events count in their parent too). */
function byEvent(events, writes) {
  const totals = {};
  for (const [n, , cpu] of events) totals[n] = (totals[n] ?? 0) + cpu;
  return Object.fromEntries(
    Object.entries(totals)
      .sort((x, y) => y[1] - x[1])
      .slice(0, 12)
      .map(([n, ms]) => [n, round(ms / writes)]),
  );
}

/** From each write's commit to the page counting it: the median and the longest, in ms. */
function shownAfter(committed, seen, base) {
  const lags = committed.map((at, i) => {
    const shown = seen.find(([, n]) => n >= base + i + 1);
    return shown === undefined ? Number.POSITIVE_INFINITY : shown[0] - at;
  });
  const sorted = [...lags].sort((a, b) => a - b);
  return { shownAfterMedianMs: sorted[Math.floor(sorted.length / 2)], shownAfterMaxMs: sorted[sorted.length - 1] };
}

// The browser is up first: the page opens the moment the URL is printed, as soon as a user could.
const t0 = performance.now();
const ui = startUi();
const url = await ui.url;
const urlAt = Date.now();
const serverStartMs = performance.now() - t0;
const api = async (name, query) => {
  const res = await fetch(`${url}api/${name}?${new URLSearchParams(query)}`);
  if (!res.ok) throw new Error(`api/${name}: HTTP ${res.status}`);
  return res.json();
};

const r = { store, load: loadavg().map(round), serverStartMs: Math.round(serverStartMs) };

// 1. Page usable: the root's names shown and the main thread free.
await page.goto(url);
const treeReady = await marked('inspector:tree-ready', 0);
const lastBusy = await settled(0);
const first = (await answers(0)).find(([n]) => n === 'children');
r.usableMs = Math.round(Math.max(treeReady, lastBusy));
// The same from the URL printed: what the server still had to do when the page asked is in it.
r.usableFromUrlMs = Math.round((await page.evaluate(() => performance.timeOrigin)) + r.usableMs - urlAt);
r.rootShownMs = Math.round(treeReady);
r.firstAnswer = { bytes: first[2], serverMs: Math.round(first[1]) };
r.loadAnswers = (await answers(0)).map(([n, ms, b]) => `${n} ${Math.round(ms)} ms ${b} B`);
r.loadLongestTaskMs = Math.round(Math.max(0, ...(await longTasks(0, 1e12))));
r.treeElements = await page.evaluate(() => document.querySelectorAll('#tree *').length);
r.serverRssAfterLoadMb = rssMb(ui.child.pid);
await page.locator('#live[data-state="live"]').waitFor();

// 2. Opening a directory: the middle directory of the root, then the middle one below it.
const rootNames = await api('children', { path: '/memories' });
const dirsOf = (answer) => answer.entries.filter(([, , below]) => below > 0);
const pick = (answer) => dirsOf(answer)[Math.floor(dirsOf(answer).length / 2)];
const openDir = async (path) => {
  const before = await now();
  const t = await page.evaluate((p) => {
    const t = performance.now();
    document.querySelector(`.tree button.row[data-path="${CSS.escape(p)}"]`).click();
    return t;
  }, path);
  const shown = await marked('inspector:dir-shown', t);
  await settled(t, 300);
  const [, serverMs] = (await answers(before)).find(([n]) => n === 'children') ?? [null, Number.NaN];
  return {
    path,
    ms: Math.round(shown - t),
    serverMs: Math.round(serverMs),
    longestTaskMs: Math.round(Math.max(0, ...(await longTasks(t, shown)))),
  };
};
const outer = pick(rootNames);
const outerPath = `/memories/${outer[0]}`;
r.openOuter = { ...(await openDir(outerPath)), memoriesBelow: outer[2] };
const inner = pick(await api('children', { path: outerPath }));
const innerPath = `${outerPath}/${inner[0]}`;
r.openInner = { ...(await openDir(innerPath)), memoriesBelow: inner[2] };

// 3. One filter keystroke: the last character of a common name, then of one path alone, then
//    of that path typed whole (from /memories, which the server reads as a path).
const innerNames = await api('children', { path: innerPath });
const leaf = innerNames.entries.find(([, bytes]) => bytes !== null)?.[0] ?? inner[0];
const lastPath = async () => {
  let dir = '/memories';
  for (;;) {
    const all = await api('children', { path: dir, limit: '5000' });
    const [name, bytes] = all.entries[all.entries.length - 1];
    if (bytes !== null) return `${dir}/${name}`;
    dir = `${dir}/${name}`;
  }
};
const keystroke = async (text) => {
  await page.fill('#filter', text.slice(0, -1));
  await marked('inspector:filter-shown', await now()).catch(() => {});
  await sleep(1000);
  const before = await now();
  const t = await page.evaluate((q) => {
    const input = document.getElementById('filter');
    const t = performance.now();
    input.value = q;
    input.dispatchEvent(new Event('input', { bubbles: true }));
    return t;
  }, text);
  const shown = await marked('inspector:filter-shown', t);
  const [, serverMs] = (await answers(before)).find(([n]) => n === 'search') ?? [null, Number.NaN];
  const matches = await page.locator('.tree .results button.row.file').count();
  return {
    text,
    ms: Math.round(shown - t),
    serverMs: Math.round(serverMs),
    matches,
    longestTaskMs: Math.round(Math.max(0, ...(await longTasks(t, shown)))),
  };
};
r.filterCommon = await keystroke(leaf);
const onePath = await lastPath();
r.filterOne = await keystroke(onePath.slice('/memories/'.length));
r.filterPath = await keystroke(onePath);
await page.fill('#filter', '');
await page.locator(`.tree button.row[data-path="${innerPath}"]`).waitFor();

// 4. Writes elsewhere, one a second, in a directory the page has not opened.
const firstDir = `/memories/${dirsOf(rootNames)[0][0]}`;
const elsewhere = `${firstDir}/inspector-bench-${Date.now()}`;
await sleep(2000);
// What the page's main thread does with nothing happening (its timers, the live feed's heartbeat).
const IDLE_MS = 5000;
const [idleWall, idleCpu] = tasks(await traced(() => sleep(IDLE_MS)));
// When the page shows each write: the memories its directory's row counts, as they change.
const base = await page.evaluate((path) => {
  const counted = () => {
    const title = document.querySelector(`.tree button.row[data-path="${path}"]`)?.title ?? '';
    return Number(title.slice(title.lastIndexOf('—')).replace(/\D/g, ''));
  };
  let last = counted();
  window.__seen = [];
  new MutationObserver(() => {
    const n = counted();
    if (n === last) return;
    last = n;
    window.__seen.push([Date.now(), n]);
  }).observe(document.getElementById('tree'), { subtree: true, childList: true, attributes: true, attributeFilter: ['title'] });
  return last;
}, firstDir);
const wFrom = await now();
let committed = [];
const wEvents = await traced(async () => {
  const writer = otherProcess(
    `const h = await lib.RaboshMemoryToolHandler.open(process.argv[1]);
     for (let i = 0; i < Number(process.argv[3]); i++) {
       const r = await h.execute({ command: 'create', path: process.argv[2] + '/w' + i + '.md', file_text: 'written elsewhere\\n' });
       if (r.isError) throw new Error(r.text);
       console.log(Date.now());
       await new Promise((d) => setTimeout(d, 1000));
     }
     await h.close();`,
    store,
    elsewhere,
    String(WRITES),
  );
  await exited(writer);
  committed = writer.out.trim().split('\n').map(Number);
  await sleep(3000);
});
const wTo = await now();
const [wWall, wCpu] = tasks(wEvents);
const perWrite = (total, idle) => round(Math.max(0, total - (idle / IDLE_MS) * (wTo - wFrom)) / WRITES);
const wLong = await longTasks(wFrom, wTo);
const wAnswers = await answers(wFrom);
r.writes = {
  count: WRITES,
  mainThreadCpuPerWriteMs: perWrite(wCpu, idleCpu),
  mainThreadWallPerWriteMs: perWrite(wWall, idleWall),
  longestTaskMs: Math.round(Math.max(0, ...wLong)),
  longTasks: wLong.length,
  requestsPerWrite: round(wAnswers.length / WRITES),
  serverMsPerWrite: Math.round(wAnswers.reduce((n, [, ms]) => n + ms, 0) / WRITES),
  bytesPerWrite: Math.round(wAnswers.reduce((n, [, , b]) => n + b, 0) / WRITES),
  ...shownAfter(committed, await page.evaluate(() => window.__seen), base),
};
if (args.includes('--trace')) r.writes.cpuPerWriteByEvent = byEvent(wEvents, WRITES);
r.serverRssEndMb = rssMb(ui.child.pid);
r.loadAfter = loadavg().map(round);

await context.close();
ui.child.kill('SIGTERM');
await new Promise((done) => ui.child.once('exit', done));
await exited(
  otherProcess(
    `const h = await lib.RaboshMemoryToolHandler.open(process.argv[1]);
  const r = await h.execute({ command: 'delete', path: process.argv[2] });
  if (r.isError) throw new Error(r.text);
  await h.close();`,
    store,
    elsewhere,
  ),
);

if (args.includes('--json')) console.log(JSON.stringify(r));
else console.log(JSON.stringify(r, null, 1));
