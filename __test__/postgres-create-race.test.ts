// Issue 24: over PostgreSQL a create is decided by a unique insert at commit, not by a read of its
// target. Callers racing to create one path through the public handler: exactly one is answered
// "File created successfully", every other one the contract's "already exists", and the memory
// holds the winner's content; neighbours created at once in one directory are all created.
import { describe, expect, it } from 'vitest';
import { RaboshMemoryToolHandler } from '../index.js';
import { freshPgUrl } from './pg-url.js';

describe('PostgreSQL creates decided at commit', () => {
  it('one path raced by 16 callers has one creator; the rest are told it already exists', async () => {
    const h = await RaboshMemoryToolHandler.open(freshPgUrl('race'));
    try {
      const path = '/memories/race/one.md';
      const answers = await Promise.all(
        Array.from({ length: 16 }, (_, c) => h.execute({ command: 'create', path, file_text: `caller ${c}` })),
      );
      const created = answers.flatMap((a, c) => (a.text === `File created successfully at: ${path}` ? [c] : []));
      expect(created).toHaveLength(1);
      const refused = answers.filter((a) => a.text === `Error: File ${path} already exists` && a.isError);
      expect(refused).toHaveLength(15);
      expect((await h.execute({ command: 'view', path })).text).toBe(
        `Here's the content of ${path} with line numbers:\n     1\tcaller ${created[0]}`,
      );
      const neighbours = await Promise.all(
        Array.from({ length: 32 }, (_, c) => h.execute({ command: 'create', path: `/memories/race/n${c}.md`, file_text: 'n' })),
      );
      expect(neighbours.every((a) => a.text.startsWith('File created successfully at: /memories/race/n'))).toBe(true);
      expect(await h.usage()).toEqual({ memories: 33, bytes: 32 + `caller ${created[0]}`.length });
    } finally {
      await h.close();
    }
  });
});
