//! Random byte damage in every kind of file the store writes — active segment, sealed log and
//! compacted segments, hints, MANIFEST, LOCK / LOCK.holder, and a checkpoint's copies: bit
//! flips, truncations, zeroed ranges, deletions. Open must never panic; it either recovers
//! exactly (a torn tail of the active segment, a rebuilt hint, a rewritten holder record) or
//! reports Corruption / Unsupported naming the damaged file. After a successful open every read
//! returns the model's value or a Corruption error, and `verify()` finds sealed-segment damage.
//! The fixture ends with a clean close, so its SYNCED record vouches for the whole active
//! segment: damage there is corruption. Half the active-segment cases first delete the record
//! (as a power loss may leave it stale), and then a damaged last frame is a legal torn tail.
//! The clean close also left the active segment's hint: half the active-segment cases delete it
//! (open scans, and must report the damage); the others keep it, and where the damage keeps the
//! file's length open trusts the hint as it trusts a sealed segment's (FORMAT.md, rule 6), so the
//! damage must be found by reads and `verify()` instead.
//!
//! The same sweep runs over an encrypted store (its KEY file among the targets: any damage to
//! it is Corruption naming it; a sealed value or hint that does not authenticate is damage like
//! a failed CRC).
//!
//! Knobs: `RABOSH_CORRUPTION_CASES` (default 5000; the encrypted sweep runs 2/5 of it), `RABOSH_CORRUPTION_SEED`.

mod common;

use common::{Model, contents, knob, log_end, opts, random_batch};
use rabosh::{Error, Store, Vfs};
use rabosh_testkit::{Rng, SimFs};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::{Path, PathBuf};
use std::sync::Arc;

const DIR: &str = "/d/store";
const CP: &str = "/d/cp";

struct Fixture {
    fs: SimFs,
    models: Vec<Model>,
    /// Commits before the final active segment, and its length after each later commit.
    active: PathBuf,
    active_base: u64,
    active_ends: Vec<u64>,
    cp_seq: u64,
    encrypted: bool,
}

fn open(fs: &SimFs, dir: &str, encrypted: bool) -> rabosh::Result<Store> {
    let encryption = encrypted.then(|| rabosh::Encryption::new([0x5C; 32]));
    Store::open(dir, rabosh::Options { encryption, ..opts(Arc::new(fs.clone()) as Arc<dyn Vfs>, 1500) })
}

fn fixture(encrypted: bool) -> Fixture {
    let fs = SimFs::new();
    fs.set_hard_links(false); // the checkpoint holds real copies
    let store = open(&fs, DIR, encrypted).unwrap();
    let mut rng = Rng::new(42);
    let mut models = vec![Model::new()];
    let mut ends = Vec::new();
    let commit = |models: &mut Vec<Model>, rng: &mut Rng, ends: &mut Vec<(PathBuf, u64)>| {
        let mut m = models.last().unwrap().clone();
        let seq = models.len() as u64;
        store.write(random_batch(rng, &mut m, seq)).unwrap();
        models.push(m);
        let d = Path::new(DIR);
        let seg = d.join(fs.names(d).into_iter().filter(|n| n.ends_with(".seg")).max().unwrap());
        let len = log_end(&fs.read_file(&seg).unwrap());
        ends.push((seg, len));
    };
    for _ in 0..20 {
        commit(&mut models, &mut rng, &mut ends);
    }
    store.compact().unwrap();
    for _ in 0..12 {
        commit(&mut models, &mut rng, &mut ends);
    }
    let cp_seq = store.checkpoint(CP).unwrap().seq;
    // Enough commits after the last roll-over that the active segment holds several.
    for _ in 0..60 {
        commit(&mut models, &mut rng, &mut ends);
        let last = &ends.last().unwrap().0;
        if ends.iter().rev().take_while(|(p, _)| p == last).count() >= 4 {
            break;
        }
    }
    drop(store);
    let active = ends.last().unwrap().0.clone();
    let active_ends: Vec<u64> = ends.iter().filter(|(p, _)| *p == active).map(|(_, l)| *l).collect();
    let active_base = (models.len() - 1 - active_ends.len()) as u64;
    assert!(active_ends.len() >= 2, "the fixture's active segment must hold several commits");
    let kinds = fs.names(Path::new(DIR));
    assert!(kinds.iter().filter(|n| n.ends_with(".seg")).count() >= 4, "{kinds:?}");
    let hint = active.with_extension("hint");
    assert!(kinds.iter().any(|n| Path::new(DIR).join(n) == hint), "a clean close leaves the active hint: {kinds:?}");
    Fixture { fs, models, active, active_base, active_ends, cp_seq, encrypted }
}

