/**
 * Adapters to the SDK: a runnable tool for `client.beta.messages.toolRunner`, and a
 * tool_result block for loops driven by hand. Both carry the documented text AND is_error.
 */

import type { BetaRunnableTool } from '@anthropic-ai/sdk/lib/tools/BetaRunnableTool';
import type { BetaMemoryTool20250818 } from '@anthropic-ai/sdk/resources/beta';
import type { ToolResultBlockParam } from '@anthropic-ai/sdk/resources/messages';

import { RaboshError } from './errors.js';
import type { RaboshMemoryToolHandler } from './handler.js';
import type { ToolOutput } from './tool-output.js';
import { runnerToolError } from './runner-copy.js';

/** What the model is told of a fault: its stable code, never the operator message (host paths). */
export function faultAnswer(e: RaboshError): string {
  return `Error: memory store fault (${e.code})`;
}

/**
 * The memory tool for `client.beta.messages.toolRunner`. `run` returns the text of a success
 * and throws the SDK's `ToolError(text)` for every failure outcome, so the runner sends the
 * documented text with `is_error: true`.
 *
 * A fault (closed store, IO, corruption) would reach the model through the runner; its
 * operator message can hold host paths, which an answer never may, so the model gets the code
 * alone.
 *
 * The runner matches `ToolError` by `instanceof` of its own class, so the error is built from the
 * class of the SDK copy that runs the tool, whichever copy (version, `import` or `require`) that is.
 *
 * @group Start here
 */
export function memoryTool(
  handler: RaboshMemoryToolHandler,
  extraProps?: Omit<BetaMemoryTool20250818, 'type' | 'name'>,
): BetaRunnableTool<unknown> {
  return {
    ...extraProps,
    type: 'memory_20250818',
    name: 'memory',
    parse: (content: unknown) => content,
    run: async (input: unknown) => {
      const toolError = runnerToolError();
      let out: ToolOutput;
      try {
        out = await handler.execute(input);
      } catch (e) {
        if (e instanceof RaboshError) throw new (await toolError())(faultAnswer(e));
        throw e;
      }
      if (out.isError) throw new (await toolError())(out.text);
      return out.text;
    },
  };
}

/** The part of a tool_use block this needs (a `ToolUseBlock` or a `BetaToolUseBlock`). */
export interface MemoryToolUse {
  /** The tool_use block's id; the result's `tool_use_id` repeats it. */
  id: string;
  /** The command the model sent, untrusted; passed to {@link RaboshMemoryToolHandler.execute} as is. */
  input: unknown;
}

/**
 * The tool_result block answering `toolUse`, for a hand-driven loop: the documented text, and
 * `is_error: true` on every failure outcome. Faults reject, for the host to handle.
 *
 * @group Start here
 */
export async function memoryResult(toolUse: MemoryToolUse, handler: RaboshMemoryToolHandler): Promise<ToolResultBlockParam> {
  const { text, isError } = await handler.execute(toolUse.input);
  return {
    type: 'tool_result',
    tool_use_id: toolUse.id,
    content: text,
    ...(isError ? { is_error: true } : {}),
  };
}
