//! Fault enumeration on `SimFs`: every operation kind (commit, roll-over, compaction, checkpoint by
//! link and by copy, buffered sync, close, and open/recovery of fresh, torn, hint-less and
//! checkpoint directories) runs once under a counting `FaultFs`; then, for every IO step kind and
//! every N up to that count, a fresh run fails exactly the Nth step. Each fault must fire once and
//! surface as an IO error (or be a documented best-effort step whose failure leaves the result
//! correct); the store is then reopened live and from crash images of the aftermath, and must hold
//! every acknowledged commit and nothing half-applied. A failed checkpoint leaves the source
//! intact and the target not openable as a store.
//!
//! Knobs: `RABOSH_FAULT_MAX_N` caps N per kind (default: all), `RABOSH_FAULT_IMAGES` crash images
//! per fault (default 2).

mod common;

use common::{Model, contents, knob, opts, random_batch};
use rabosh::{Durability, Error, Options, Store, Vfs};
use rabosh_testkit::{FaultFs, IoKind, Rng, SimFs};
use std::path::Path;
use std::sync::Arc;

const DIR: &str = "/d/store";
const CP: &str = "/d/cp";
const KINDS: [IoKind; 10] = [
    IoKind::Create,
    IoKind::Write,
    IoKind::Sync,
    IoKind::SyncDir,
    IoKind::Rename,
    IoKind::Remove,
    IoKind::Truncate,
    IoKind::Link,
    IoKind::Open,
    IoKind::Read,
];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    Commit,
    RollOver,
    Compact,
    CheckpointLink,
    CheckpointCopy,
    BufferedSync,
    BufferedClose,
    OpenFresh,
    OpenTornTail,
    OpenRebuildAndSweep,
    OpenCheckpoint,
}

const OPS: [Op; 11] = [
    Op::Commit,
    Op::RollOver,
    Op::Compact,
    Op::CheckpointLink,
    Op::CheckpointCopy,
    Op::BufferedSync,
    Op::BufferedClose,
    Op::OpenFresh,
    Op::OpenTornTail,
    Op::OpenRebuildAndSweep,
    Op::OpenCheckpoint,
];

/// A deterministic starting point: the filesystem, the fault layer on it, the open store
/// (none for the open/recovery ops), models per seq and the last acknowledged seq.
struct World {
    fs: SimFs,
    ff: FaultFs,
    store: Option<Store>,
    models: Vec<Model>,
    acked: u64,
    rng: Rng,
    options: Options,
    /// Where the op opens a store (recovery ops).
    open_dir: &'static str,
}

impl World {
    fn commit(&mut self) -> rabosh::Result<u64> {
        let seq = self.models.len() as u64;
        let mut m = self.models.last().unwrap().clone();
        let b = random_batch(&mut self.rng, &mut m, seq);
        if self.models.len() as u64 == self.acked + 1 {
            self.models.push(m);
        } else {
            self.models[seq as usize] = m;
        }
        let s = self.store.as_ref().unwrap().write(b)?;
        self.acked = s;
        Ok(s)
    }
}

fn segment_bytes(op: Op) -> u64 {
    match op {
        Op::Commit => 1 << 20,
        _ => 400,
    }
}

fn setup(op: Op) -> World {
    let fs = SimFs::new();
    let ff = FaultFs::new(Arc::new(fs.clone()));
    let mut options = opts(Arc::new(ff.clone()) as Arc<dyn Vfs>, segment_bytes(op));
    if matches!(op, Op::BufferedSync | Op::BufferedClose) {
        options.durability = Durability::Buffered;
    }
    let mut w = World {
        fs,
        ff,
        store: None,
        models: vec![Model::new()],
        acked: 0,
        rng: Rng::new(op as u64 + 11),
        options: options.clone(),
        open_dir: DIR,
    };
    if op == Op::OpenFresh {
        return w;
    }
    w.store = Some(Store::open(DIR, options).unwrap());
    for _ in 0..8 {
        w.commit().unwrap();
    }
    match op {
        Op::BufferedSync | Op::BufferedClose => {
            w.store.as_ref().unwrap().sync().unwrap();
            // Three more commits that only the op makes durable.
            for _ in 0..3 {
                w.commit().unwrap();
            }
            // Buffered commits are acknowledged by sync, not by write.
            w.acked = 8;
        }
        Op::CheckpointCopy => w.fs.set_hard_links(false),
        Op::OpenTornTail => {
            drop(w.store.take());
            let active = active_segment(&w.fs);
            let mut b = w.fs.read_file(&active).unwrap();
            let len = b.len();
            let tail = b[len - 30..].to_vec();
            b.extend_from_slice(&tail); // a torn copy of the last frame's tail
            b.extend_from_slice(&[0u8; 17]);
            w.fs.write_file(&active, &b).unwrap();
        }
        Op::OpenRebuildAndSweep => {
            drop(w.store.take());
            let d = Path::new(DIR);
            for n in w.fs.names(d) {
                if n.ends_with(".hint") {
                    w.fs.delete_file(&d.join(n)).unwrap();
                }
            }
            for (n, b) in [
                ("0000000099.seg", &b"orphan"[..]),
                ("0000000098.hint", b"x"),
                ("MANIFEST.tmp", b"t"),
                ("0000000001.hint.tmp", b"t"),
            ] {
                w.fs.write_file(&d.join(n), b).unwrap();
            }
        }
        Op::OpenCheckpoint => {
            w.store.as_ref().unwrap().checkpoint(CP).unwrap();
            drop(w.store.take());
            w.open_dir = CP;
        }
        _ => {}
    }
    w
}

