/** The confirmation step before a write, and what a redaction does and does not guarantee. */
import type { StoreInfo } from './client.js';
import { byId, clear, h } from './dom.js';

export interface Ask {
  title: string;
  body: HTMLElement[];
  ok: string;
  danger?: boolean;
  /** A box to tick before `ok` is enabled. */
  acknowledge?: string;
}

/** Resolves true when confirmed, false on Cancel or Escape. */
export function confirm(ask: Ask): Promise<boolean> {
  const dialog = byId<HTMLDialogElement>('confirm');
  const ok = byId<HTMLButtonElement>('confirm-ok');
  const check = byId<HTMLInputElement>('confirm-check');
  const ack = byId('confirm-ack');
  byId('confirm-title').textContent = ask.title;
  const body = byId('confirm-body');
  clear(body);
  body.append(...ask.body);
  ok.textContent = ask.ok;
  ok.className = ask.danger ? 'danger' : 'primary';
  ack.hidden = ask.acknowledge === undefined;
  byId('confirm-ack-text').textContent = ask.acknowledge ?? '';
  check.checked = false;
  ok.disabled = ask.acknowledge !== undefined;
  check.onchange = () => {
    ok.disabled = !check.checked;
  };
  // The dialog has the user's attention; a notice of the last action would sit over it.
  byId('toast').hidden = true;
  return new Promise((resolve) => {
    const done = (v: boolean) => {
      ok.onclick = null;
      byId('confirm-cancel').onclick = null;
      dialog.onclose = null;
      if (dialog.open) dialog.close();
      resolve(v);
    };
    ok.onclick = () => done(true);
    byId('confirm-cancel').onclick = () => done(false);
    dialog.onclose = () => done(false);
    dialog.showModal();
  });
}

/** docs/guide/history.md "Reverting and redacting", per backend. */
export function redactionGuarantee(info: StoreInfo): HTMLElement[] {
  const where =
    info.backend === 'directory'
      ? h(
          'p',
          {},
          'The version keeps its row (with the time it was redacted) but loses its content, path, hash and size. The store is then compacted, so the bytes leave every file of the store directory.',
        )
      : h(
          'p',
          {},
          'The version keeps its row (with the time it was redacted) but loses its content, path, hash and size, in one transaction. On PostgreSQL the old row version stays in the table’s files until VACUUM frees its space and later writes reuse it, and in the write-ahead log, replicas and backups: those are the server’s to purge.',
        );
  return [
    where,
    h('p', {}, h('strong', {}, 'It does not:')),
    h(
      'ul',
      {},
      h(
        'li',
        {},
        'change the live memory, even when this version is its current content: rewrite or delete the memory, then redact every version holding the text;',
      ),
      h('li', {}, 'reach other versions holding the same text: redact each of them;'),
      h(
        'li',
        {},
        info.backend === 'directory'
          ? 'reach copies made before: checkpoints, backups, exports, copies of the directory, a snapshot another process still holds, or blocks the filesystem or disk kept.'
          : 'reach copies made before: backups, exports, replicas.',
      ),
    ),
    h('p', {}, 'It cannot be undone.'),
  ];
}
