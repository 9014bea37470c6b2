//! The directory summary table (schema version 2): what a listing needs, kept current by every
//! commit in the same transaction, so a view of a directory reads its depth-1 and depth-2 entries
//! and never the content below them.
//!
//! `dirs (d, r, f, s, n, b, vn, vb)`, keyed by `(d, r, f, s)`: `d` is a directory's subtree
//! prefix (`m:{scope}:{dir}/`), `r` a name one or two segments below it (`c` or `c/g`). With `f`
//! true the row is the memory at exactly `d‖r`; with `f` false (only for two segments) it
//! aggregates memories strictly below `d‖r/`, split over [`SHARDS`] rows by a hash `s` of the
//! memory's key. `n`/`b` count those memories and their bytes, hidden ones included; `vn`/`vb`
//! only those whose path below `d‖r` has no hidden segment. A row whose `n` reaches 0 is deleted.
//!
//! A memory at depth k adds one row per ancestor directory (k rows), each keyed by its first two
//! segments below that ancestor. Memories within two levels of an ancestor have rows of their
//! own there. Ancestors three or more levels up aggregate them: one row there would be written
//! by every create in a deep directory, and under SERIALIZABLE concurrent writers of one row
//! abort each other (64 callers creating in `/memories/a/b/c` went from ~2,500 to ~340 creates/s
//! with one row; docs/investigations/postgres-contention.md). Sharding spreads them over `SHARDS` rows, at the
//! cost of a listing reading up to `SHARDS` rows per directory two levels down: still bounded by
//! the entries it lists, never by the content below them.

use std::collections::BTreeMap;

use postgres::types::ToSql;

use super::error::{Phase, Redactor};
use super::pool::Conn;
use super::sql::{Q, Sql, WRITE_CHUNK_ROWS};
use rabosh_memory::backend_kit::keys::{hidden, parse, segments, subtree_prefix};
use rabosh_memory::backend_kit::{DirRow, ROOT, Result, SizeChange, Usage};

/// What a commit's size changes (`listing_delta.rs`, from what its commands read in this
/// transaction) do to the summary rows: no old size is read back.
pub fn deltas(changes: &[SizeChange]) -> Deltas {
    let mut deltas = Deltas::default();
    for change in changes {
        if let Some(size) = change.before {
            deltas.memory(&change.key, size, -1);
        }
        if let Some(size) = change.after {
            deltas.memory(&change.key, size, 1);
        }
    }
    deltas
}

/// Writes `deltas` to the summary table, then deletes the rows they emptied, one statement at a
/// time (the migration's fill; a commit sends [`plan`] in its pipelined flight).
pub fn apply(conn: &mut Conn, sql: &Sql, redactor: &Redactor, deltas: Deltas) -> Result<()> {
    for (q, params) in plan(deltas) {
        let statement = conn.statement(sql, q, redactor)?;
        conn.client.execute(&statement, &refs(&params)).map_err(|e| conn.fail(&e, Phase::Statement, redactor))?;
    }
    Ok(())
}

/// A statement's parameters, boxed so statements of different shapes queue together.
pub type Params<'a> = Vec<Box<dyn ToSql + Sync + 'a>>;

/// The parameters as the client takes them.
pub fn refs<'p>(params: &'p Params<'_>) -> Vec<&'p (dyn ToSql + Sync)> {
    params.iter().map(|p| &**p as &(dyn ToSql + Sync)).collect()
}

/// The statements that write `deltas`: the additions, then the deletion of the rows they emptied.
pub fn plan(deltas: Deltas) -> Vec<(Q, Params<'static>)> {
    let rows = deltas.into_rows();
    let mut out: Vec<(Q, Params<'static>)> = Vec::new();
    for chunk in rows.chunks(WRITE_CHUNK_ROWS) {
        let column = |f: fn(&(RowKey, Delta)) -> i64| chunk.iter().map(f).collect::<Vec<i64>>();
        let (d, r, f, s) = key_columns(chunk.iter());
        let (n, b, vn, vb) = (column(|x| x.1.n), column(|x| x.1.b), column(|x| x.1.vn), column(|x| x.1.vb));
        out.push((
            Q::DirsAdd,
            vec![
                Box::new(d),
                Box::new(r),
                Box::new(f),
                Box::new(s),
                Box::new(n),
                Box::new(b),
                Box::new(vn),
                Box::new(vb),
            ],
        ));
    }
    let shrunk: Vec<&(RowKey, Delta)> = rows.iter().filter(|x| x.1.n < 0).collect();
    for chunk in shrunk.chunks(WRITE_CHUNK_ROWS) {
        let (d, r, f, s) = key_columns(chunk.iter().copied());
        out.push((Q::DirsPrune, vec![Box::new(d), Box::new(r), Box::new(f), Box::new(s)]));
    }
    out
}

type KeyColumns = (Vec<Vec<u8>>, Vec<Vec<u8>>, Vec<bool>, Vec<i16>);

fn key_columns<'a>(rows: impl Iterator<Item = &'a (RowKey, Delta)> + Clone) -> KeyColumns {
    (
        rows.clone().map(|x| x.0.0.clone()).collect(),
        rows.clone().map(|x| x.0.1.clone()).collect(),
        rows.clone().map(|x| x.0.2).collect(),
        rows.map(|x| x.0.3).collect(),
    )
}

/// Rows an aggregate below a depth-2 name is split over.
pub const SHARDS: u32 = 16;

/// `(d, r, f, s)`.
pub type RowKey = (Vec<u8>, Vec<u8>, bool, i16);

