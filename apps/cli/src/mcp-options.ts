/** The `mcp` command's options and defaults, shared by its line (mcp.ts) and its server (mcp-serve.ts). */

/** How often a server looks for other processes' writes, unless --poll-ms says otherwise. */
export const POLL_MS = 1_000;

export interface McpOptions {
  scope?: string;
  history?: boolean;
  exclusive?: boolean;
  maxMemoryBytes?: number;
  viewMaxChars?: number;
  pollMs?: number;
  keyFile?: string;
  /** Read by the command line's error printing (program.ts), which takes it from argv. */
  json?: boolean;
}
