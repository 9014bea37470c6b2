/**
 * `rabosh-memory mcp <dir | postgres-url>`: the command line. The server itself (and the MCP
 * SDK) is loaded only when this command runs, so the other commands start as fast as before.
 */
import type { Command } from 'commander';
import { DEFAULT_MAX_MEMORY_BYTES, DEFAULT_VIEW_MAX_CHARS } from 'rabosh-memory';

import { POLL_MS, type McpOptions } from './mcp-options.js';

export { POLL_MS, type McpOptions };

/** The argument parsers program.ts owns, so every subcommand refuses bad values the same way. */
export interface McpArgs {
  version: string | undefined;
  scope: (raw: string) => string;
  positiveInt: (name: string) => (raw: string) => number;
}

export function addMcpCommand(program: Command, args: McpArgs): void {
  program
    .command('mcp')
    .description('serve the memory tool and the memories (as resources) over MCP on stdin/stdout')
    .argument('<dir>', 'store directory or postgres:// URL (created if absent)')
    .option('--scope <scope>', 'memory scope inside the store (default "default")', args.scope)
    .option('--history', "record every change in version history (who: the MCP client's name)")
    .option('--key-file <path>', "the encrypted store's key: 32 raw bytes, 64 hex or 44 base64 characters")
    .option('--exclusive', 'hold the store alone: refuse to start while another process has it open, and keep others out')
    .option(
      '--max-memory-bytes <n>',
      `cap on one memory in UTF-8 bytes (default ${DEFAULT_MAX_MEMORY_BYTES})`,
      args.positiveInt('--max-memory-bytes'),
    )
    .option('--view-max-chars <n>', `cap on a rendered file view (default ${DEFAULT_VIEW_MAX_CHARS})`, args.positiveInt('--view-max-chars'))
    .option('--poll-ms <n>', `milliseconds between looks for other processes' writes (default ${POLL_MS})`, args.positiveInt('--poll-ms'))
    .action(async (dir: string, opts: McpOptions) => {
      const { serve } = await import('./mcp-serve.js');
      await serve(dir, opts, args.version ?? 'unknown');
    });
}
