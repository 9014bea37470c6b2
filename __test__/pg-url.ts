// The PostgreSQL server the tests use: RABOSH_PG_URL, set by scripts/with-postgres.mjs (which
// `npm test` wraps around vitest). Absent, the PostgreSQL tests fail rather than skip.
import { randomBytes } from 'node:crypto';

export function pgBaseUrl(): string {
  const url = process.env['RABOSH_PG_URL'];
  if (url === undefined || url === '') {
    throw new Error('RABOSH_PG_URL is not set: run the tests through `node scripts/with-postgres.mjs "vitest run …"`');
  }
  return url;
}

/** The URL of a fresh, empty store: a schema of its own (created on first open). */
export function freshPgUrl(label = 't'): string {
  const base = pgBaseUrl();
  const schema = `${label}_${randomBytes(6).toString('hex')}`;
  return `${base}${base.includes('?') ? '&' : '?'}schema=${schema}`;
}
