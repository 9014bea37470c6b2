//! The torn-tail rule for buffered commits (FORMAT.md, recovery rule 6), case by case on `SimFs`:
//! a bad frame with only buffered commits behind it is a torn tail (they were never synced, so
//! they go with it); a bad frame with a Sync-mode commit or a synced marker behind it was
//! durable once, so it is reported as corruption.

mod common;

use common::{Model, contents, log_end, opts, random_batch};
use rabosh::{Durability, Error, Options, Store, Vfs};
use rabosh_testkit::{Rng, SimFs};
use std::path::{Path, PathBuf};
use std::sync::Arc;

const DIR: &str = "/t/store";

fn options(fs: &SimFs, durability: Durability, strict: bool) -> Options {
    Options { durability, strict, ..opts(Arc::new(fs.clone()) as Arc<dyn Vfs>, 1 << 20) }
}

fn active_segment(fs: &SimFs) -> PathBuf {
    let d = Path::new(DIR);
    d.join(fs.names(d).into_iter().filter(|n| n.ends_with(".seg")).max().unwrap())
}

/// A store on its own `SimFs`: the same three commits every time (seq 1..=3), each written in the
/// durability `modes[i]`; a close + reopen between commits whose modes differ, and `sync()`
/// after the commits listed in `sync_after`. Returns the filesystem (store still open, nothing
/// after the last step synced), the segment's bytes, the end offset of each commit, the models.
struct Built {
    fs: SimFs,
    seg: PathBuf,
    bytes: Vec<u8>,
    /// starts[s] = offset of commit s's frame; ends[s] = the end of its frame.
    starts: Vec<u64>,
    ends: Vec<u64>,
    models: Vec<Model>,
    _store: Store,
}

fn build(modes: [Durability; 3], sync_after: &[u64]) -> Built {
    let fs = SimFs::new();
    let mut store = Store::open(DIR, options(&fs, modes[0], false)).unwrap();
    let seg = active_segment(&fs);
    let mut rng = Rng::new(42);
    let mut models = vec![Model::new()];
    let (mut starts, mut ends) = (vec![0], vec![log_end(&fs.read_file(&seg).unwrap())]);
    for seq in 1..=3u64 {
        let mode = modes[seq as usize - 1];
        if store.options().durability != mode {
            store.close().unwrap();
            drop(store);
            store = Store::open(DIR, options(&fs, mode, false)).unwrap();
        }
        let before = log_end(&fs.read_file(&seg).unwrap());
        let mut m = models.last().unwrap().clone();
        assert_eq!(store.write(random_batch(&mut rng, &mut m, seq)).unwrap(), seq);
        models.push(m);
        let after = log_end(&fs.read_file(&seg).unwrap());
        // A leading synced marker may precede the frame: the frame is the write's tail.
        let frame_len = frame_len(&fs.read_file(&seg).unwrap(), before, after);
        starts.push(after - frame_len);
        ends.push(after);
        if sync_after.contains(&seq) {
            store.sync().unwrap();
        }
    }
    assert_eq!(active_segment(&fs), seg, "the three commits share one segment");
    let bytes = fs.read_file(&seg).unwrap();
    Built { fs, seg, bytes, starts, ends, models, _store: store }
}

/// Length of the last frame in `bytes[from..to]` (frames are magic | len word | crc | payload).
fn frame_len(bytes: &[u8], from: u64, to: u64) -> u64 {
    let mut at = from as usize;
    loop {
        let word = u32::from_le_bytes(bytes[at + 4..at + 8].try_into().unwrap());
        let next = at + 12 + (word & 0x7fff_ffff) as usize;
        if next as u64 == to {
            return (next - at) as u64;
        }
        at = next;
    }
}

/// Power loss that kept exactly `bytes` in the segment (everything else as last synced).
fn image(b: &Built, bytes: &[u8]) -> SimFs {
    let img = b.fs.crash_durable();
    img.write_file(&b.seg, bytes).unwrap();
    img
}

/// The ways commit `seq` can be missing while what follows it reached disk.
fn damaged(b: &Built, seq: usize) -> Vec<(&'static str, Vec<u8>)> {
    let (s, e) = (b.starts[seq] as usize, b.ends[seq] as usize);
    let mut out = Vec::new();
    let mut zeros = b.bytes.clone();
    zeros[s..e].fill(0);
    out.push(("lost (zeros)", zeros));
    let mut torn = b.bytes.clone();
    torn[usize::midpoint(s, e)..e].fill(0);
    out.push(("torn", torn));
    let mut flipped = b.bytes.clone();
    flipped[e - 2] ^= 0x40;
    out.push(("flipped byte", flipped));
    out
}

fn expect_corruption_at(img: &SimFs, at: u64, ctx: &str) -> String {
    match Store::open(DIR, options(img, Durability::Sync, false)) {
        Err(Error::Corruption { file, offset, reason }) => {
            assert_eq!(file, active_segment(img), "{ctx}");
            assert_eq!(offset, at, "{ctx}: names the damaged frame ({reason})");
            reason
        }
        Err(e) => panic!("{ctx}: expected corruption, got {e}"),
        Ok(s) => panic!("{ctx}: expected corruption, opened at seq {}", s.stats().seq),
    }
}

