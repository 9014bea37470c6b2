/**
 * A size as people read it (`812 B`, `4.0 KiB`): the CLI's lines and the inspector's page show
 * sizes alike. It sits in the page's folder because the page's build reaches only that folder;
 * it touches no DOM, so the CLI imports it from here too.
 */
export function bytesText(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ['KiB', 'MiB', 'GiB', 'TiB'];
  let v = bytes / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(1)} ${units[i]}`;
}