fn active_segment(fs: &SimFs) -> std::path::PathBuf {
    let d = Path::new(DIR);
    d.join(fs.names(d).into_iter().filter(|n| n.ends_with(".seg")).max().unwrap())
}

/// Runs the op.
fn run(op: Op, w: &mut World) -> rabosh::Result<()> {
    match op {
        Op::Commit => w.commit().map(|_| ()),
        Op::RollOver => {
            let files = w.store.as_ref().unwrap().stats().files;
            for _ in 0..6 {
                w.commit()?;
            }
            assert!(w.store.as_ref().unwrap().stats().files > files, "the roll-over op must roll over");
            Ok(())
        }
        Op::Compact => w.store.as_ref().unwrap().compact().map(|_| ()),
        Op::CheckpointLink | Op::CheckpointCopy => {
            let info = w.store.as_ref().unwrap().checkpoint(CP)?;
            if w.ff.fired() == 0 {
                assert_eq!(info.hard_linked, op == Op::CheckpointLink);
            }
            Ok(())
        }
        Op::BufferedSync => {
            w.store.as_ref().unwrap().sync()?;
            w.acked = 11;
            Ok(())
        }
        Op::BufferedClose => {
            w.store.as_ref().unwrap().close()?;
            w.acked = 11;
            Ok(())
        }
        Op::OpenFresh | Op::OpenTornTail | Op::OpenRebuildAndSweep | Op::OpenCheckpoint => {
            w.store = Some(Store::open(w.open_dir, w.options.clone())?);
            Ok(())
        }
    }
}

/// The store at `dir` on `fs`, opened without faults, must hold every acknowledged commit and
/// a prefix of the rest, exactly as modelled.
fn reopen_check(fs: &SimFs, dir: &str, w: &World, ctx: &str) -> u64 {
    let s = Store::open(dir, opts(Arc::new(fs.clone()) as Arc<dyn Vfs>, 400))
        .unwrap_or_else(|e| panic!("{ctx}: reopen failed: {e}"));
    let seq = s.stats().seq;
    // models holds every attempted commit: with Sync durability at most one past the last ack.
    assert!(seq >= w.acked && (seq as usize) < w.models.len(), "{ctx}: reopened at {seq}, acked {}", w.acked);
    assert!(contents(&s).unwrap() == w.models[seq as usize], "{ctx}: state at {seq} differs from the model");
    s.verify().unwrap_or_else(|e| panic!("{ctx}: verify: {e}"));
    seq
}

struct Tally {
    injected: u64,
    surfaced: u64,
    absorbed: u64,
}

