// `npm run example`: a short conversation in which the model keeps notes with the memory tool,
// stored by rabosh-memory in a new temporary directory and driven by the SDK's tool runner. The
// store is kept afterwards, so the CLI can show what the model wrote (the last lines say how).
//
// With ANTHROPIC_API_KEY set it talks to the real Messages API (model: RABOSH_EXAMPLE_MODEL, default
// claude-sonnet-5-5). Without it, a local stand-in answers with scripted replies, so the example
// runs anywhere, offline, in well under a second once built.
import Anthropic from '@anthropic-ai/sdk';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RaboshMemoryToolHandler, memoryTool } from 'rabosh-memory';
import { memoryCall, say, startStandIn, type StandIn } from './stand-in-server.js';

const USER = "Hi, I'm Ada. I prefer short answers, and I'm working on a Rust storage engine. Please remember that.";

// What the stand-in "model" does: look before writing, read a file that is not there yet (an error
// result, is_error: true), write, refine, and check the result.
function script() {
  return [
    { content: [say('Let me check my memory first.'), memoryCall({ command: 'view', path: '/memories' })] },
    { content: [memoryCall({ command: 'view', path: '/memories/user.md' })] },
    {
      content: [
        say('Nothing yet; saving what you told me.'),
        memoryCall({
          command: 'create',
          path: '/memories/user.md',
          file_text: '# User\n- Name: Ada\n- Prefers short answers\n- Project: storage engine\n',
        }),
      ],
    },
    {
      content: [
        memoryCall({
          command: 'str_replace',
          path: '/memories/user.md',
          old_str: '- Project: storage engine',
          new_str: '- Project: a storage engine in Rust',
        }),
      ],
    },
    { content: [memoryCall({ command: 'view', path: '/memories' })] },
    { content: [say("Noted, Ada: short answers, Rust storage engine. I'll remember.")] },
  ];
}

function plural(n: number, one: string, many: string): string {
  return `${n} ${n === 1 ? one : many}`;
}

function indent(text: string): string {
  return text.replace(/\n/g, '\n      ');
}

async function main() {
  const apiKey = process.env.ANTHROPIC_API_KEY;
  let standIn: StandIn | undefined;
  let client: Anthropic;
  if (apiKey) {
    console.log('LIVE: talking to the real Messages API (ANTHROPIC_API_KEY is set)');
    client = new Anthropic({ apiKey });
  } else {
    console.log('LOCAL STAND-IN of the Messages API (no ANTHROPIC_API_KEY set) — scripted replies, not a real model');
    standIn = await startStandIn(script());
    client = new Anthropic({ baseURL: standIn.baseURL, apiKey: 'stand-in', maxRetries: 0 });
  }

  const dir = mkdtempSync(join(tmpdir(), 'rabosh-example-'));
  const handler = await RaboshMemoryToolHandler.open(dir);
  try {
    console.log(`memory store: ${dir}\n`);
    console.log(`user: ${USER}\n`);
    const runner = client.beta.messages.toolRunner({
      model: process.env.RABOSH_EXAMPLE_MODEL ?? 'claude-sonnet-5-5',
      max_tokens: 1024,
      max_iterations: 10,
      messages: [{ role: 'user', content: USER }],
      tools: [memoryTool(handler)],
    });
    for await (const message of runner) {
      for (const block of message.content) {
        if (block.type === 'text') console.log(`assistant: ${block.text}`);
        if (block.type === 'tool_use') console.log(`  → memory ${JSON.stringify(block.input)}`);
      }
      const response = await runner.generateToolResponse();
      if (!response || typeof response.content === 'string') continue;
      for (const result of response.content) {
        if (result.type !== 'tool_result') continue;
        const text = typeof result.content === 'string' ? result.content : JSON.stringify(result.content);
        const flag = result.is_error ? ' (is_error: true)' : '';
        console.log(`  ← result${flag}:\n      ${indent(text)}`);
      }
    }
    const usage = await handler.usage();
    console.log(`\nstored: ${plural(usage.memories, 'memory', 'memories')}, ${plural(usage.bytes, 'byte', 'bytes')}`);
  } finally {
    await handler.close();
    await standIn?.close();
  }
  // Closed, so any other process may open it; kept, so the reader can.
  const arg = /^[\w@%+=:,./\\-]+$/.test(dir) ? dir : JSON.stringify(dir);
  console.log(`\nThe store is kept at ${dir}. Look at it with:\n  npx rabosh-memory view ${arg} /memories/user.md`);
  console.log(`  npx rabosh-memory usage ${arg}`);
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
