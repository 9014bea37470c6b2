// Each default and limit has one home (issue 37 §5): the library exports the numbers the Rust
// crates enforce (through the binding) and its own, and what it does agrees with what it exports.
// The numbers themselves are written out here from the contract and the docs.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import * as library from '../index.js';
import {
  DEFAULT_MAX_MEMORY_BYTES,
  DEFAULT_VERSION_PAGE,
  InvalidArgumentError,
  MAX_PATH_BYTES,
  MAX_VERSION_PAGE,
  MemoryPath,
  Rabosh,
  RaboshMemoryToolHandler,
} from '../index.js';
import { makeTempDir, removeDir } from './tmp-dir.js';

let dir: string;
let db: Rabosh;
let h: RaboshMemoryToolHandler;
beforeAll(async () => {
  dir = makeTempDir('rabosh-limits');
  db = await Rabosh.open(dir, { history: true });
  h = new RaboshMemoryToolHandler(db);
});
afterAll(async () => {
  await db.close();
  removeDir(dir);
});

describe('the exported defaults and limits', () => {
  it('are the documented numbers', () => {
    // Each named export of the library, read by name: one missing or different fails.
    expect({ ...library }).toMatchObject({
      DEFAULT_LOCK_TIMEOUT_MS: 5000,
      DEFAULT_MAX_MEMORY_BYTES: 1_048_576,
      DEFAULT_VERSION_PAGE: 100,
      DEFAULT_VIEW_MAX_CHARS: 16_000,
      MAX_PATH_BYTES: 1024,
      MAX_VERSION_PAGE: 10_000,
      MAX_VIEW_LINES: 999_999,
    });
  });

  it("are the handler's default size cap", async () => {
    expect(await h.create({ command: 'create', path: '/memories/full', file_text: 'x'.repeat(DEFAULT_MAX_MEMORY_BYTES) })).toBe(
      'File created successfully at: /memories/full',
    );
    expect(await h.create({ command: 'create', path: '/memories/over', file_text: 'x'.repeat(DEFAULT_MAX_MEMORY_BYTES + 1) })).toBe(
      `Error: File /memories/over exceeds the maximum memory file size of ${DEFAULT_MAX_MEMORY_BYTES} bytes`,
    );
  });

  it('are the longest path a memory may have', () => {
    // Segments of 200 bytes (a segment's own limit is 255), the last one filling up to `bytes`.
    const pathOf = (bytes: number) => {
      let p = '/memories';
      while (bytes - p.length > 201) p += `/${'a'.repeat(200)}`;
      return `${p}/${'b'.repeat(bytes - p.length - 1)}`;
    };
    expect(pathOf(MAX_PATH_BYTES)).toHaveLength(MAX_PATH_BYTES);
    expect(MemoryPath.normalise(pathOf(MAX_PATH_BYTES))).not.toBeNull();
    expect(MemoryPath.normalise(pathOf(MAX_PATH_BYTES + 1))).toBeNull();
  });

  it('are the largest page of versions the store answers', async () => {
    await expect(h.versions({ limit: MAX_VERSION_PAGE })).resolves.toHaveProperty('data');
    await expect(h.versions({ limit: MAX_VERSION_PAGE + 1 })).rejects.toThrow(InvalidArgumentError);
  });

  it('size the default page of versions', async () => {
    for (let i = 0; i <= DEFAULT_VERSION_PAGE; i++) {
      await h.create({ command: 'create', path: `/memories/v/${i}`, file_text: '' });
    }
    const page = await h.versions({ pathPrefix: '/memories/v' });
    expect(page.data).toHaveLength(DEFAULT_VERSION_PAGE);
    expect(page.nextCursor).toBeDefined();
  });
});