fn scenario(op: Op, kind: IoKind, n: u64, images: u64, tally: &mut Tally) {
    let ctx = format!("{op:?}: {kind:?} #{n}");
    let mut w = setup(op);
    w.ff.fail_nth(kind, n);
    let r = run(op, &mut w);
    w.ff.disarm();
    assert_eq!(w.ff.fired(), 1, "{ctx}: the fault must fire exactly once");
    tally.injected += 1;
    let recovery_op = matches!(op, Op::OpenFresh | Op::OpenTornTail | Op::OpenRebuildAndSweep | Op::OpenCheckpoint);
    match &r {
        Err(Error::Io { .. }) => tally.surfaced += 1,
        Err(e) => panic!("{ctx}: an injected IO fault must surface as an IO error, got {e}"),
        Ok(()) => {
            // Only steps whose failure the engine documents as harmless may pass silently:
            // a hard link (copy fallback), a best-effort cleanup remove, the hint rebuilt at
            // open (rebuilt again next time), an unsynced LOCK.holder record (blanked on close:
            // close's only creates and renames), the unsynced SYNCED record (a stale or torn
            // record only makes recovery lenient), the active segment's hint a clean close
            // writes (derived: without it the next open scans). The crash images below prove
            // nothing was lost.
            let on_record = w.ff.fired_at().is_some_and(|p| p.ends_with("SYNCED"));
            let on_hint = w.ff.fired_at().is_some_and(|p| p.to_string_lossy().contains(".hint"));
            let harmless = kind == IoKind::Link
                || (kind == IoKind::Write && on_record)
                || kind == IoKind::Remove
                || (op == Op::BufferedClose && matches!(kind, IoKind::Create | IoKind::Rename))
                || (op == Op::BufferedClose && on_hint && matches!(kind, IoKind::Write | IoKind::Remove))
                || (recovery_op
                    && matches!(
                        kind,
                        IoKind::Create
                            | IoKind::Write
                            | IoKind::Sync
                            | IoKind::Rename
                            | IoKind::SyncDir
                            | IoKind::Open
                            | IoKind::Read
                    ));
            assert!(harmless, "{ctx}: the fault was swallowed");
            tally.absorbed += 1;
        }
    }
    if let Some(store) = &w.store {
        let st = store.stats();
        if r.is_err() && matches!(op, Op::Commit | Op::RollOver | Op::BufferedSync) {
            assert!(st.poisoned, "{ctx}: a failed commit or sync poisons the handle");
        }
        if st.poisoned {
            let mut m = w.models[w.acked as usize].clone();
            let b = random_batch(&mut Rng::new(1), &mut m, 999);
            assert!(matches!(store.write(b), Err(Error::Poisoned { .. })), "{ctx}: poisoned store took a write");
            assert!(matches!(store.sync(), Err(Error::Poisoned { .. })), "{ctx}: poisoned store took a sync");
            assert!(matches!(store.compact(), Err(Error::Poisoned { .. })), "{ctx}: poisoned store compacted");
        }
        if st.poisoned && !store.is_closed() {
            // Nothing answers from a poisoned store (FORMAT.md: poisoning): no view may show a
            // failed commit, or the state it failed from as if it were the latest.
            assert!(matches!(store.snapshot(), Err(Error::Poisoned { .. })), "{ctx}: poisoned snapshot");
            assert!(matches!(store.latest_snapshot(), Err(Error::Poisoned { .. })), "{ctx}: poisoned latest");
        }
        if !store.is_closed() && !st.poisoned {
            // Reads serve the published state (a failed commit never published).
            let seq = st.seq;
            assert!(seq >= w.acked && (seq as usize) < w.models.len(), "{ctx}: live seq {seq}");
            if op != Op::BufferedSync && op != Op::BufferedClose {
                assert_eq!(seq, w.acked, "{ctx}: a failed commit is not visible");
            }
            assert!(contents(store).unwrap() == w.models[seq as usize], "{ctx}: live reads");
            if !st.poisoned {
                // Still writable, and the write is acknowledged.
                w.commit().unwrap_or_else(|e| panic!("{ctx}: a store not poisoned must take writes: {e}"));
            }
        }
    }
    if matches!(op, Op::CheckpointLink | Op::CheckpointCopy) {
        check_checkpoint_target(&w, r.is_ok(), &ctx);
    }
    drop(w.store.take());
    // Power loss right after the fault, then a reopen: nothing acknowledged may be missing.
    let mut rng = Rng::new(n * 131 + kind as u64);
    let mut imgs = vec![w.fs.crash_durable()];
    for _ in 1..images {
        imgs.push(w.fs.crash(rng.next_u64()));
    }
    for (i, img) in imgs.iter().enumerate() {
        reopen_check(img, w.open_dir, &w, &format!("{ctx}, crash image {i}"));
    }
    reopen_check(&w.fs, w.open_dir, &w, &format!("{ctx}, live reopen"));
}

fn check_checkpoint_target(w: &World, ok: bool, ctx: &str) {
    let fs = w.fs.fork();
    let names = fs.names(Path::new(CP));
    let r = Store::open(CP, opts(Arc::new(fs) as Arc<dyn Vfs>, 400));
    match (ok, r) {
        (true, Ok(c)) => assert!(contents(&c).unwrap() == w.models[c.stats().seq as usize]),
        (true, Err(e)) => panic!("{ctx}: an acknowledged checkpoint does not open: {e}"),
        (false, Ok(c)) => {
            assert!(names.is_empty() && c.stats().seq == 0, "{ctx}: a failed checkpoint opened as a store ({names:?})");
        }
        (false, Err(Error::Corruption { file, .. })) => assert!(file.ends_with("MANIFEST"), "{ctx}"),
        (false, Err(e)) => panic!("{ctx}: failed checkpoint target: unexpected {e}"),
    }
}