#[derive(Debug, Clone, Copy)]
enum Damage {
    Flip { at: usize, bit: u8 },
    Truncate(usize),
    Zero { at: usize, len: usize },
    Delete,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Active,
    SealedSegment,
    Hint,
    Manifest,
    Lock,
    /// The synced record: derived, its loss only makes recovery lenient.
    Synced,
    /// An encrypted store's wrapped data key: without it nothing opens.
    Key,
}

fn kind_of(path: &Path, f: &Fixture) -> Kind {
    let name = path.file_name().unwrap().to_str().unwrap();
    if path == f.active {
        Kind::Active
    } else if name.ends_with(".seg") {
        Kind::SealedSegment
    } else if name.ends_with(".hint") {
        Kind::Hint
    } else if name == "MANIFEST" {
        Kind::Manifest
    } else if name == "SYNCED" {
        Kind::Synced
    } else if name == "KEY" {
        Kind::Key
    } else {
        assert!(name.starts_with("LOCK"), "unexpected file {name}");
        Kind::Lock
    }
}

fn damage(fs: &SimFs, path: &Path, d: Damage) -> usize {
    let mut b = fs.read_file(path).unwrap();
    let first = match d {
        Damage::Flip { at, bit } => {
            b[at] ^= 1 << bit;
            at
        }
        Damage::Truncate(len) => {
            b.truncate(len);
            len
        }
        Damage::Zero { at, len } => {
            let before = b.clone();
            b[at..at + len].fill(0);
            match before.iter().zip(&b).position(|(x, y)| x != y) {
                Some(p) => p,
                None => return usize::MAX, // zeroing zeros: no damage at all
            }
        }
        Damage::Delete => {
            fs.delete_file(path).unwrap();
            return 0;
        }
    };
    fs.write_file(path, &b).unwrap();
    first
}

fn pick_damage(rng: &mut Rng, len: usize) -> Damage {
    if len == 0 {
        return Damage::Delete;
    }
    match rng.below(10) {
        0..5 => Damage::Flip { at: rng.below(len as u64) as usize, bit: rng.below(8) as u8 },
        5..8 => Damage::Truncate(rng.below(len as u64) as usize),
        8 => {
            let at = rng.below(len as u64) as usize;
            Damage::Zero { at, len: 1 + rng.below((len - at) as u64).min(64) as usize }
        }
        _ => Damage::Delete,
    }
}

#[derive(Default, Debug)]
struct Tally {
    cases: u64,
    recovered_exactly: u64,
    torn_tail_dropped: u64,
    reported: u64,
    /// Active-segment damage below the synced record, reported instead of dropped.
    synced_damage_reported: u64,
    found_by_read_or_verify: u64,
}

/// Every read after a damaged open: the model's value or a Corruption error, never other bytes.
fn reads_are_true_or_refused(store: &Store, model: &Model, ctx: &str) -> bool {
    let snap = store.snapshot().unwrap();
    let listed: Vec<_> = snap.range(b"", None).map(|(k, m)| (k.to_vec(), m.to_vec())).collect();
    let want: Vec<_> = model.iter().map(|(k, (_, m))| (k.clone(), m.clone())).collect();
    assert_eq!(listed, want, "{ctx}: listing differs from the model");
    let mut refused = false;
    for (k, (v, _)) in model {
        match snap.get(k) {
            Ok(Some(got)) => assert_eq!(&got, v, "{ctx}: wrong value returned silently"),
            Ok(None) => panic!("{ctx}: a listed key has no value"),
            Err(Error::Corruption { .. }) => refused = true,
            Err(e) => panic!("{ctx}: read failed with {e}"),
        }
    }
    refused
}