#[test]
fn buffered_commits_behind_a_torn_one_go_with_the_tail() {
    let b = build([Durability::Buffered; 3], &[]);
    for (how, bytes) in damaged(&b, 2) {
        let ctx = format!("commit 2 {how}, commit 3 intact behind it");
        let img = image(&b, &bytes);
        let store = Store::open(DIR, options(&img, Durability::Sync, false))
            .unwrap_or_else(|e| panic!("{ctx}: must open as a torn tail: {e}"));
        assert_eq!(store.stats().seq, 1, "{ctx}");
        assert!(contents(&store).unwrap() == b.models[1], "{ctx}");
        store.verify().unwrap();
        // Cut and made durable before anything is appended: commit 3 does not come back.
        let cut = img.crash_durable().read_file(&b.seg).unwrap();
        assert_eq!(cut.len() as u64, b.ends[1], "{ctx}: the cut must be durable before open returns");
        let mut m = b.models[1].clone();
        assert_eq!(store.write(random_batch(&mut Rng::new(9), &mut m, 2)).unwrap(), 2);
        drop(store);
        let again = Store::open(DIR, options(&img.crash_durable(), Durability::Sync, false)).unwrap();
        assert!(again.stats().seq == 2 && contents(&again).unwrap() == m, "{ctx}: append after the cut");
        // Strict mode refuses any torn tail.
        let strict = Store::open(DIR, options(&image(&b, &bytes), Durability::Sync, true));
        assert!(matches!(strict, Err(Error::Corruption { .. })), "{ctx}: strict mode must refuse");
    }
}

#[test]
fn a_sync_mode_commit_behind_a_bad_buffered_one_is_corruption() {
    let buffered = build([Durability::Buffered; 3], &[]);
    // The same commit 3 written in Sync mode (same bytes but for the flag).
    let synced = build([Durability::Sync; 3], &[]);
    assert_eq!(buffered.starts, synced.starts);
    let (s3, e3) = (synced.starts[3] as usize, synced.ends[3] as usize);
    assert_ne!(buffered.bytes[s3..e3], synced.bytes[s3..e3], "only the flag differs");
    for (how, mut bytes) in damaged(&buffered, 2) {
        bytes[s3..e3].copy_from_slice(&synced.bytes[s3..e3]);
        let ctx = format!("commit 2 {how}, Sync-mode commit 3 behind it");
        let reason = expect_corruption_at(&image(&buffered, &bytes), buffered.starts[2], &ctx);
        assert!(reason.contains("seq 3"), "{ctx}: {reason}");
    }
}

#[test]
fn a_synced_marker_behind_a_bad_commit_is_corruption() {
    // sync() after commit 2 leaves a marker between commits 2 and 3: 1 and 2 were acknowledged.
    let b = build([Durability::Buffered; 3], &[2]);
    assert!(b.starts[3] > b.ends[2], "a marker lies between commits 2 and 3");
    for seq in [1, 2] {
        for (how, bytes) in damaged(&b, seq) {
            let ctx = format!("synced commit {seq} {how}");
            let reason = expect_corruption_at(&image(&b, &bytes), b.starts[seq], &ctx);
            assert!(reason.contains("marker"), "{ctx}: {reason}");
        }
    }
    // Commit 3, never synced, is still just a torn tail.
    for (how, bytes) in damaged(&b, 3) {
        let s = Store::open(DIR, options(&image(&b, &bytes), Durability::Sync, false))
            .unwrap_or_else(|e| panic!("unsynced commit 3 {how}: {e}"));
        assert_eq!(s.stats().seq, 2);
    }
}

#[test]
fn a_buffered_run_after_a_durable_commit_starts_with_a_marker() {
    // Commit 1 in Sync mode, then (close, reopen) commits 2 and 3 buffered and never synced:
    // the first buffered write is preceded by a marker, so damage to commit 1 is still seen.
    let b = build([Durability::Sync, Durability::Buffered, Durability::Buffered], &[]);
    assert!(b.starts[2] > b.ends[1], "a marker lies between commits 1 and 2");
    for (how, bytes) in damaged(&b, 1) {
        let ctx = format!("acknowledged commit 1 {how}, buffered 2 and 3 behind it");
        expect_corruption_at(&image(&b, &bytes), b.starts[1], &ctx);
    }
    // The same after a crash and a Buffered reopen: what open recovered is durable and marked.
    let b = build([Durability::Buffered; 3], &[]);
    let img = b.fs.crash_durable();
    img.write_file(&b.seg, &b.bytes[..b.ends[1] as usize]).unwrap();
    let store = Store::open(DIR, options(&img, Durability::Buffered, false)).unwrap();
    let mut m = b.models[1].clone();
    for seq in 2..=3 {
        store.write(random_batch(&mut Rng::new(seq), &mut m, seq)).unwrap();
    }
    let mut bytes = img.read_file(&b.seg).unwrap();
    drop(store);
    bytes[b.ends[1] as usize - 2] ^= 0x40;
    let img2 = img.crash_durable();
    img2.write_file(&b.seg, &bytes).unwrap();
    expect_corruption_at(&img2, b.starts[1], "recovered commit 1 damaged under a new buffered run");
}
