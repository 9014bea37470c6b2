// One real conversation against the Messages API, only on explicit opt-in (RABOSH_LIVE=1). Opting
// in without ANTHROPIC_API_KEY fails: a live run that silently did nothing would prove nothing.
// Without the opt-in the file registers one passing test that says so, so nothing is skipped.
// RABOSH_LIVE_MODEL picks the model.
import { describe, expect, it } from 'vitest';
import Anthropic from '@anthropic-ai/sdk';
import { RaboshMemoryToolHandler, memoryTool } from '../index.js';
import { makeTempDir, removeDir } from './tmp-dir.js';

const live = process.env.RABOSH_LIVE === '1';

describe('live Messages API', () => {
  if (!live) {
    it('is off (set RABOSH_LIVE=1 and ANTHROPIC_API_KEY to run one real conversation)', () => {
      expect(process.env.RABOSH_LIVE).not.toBe('1');
    });
    return;
  }

  it('runs one real conversation through the tool runner with memoryTool(handler)', async () => {
    expect(process.env.ANTHROPIC_API_KEY, 'RABOSH_LIVE=1 needs ANTHROPIC_API_KEY').toBeTruthy();
    const dir = makeTempDir('rabosh-live');
    const handler = await RaboshMemoryToolHandler.open(dir);
    try {
      const client = new Anthropic();
      const results: Array<{ input: unknown; text: string }> = [];
      const tool = memoryTool(handler);
      const run = tool.run;
      tool.run = async (input, context) => {
        try {
          const text = (await run(input, context)) as string;
          results.push({ input, text });
          return text;
        } catch (e) {
          results.push({ input, text: String((e as Error).message) });
          throw e;
        }
      };
      const final = await client.beta.messages.toolRunner({
        model: process.env.RABOSH_LIVE_MODEL ?? 'claude-haiku-4-5',
        max_tokens: 1024,
        max_iterations: 8,
        messages: [
          {
            role: 'user',
            content:
              'Use the memory tool: save a memory file /memories/favourite-colour.md containing "teal", then view it, then reply with one word.',
          },
        ],
        tools: [tool],
      });
      expect(results.length).toBeGreaterThan(0);
      expect(results.some((r) => r.text === 'File created successfully at: /memories/favourite-colour.md')).toBe(true);
      expect((await handler.usage()).memories).toBeGreaterThan(0);
      expect(final.stop_reason).toBe('end_turn');
    } finally {
      await handler.close();
      removeDir(dir);
    }
  });
});
