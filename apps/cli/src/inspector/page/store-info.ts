/**
 * What the inspector's page is told about the store it looks into (`GET info`): the server's
 * answer and the page's reading of it are this one type. It sits in the page's folder because
 * the page's build reaches only that folder; the server imports it as a type.
 */
export interface StoreInfo {
  /** The store as messages name it: a directory's path, a URL's schema only. */
  name: string;
  backend: 'directory' | 'postgresql';
  scope: string;
  /** Whether the inspector's own writes (reverts) are recorded as versions. */
  history: boolean;
  /** Who the inspector's writes are recorded as. */
  actor: { type: string; id: string };
}
