//! A directory's listing from rows of a two-levels-deep aggregate, for a backend that keeps
//! its listing aggregate as rows (PostgreSQL's summary table): the rows hold what the scan would
//! have counted, and [`summary_of_rows`] builds the same [`DirSummary`] the scan does.

use crate::backend::DirSummary;
use crate::keys::hidden;
use crate::listing::summarise;
use crate::tree::Dir;

/// One row of a directory's two-levels-deep aggregate: `r` a name one segment below the
/// directory (`c`, the memory there) or two (`c/g`); `f` true: the memory at exactly that name
/// (`n` = 1, `b` its size); false: memories strictly below `c/g/`, `n`/`b` counting them all
/// and `vn`/`vb` those whose path below `c/g` has no hidden segment. Rows of one `r` add up.
pub struct DirRow {
    pub r: String,
    pub f: bool,
    pub n: u64,
    pub b: u64,
    pub vn: u64,
    pub vb: u64,
}

/// The directory two levels deep, from its rows, exactly as the default scan
/// ([`ReadView::dir_summary`](crate::ReadView::dir_summary)) would have built it.
#[must_use]
pub fn summary_of_rows(rows: &[DirRow]) -> DirSummary {
    let mut root = Dir::default();
    for row in rows {
        let mut segs = row.r.splitn(2, '/');
        let c = segs.next().unwrap_or_default();
        let Some(g) = segs.next() else {
            // A memory directly in the directory.
            root.set_memory(c, row.b);
            root.count_below(row.b, !hidden(c));
            continue;
        };
        if row.f {
            root.count_below(row.b, !hidden(c) && !hidden(g));
            let child = root.dir_mut(c);
            child.count_below(row.b, !hidden(g));
            child.set_memory(g, row.b);
            continue;
        }
        root.all_count += row.n;
        root.all_bytes += row.b;
        if !hidden(g) && !hidden(c) {
            root.vis_count += row.vn;
            root.vis_bytes += row.vb;
        }
        let child = root.dir_mut(c);
        child.all_count += row.n;
        child.all_bytes += row.b;
        if !hidden(g) {
            child.vis_count += row.vn;
            child.vis_bytes += row.vb;
        }
        let grandchild = child.dir_mut(g);
        grandchild.all_count += row.n;
        grandchild.all_bytes += row.b;
        grandchild.vis_count += row.vn;
        grandchild.vis_bytes += row.vb;
    }
    summarise(Some(&root), &mut 0)
}
