// listMemories on a PostgreSQL store: the same pages as on a directory (list-memories-cases.ts).
import { it } from 'vitest';
import { RaboshMemoryToolHandler } from '../index.js';
import { checkPaging } from './list-memories-cases.js';
import { freshPgUrl } from './pg-url.js';

it('lists every memory once, in path order, a page at a time, resuming exactly after the cursor', async () => {
  const h = await RaboshMemoryToolHandler.open(freshPgUrl('list'));
  try {
    await checkPaging(h);
  } finally {
    await h.close();
  }
});
