// How answers are compared across handlers. Byte-exact, except for one documented difference of
// the SDK's filesystem tool: in a directory view it prints each directory's inode size (`4.0K`)
// where the contract prints the total of what is under it. For comparisons that involve the SDK,
// the size field of directory lines (the viewed directory's own line and every line ending in
// `/`) is blanked on both sides; file lines, names, order and every other answer stay exact.

import { createHash } from 'node:crypto';

const LISTING_HEADER = "Here're the files and directories up to 2 levels deep in ";

export function blankDirectorySizes(answer: string): string {
  if (!answer.startsWith(LISTING_HEADER)) return answer;
  const lines = answer.split('\n');
  for (let i = 1; i < lines.length; i++) {
    const tab = lines[i]!.indexOf('\t');
    const path = lines[i]!.slice(tab + 1);
    if (i === 1 || path.endsWith('/')) lines[i] = `<dir>\t${path}`;
  }
  return lines.join('\n');
}

export interface AnswerPrint {
  /** sha256 of the answer as given. */
  exact: string;
  /** sha256 after blankDirectorySizes. */
  dirBlind: string;
  /** The start of the answer, to show in a mismatch report. */
  head: string;
  length: number;
}

function sha(s: string): string {
  return createHash('sha256').update(s).digest('hex');
}

export function fingerprint(answer: string): AnswerPrint {
  return { exact: sha(answer), dirBlind: sha(blankDirectorySizes(answer)), head: answer.slice(0, 400), length: answer.length };
}

/** The SDK's tool is the only one allowed the directory-size difference. */
export function agrees(a: AnswerPrint, b: AnswerPrint, eitherIsSdk: boolean): boolean {
  return eitherIsSdk ? a.dirBlind === b.dirBlind : a.exact === b.exact;
}
