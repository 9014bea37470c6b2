/**
 * The 2026-07-28 era's version check on every request. The SDK's `serveStdio` refuses an
 * unsupported `io.modelcontextprotocol/protocolVersion` on the message that opens a connection,
 * but once the connection is pinned to the modern era it serves a later request whatever version
 * that request claims. Each 2026-07-28 request stands alone, so each one is checked here, before
 * the SDK sees it, and answered as the SDK answers an opening one: -32022 with the versions served.
 */
import { type JSONRPCMessage, PROTOCOL_VERSION_META_KEY, UnsupportedProtocolVersionError } from '@modelcontextprotocol/server';

/**
 * The 2026-era revisions the SDK answers `server/discover` with (its own list is internal; a
 * test compares the two, so an SDK that serves another revision fails it instead of being
 * refused here).
 */
export const MODERN_VERSIONS: readonly string[] = ['2026-07-28'];

/** The -32022 answer to a request that claims a revision not served, or null to let it through. */
export function refuseUnsupportedVersion(message: JSONRPCMessage): JSONRPCMessage | null {
  if (!('method' in message) || !('id' in message)) return null;
  const meta = (message.params as { _meta?: Record<string, unknown> } | undefined)?._meta;
  if (typeof meta !== 'object' || meta === null || !(PROTOCOL_VERSION_META_KEY in meta)) return null;
  const claimed = meta[PROTOCOL_VERSION_META_KEY];
  if (typeof claimed === 'string' && MODERN_VERSIONS.includes(claimed)) return null;
  const requested = typeof claimed === 'string' ? claimed : 'unknown';
  const e = new UnsupportedProtocolVersionError({ supported: [...MODERN_VERSIONS], requested });
  return { jsonrpc: '2.0', id: message.id, error: { code: e.code, message: e.message, data: e.data } } as JSONRPCMessage;
}