fn one_case(f: &Fixture, rng: &mut Rng, tally: &mut Tally) {
    let in_cp = rng.below(4) == 0;
    let dir = if in_cp { CP } else { DIR };
    let names: Vec<String> =
        f.fs.names(Path::new(dir)).into_iter().filter(|n| n != "LOCK" || rng.below(2) == 0).collect();
    let name = &names[rng.below(names.len() as u64) as usize];
    let path = Path::new(dir).join(name);
    let fs = f.fs.fork();
    let len = fs.read_file(&path).unwrap().len();
    let d = pick_damage(rng, len);
    let kind = if in_cp && name.ends_with(".seg") { Kind::SealedSegment } else { kind_of(&path, f) };
    let ctx = format!("{} {d:?}", path.display());
    let first_bad = damage(&fs, &path, d);
    tally.cases += 1;
    let record_kept = kind != Kind::Active || rng.below(2) == 0;
    if !record_kept {
        fs.delete_file(&Path::new(dir).join("SYNCED")).unwrap();
    }
    let hint_kept = kind == Kind::Active && rng.below(2) == 0;
    if kind == Kind::Active && !hint_kept {
        let _ = fs.delete_file(&path.with_extension("hint"));
    }
    let kind = match d {
        Damage::Flip { .. } | Damage::Zero { .. } if hint_kept && record_kept => Kind::SealedSegment,
        _ => kind,
    };
    let target_seq = if in_cp { f.cp_seq } else { f.models.len() as u64 - 1 };

    let r = catch_unwind(AssertUnwindSafe(|| open(&fs, dir, f.encrypted)));
    let r = r.unwrap_or_else(|_| panic!("{ctx}: open panicked"));
    let store = match r {
        Err(Error::Corruption { file, .. } | Error::Unsupported { file, .. }) => {
            // A deleted MANIFEST is named too ("MANIFEST is missing but data files exist").
            assert!(file == path, "{ctx}: the error names {} instead", file.display());
            assert!(
                matches!(kind, Kind::Active | Kind::SealedSegment | Kind::Manifest | Kind::Key),
                "{ctx}: damage to a {kind:?} file is recoverable and must not fail open"
            );
            tally.reported += 1;
            if kind == Kind::Active && record_kept {
                tally.synced_damage_reported += 1;
            }
            return;
        }
        Err(e) => panic!("{ctx}: unexpected error {e}"),
        Ok(s) => s,
    };
    assert!(!(kind == Kind::Key && first_bad != usize::MAX), "{ctx}: damage to the key file must be reported");
    assert!(
        !(kind == Kind::Active && record_kept && first_bad != usize::MAX),
        "{ctx}: damage to a cleanly closed active segment must be reported, not dropped"
    );
    let seq = store.stats().seq;
    if kind == Kind::Active && !matches!(d, Damage::Delete) {
        // Intact frames before the first damaged byte are kept; the damaged one was the last
        // (otherwise open must have refused), so it and nothing else is dropped.
        let kept = f.active_ends.iter().filter(|&&e| e as usize <= first_bad).count() as u64;
        let expect = if first_bad == usize::MAX { target_seq } else { f.active_base + kept };
        assert_eq!(seq, expect, "{ctx}: recovered the wrong prefix");
        if seq < target_seq {
            tally.torn_tail_dropped += 1;
        }
    } else {
        assert_eq!(seq, target_seq, "{ctx}: open dropped commits silently");
    }
    let model = &f.models[seq as usize];
    let refused = reads_are_true_or_refused(&store, model, &ctx);
    let verified = store.verify();
    if kind == Kind::SealedSegment && first_bad != usize::MAX {
        match verified {
            Err(Error::Corruption { file, .. }) => assert_eq!(file, path, "{ctx}: verify names another file"),
            Err(e) => panic!("{ctx}: verify failed with {e}"),
            Ok(_) => panic!("{ctx}: verify missed damage in a sealed segment"),
        }
        tally.found_by_read_or_verify += 1;
    } else {
        verified.unwrap_or_else(|e| panic!("{ctx}: verify after exact recovery: {e}"));
        assert!(!refused, "{ctx}: a read failed after exact recovery");
        assert!(contents(&store).unwrap() == *model);
        tally.recovered_exactly += 1;
    }
}

#[test]
fn random_damage_is_recovered_exactly_or_reported_naming_the_file() {
    sweep(false);
}

#[test]
fn random_damage_to_an_encrypted_store_is_recovered_exactly_or_reported_naming_the_file() {
    sweep(true);
}

fn sweep(encrypted: bool) {
    let f = fixture(encrypted);
    // Sealing costs a debug build about three times the plain case's time per case.
    let cases =
        if encrypted { knob("RABOSH_CORRUPTION_CASES", 5000) * 2 / 5 } else { knob("RABOSH_CORRUPTION_CASES", 5000) };
    let mut rng = Rng::new(knob("RABOSH_CORRUPTION_SEED", 9));
    let mut tally = Tally::default();
    for _ in 0..cases {
        one_case(&f, &mut rng, &mut tally);
    }
    eprintln!("corruption (encrypted: {encrypted}): {tally:?}");
    assert!(
        tally.reported > 0
            && tally.recovered_exactly > 0
            && tally.torn_tail_dropped > 0
            && tally.found_by_read_or_verify > 0
            && tally.synced_damage_reported > 0
    );
}