/// Which shard a memory's key counts in: FNV-1a, fixed forever (a removal must find the row its
/// addition made, in any process of any version).
fn shard(key: &[u8]) -> i16 {
    let hash = key.iter().fold(0x811c_9dc5u32, |h, b| (h ^ u32::from(*b)).wrapping_mul(0x0100_0193));
    (hash % SHARDS) as i16
}

/// Additive change of one row: `n`, `b`, `vn`, `vb`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Delta {
    pub n: i64,
    pub b: i64,
    pub vn: i64,
    pub vb: i64,
}

impl Delta {
    fn add(&mut self, sign: i64, size: u64, visible: bool) {
        let size = i64::try_from(size).expect("a memory's size fits a bigint");
        self.n += sign;
        self.b += sign * size;
        if visible {
            self.vn += sign;
            self.vb += sign * size;
        }
    }

    pub fn is_zero(&self) -> bool {
        *self == Delta::default()
    }
}

/// Summary changes of one commit, merged per row and ordered by key (so concurrent commits
/// touch shared rows in one order).
#[derive(Debug, Default)]
pub struct Deltas(BTreeMap<RowKey, Delta>);

impl Deltas {
    /// Adds (`sign` 1) or removes (`sign` -1) the memory of `size` at `key`; keys that are not
    /// memory keys are not listed and change nothing.
    pub fn memory(&mut self, key: &[u8], size: u64, sign: i64) {
        let Some((scope, path)) = parse(key) else { return };
        if !path.starts_with("/memories/") {
            return;
        }
        let segs = segments(path);
        let mut dir = ROOT.to_string();
        for j in 0..segs.len() {
            let rel = &segs[j..];
            let (r, f, visible) = match rel {
                [one] => (one.to_string(), true, true),
                [one, two] => (format!("{one}/{two}"), true, true),
                [one, two, below @ ..] => (format!("{one}/{two}"), false, !below.iter().any(|s| hidden(s))),
                [] => unreachable!("j < segs.len()"),
            };
            let row = (subtree_prefix(scope, &dir), r.into_bytes(), f, if f { 0 } else { shard(key) });
            self.0.entry(row).or_default().add(sign, size, visible);
            dir.push('/');
            dir.push_str(segs[j]);
        }
    }

    /// The changed rows in key order, zero changes left out.
    pub fn into_rows(self) -> Vec<(RowKey, Delta)> {
        self.0.into_iter().filter(|(_, d)| !d.is_zero()).collect()
    }
}

/// Every memory of a scope, hidden ones included: the root directory's rows.
pub fn usage(rows: &[DirRow]) -> Usage {
    rows.iter().fold(Usage::default(), |u, r| Usage { memories: u.memories + r.n, bytes: u.bytes + r.b })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_memory_adds_one_row_per_ancestor_keyed_two_levels_down() {
        let mut d = Deltas::default();
        d.memory(b"m:s:/memories/a/b/.h/e", 5, 1);
        let rows = d.into_rows();
        let key = b"m:s:/memories/a/b/.h/e";
        assert!(rows.iter().all(|((_, _, f, s), _)| *s == if *f { 0 } else { shard(key) }));
        let got: Vec<(String, String, bool, Delta)> = rows
            .into_iter()
            .map(|((d, r, f, _), x)| (String::from_utf8(d).unwrap(), String::from_utf8(r).unwrap(), f, x))
            .collect();
        let vis = Delta { n: 1, b: 5, vn: 1, vb: 5 };
        let hid = Delta { n: 1, b: 5, vn: 0, vb: 0 };
        assert_eq!(
            got,
            vec![
                ("m:s:/memories/".into(), "a/b".into(), false, hid),
                ("m:s:/memories/a/".into(), "b/.h".into(), false, vis),
                ("m:s:/memories/a/b/".into(), ".h/e".into(), true, vis),
                ("m:s:/memories/a/b/.h/".into(), "e".into(), true, vis),
            ]
        );
    }

    #[test]
    fn size_changes_remove_the_size_found_and_add_the_size_left() {
        let change = |key: &str, before, after| SizeChange { key: key.as_bytes().to_vec(), before, after };
        // An edit from 3 to 5 bytes: one row per ancestor, each +2 bytes and no count change.
        let rows = deltas(&[change("m:s:/memories/x/y", Some(3), Some(5))]).into_rows();
        assert_eq!(rows.len(), 2);
        assert!(rows.iter().all(|(_, d)| *d == Delta { n: 0, b: 2, vn: 0, vb: 2 }), "{rows:?}");
        // A move within one directory: its root row loses one name and gains another.
        let moved = deltas(&[change("m:s:/memories/a", Some(4), None), change("m:s:/memories/b", None, Some(4))]);
        let got: Vec<(Vec<u8>, i64)> = moved.into_rows().into_iter().map(|((_, r, _, _), d)| (r, d.n)).collect();
        assert_eq!(got, vec![(b"a".to_vec(), -1), (b"b".to_vec(), 1)]);
    }

    #[test]
    fn shards_are_fixed_and_spread() {
        assert_eq!(shard(b""), (0x811c_9dc5u32 % SHARDS) as i16);
        let used: std::collections::BTreeSet<i16> =
            (0..200).map(|i| shard(format!("m:s:/memories/a/b/c/f{i}").as_bytes())).collect();
        assert_eq!(used.len(), SHARDS as usize);
    }

    #[test]
    fn adding_and_removing_cancel_and_other_keys_change_nothing() {
        let mut d = Deltas::default();
        d.memory(b"m:s:/memories/x/y/z", 3, 1);
        d.memory(b"m:s:/memories/x/y/z", 3, -1);
        d.memory(b"h:s:/memories/x", 3, 1);
        d.memory(b"m:s:/memories", 3, 1);
        assert!(d.into_rows().is_empty());
    }
}
