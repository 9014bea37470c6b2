// listMemories on a PostgreSQL store: the same pages as on a directory, with or without a search
// over paths (list-memories-cases.ts).
import { it } from 'vitest';
import { RaboshMemoryToolHandler } from '../index.js';
import { checkPaging, checkSearch } from './list-memories-cases.js';
import { freshPgUrl } from './pg-url.js';

it('lists every memory once, in path order, a page at a time, resuming exactly after the cursor', async () => {
  const h = await RaboshMemoryToolHandler.open(freshPgUrl('list'));
  try {
    await checkPaging(h);
  } finally {
    await h.close();
  }
});

it('pages the memories whose path contains a text, in any case, with the same cursor and checks', async () => {
  const h = await RaboshMemoryToolHandler.open(freshPgUrl('search'));
  try {
    await checkSearch(h);
  } finally {
    await h.close();
  }
});
