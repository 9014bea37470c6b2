// Windows x64: the addon `npm run build:targets` built for x86_64-pc-windows-gnu (the published
// one is the release workflow's MSVC build of the same code), loaded by the official win32 Node 22
// under Wine 8 (Node 24 and 26 abort under Wine 8 while reserving V8's address space), running the
// repository's own suites (CROSS_SUITES): the Windows path spellings the normaliser exists for,
// two Windows processes on one store, and crash tests whose kill is TerminateProcess.
import { describe, it } from 'vitest';
import { runSuitesUnder } from './run-suites.js';

describe('win32-x64 under Wine with the official win32 Node 22', () => {
  it('passes the contract, handler, path, shared-store, multi-process and crash suites', async () => {
    await runSuitesUnder('win32-x64');
  });
});