#[test]
fn every_io_step_of_every_operation_can_fail_without_losing_an_acknowledged_commit() {
    let max_n = knob("RABOSH_FAULT_MAX_N", u64::MAX);
    let images = knob("RABOSH_FAULT_IMAGES", 2);
    let mut tally = Tally { injected: 0, surfaced: 0, absorbed: 0 };
    let mut report = Vec::new();
    for op in OPS {
        // The counting run: how many steps of each kind the op takes.
        let mut w = setup(op);
        let before: Vec<u64> = KINDS.iter().map(|k| w.ff.count(*k)).collect();
        run(op, &mut w).unwrap_or_else(|e| panic!("{op:?} without faults: {e}"));
        let counts: Vec<u64> = KINDS.iter().zip(&before).map(|(k, b)| w.ff.count(*k) - b).collect();
        drop(w);
        let surfaced_before = tally.surfaced;
        for (kind, count) in KINDS.iter().zip(&counts) {
            for n in 1..=(*count).min(max_n) {
                scenario(op, *kind, n, images, &mut tally);
            }
        }
        assert!(tally.surfaced > surfaced_before, "{op:?}: no fault surfaced: the seam does not reach it");
        report.push(format!("{op:?} {counts:?}"));
    }
    eprintln!(
        "fault enumeration: {} faults injected ({} surfaced as errors, {} absorbed by best-effort steps)\n  {}",
        tally.injected,
        tally.surfaced,
        tally.absorbed,
        report.join("\n  ")
    );
    assert!(tally.injected >= 200, "only {} faults injected", tally.injected);
}

/// fsyncgate: after a failed fsync the handle refuses writes until reopened, reads still serve,
/// and whatever the reopened store reports is durable (a power loss right after cannot take it
/// back) — the un-acknowledged commit may or may not be there.
#[test]
fn after_a_failed_fsync_writes_are_refused_and_the_reopened_state_is_durable() {
    for durability in [Durability::Sync, Durability::Buffered] {
        let fs = SimFs::new();
        let ff = FaultFs::new(Arc::new(fs.clone()));
        let o = Options { durability, ..opts(Arc::new(ff.clone()) as Arc<dyn Vfs>, 1 << 20) };
        let store = Store::open(DIR, o).unwrap();
        let mut rng = Rng::new(5);
        let mut models = vec![Model::new()];
        for seq in 1..=4 {
            let mut m = models.last().unwrap().clone();
            store.write(random_batch(&mut rng, &mut m, seq)).unwrap();
            models.push(m);
        }
        store.sync().unwrap();
        let snap = store.snapshot().unwrap();
        let mut m = models.last().unwrap().clone();
        let b = random_batch(&mut rng, &mut m, 5);
        models.push(m);
        ff.fail_nth(IoKind::Sync, 1);
        let r = match durability {
            Durability::Sync => store.write(b).map(|_| ()),
            Durability::Buffered => store.write(b).and_then(|_| store.sync()),
        };
        assert!(matches!(r, Err(Error::Io { op: "fsync", .. })), "{durability:?}: {r:?}");
        assert_eq!(ff.fired(), 1);
        assert!(store.stats().poisoned);
        let mut again = models[4].clone();
        let b = random_batch(&mut rng, &mut again, 6);
        assert!(matches!(store.write(b), Err(Error::Poisoned { .. })));
        assert!(matches!(store.sync(), Err(Error::Poisoned { .. })));
        assert!(matches!(store.checkpoint(CP), Err(Error::Poisoned { .. })));
        // Every call answers Poisoned until reopen: nothing may answer from the failed commit.
        assert!(matches!(store.snapshot(), Err(Error::Poisoned { .. })));
        assert!(matches!(store.latest_snapshot(), Err(Error::Poisoned { .. })));
        assert!(matches!(store.append(rabosh::Batch::new()), Err(Error::Poisoned { .. })));
        assert!(matches!(store.wait_durable(5), Err(Error::Poisoned { .. })));
        assert!(matches!(store.compact(), Err(Error::Poisoned { .. })));
        // A snapshot taken before the failure still reads what it saw.
        assert_eq!(snap.seq(), 4);
        assert_eq!(snap.len(), models[4].len());
        // verify, stats and close still run.
        store.verify().unwrap();
        assert!(store.stats().poisoned);
        drop(snap);
        store.close().unwrap();
        drop(store);

        let s = Store::open(DIR, opts(Arc::new(fs.clone()) as Arc<dyn Vfs>, 1 << 20)).unwrap();
        let seq = s.stats().seq;
        assert!(seq == 4 || seq == 5, "{durability:?}: reopened at {seq}");
        assert!(contents(&s).unwrap() == models[seq as usize]);
        // What the reopened store reports must already be on disk.
        let img = fs.crash_durable();
        drop(s);
        let s = Store::open(DIR, opts(Arc::new(img) as Arc<dyn Vfs>, 1 << 20)).unwrap();
        assert_eq!(s.stats().seq, seq, "{durability:?}: open reported commit {seq} that a power loss took back");
        assert!(contents(&s).unwrap() == models[seq as usize]);
    }
}
