//! Open: lock, read MANIFEST, load each segment (hint or scan), cut a torn tail of the active
//! segment, sweep our own orphans, publish the first version.

use crate::crypto::crypt::Crypt;
use crate::error::{Error, Result};
use crate::io::vfs::{OpenMode, StdFs, Vfs};
use crate::keydir::map::{ActiveRecs, Keys, Version, build_map};
use crate::keydir::paged_run::Rescan;
use crate::keydir::runs::Runs;
use crate::log::format::{KIND_COMPACTED, KIND_LOG, SEG_HEADER};
use crate::log::hint_rec::ActiveTail;
use crate::log::manifest::{MANIFEST, MANIFEST_TMP, Manifest, SegMeta};
use crate::log::record::{Key, Rec};
use crate::log::segment::{ScanMode, Segment, check_header, parse_numbered, scan, seg_name};
use crate::log::synced::{SyncedFile, SyncedPoint};
use crate::store::handle::Store;
use crate::store::hint_source::{Source, hint_records, migrate};
use crate::store::options::Options;
use crate::store::writer::{ActiveLog, Counters, Writer, create_log_segment};
use arc_swap::ArcSwap;
use std::collections::HashSet;
use std::path::Path;
use std::sync::Arc;
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

/// Files other programs drop into directories; never ours, never an error.
fn foreign(name: &str) -> bool {
    name.starts_with("._") || matches!(name, ".DS_Store" | "Thumbs.db" | "desktop.ini")
}

fn ours_but_not_data(name: &str) -> bool {
    matches!(
        name,
        crate::io::lock::LOCK
            | crate::store::shared::WRITER
            | crate::io::lock::HOLDER
            | crate::io::lock::HOLDER_TMP
            | MANIFEST_TMP
            | crate::log::synced::SYNCED
            | crate::crypto::keyfile::KEY
            | crate::crypto::keyfile::KEY_TMP
            | crate::crypto::keyfile::KEY_NEXT
            | crate::crypto::keyfile::KEY_NEXT_TMP
    )
}

impl Store {
    /// Create or open the store in `dir`.
    pub fn open(dir: impl AsRef<Path>, options: Options) -> Result<Store> {
        open(dir.as_ref(), options)
    }
}

fn open(dir: &Path, options: Options) -> Result<Store> {
    let vfs: Arc<dyn Vfs> = options.vfs.clone().unwrap_or_else(|| Arc::new(StdFs));
    // Checked before anything (directory, LOCK) is created. A checkpoint writes its MANIFEST
    // last, so a killed one is refused here too.
    if !options.create_if_missing && !manifest_exists(&*vfs, dir)? {
        return Err(Error::NotAStore { dir: dir.to_path_buf() });
    }
    // A directory that is no store and cannot become one is refused before LOCK or WRITER is
    // created in it: a refused open writes nothing. (Checked again under the lock below; what
    // refuses here is a file no opener removes, so the early answer is the late one.)
    if let Ok(names) = vfs.list(dir)
        && !names.iter().any(|n| n == MANIFEST)
    {
        refuse_non_store(dir, &names)?;
    }
    // The key is judged before anything is created or locked: a wrong key, a missing one or a
    // key for a plain store writes nothing. (Judged again under the lock below, where a
    // `reencrypt` that finished meanwhile is seen.)
    let is_store = |vfs: &dyn Vfs| manifest_exists(vfs, dir);
    crate::store::keys::resolve(&*vfs, dir, &options, is_store(&*vfs)?)?;
    crate::io::vfs::create_dir_durable(&*vfs, dir).map_err(|e| Error::io("create directory", dir, e))?;
    let lock =
        if options.shared { crate::io::lock::acquire_shared(&vfs, dir)? } else { crate::io::lock::acquire(&vfs, dir)? };
    let shared = if options.shared {
        Some(crate::store::shared::SharedState::open(&vfs, dir, options.lock_timeout)?)
    } else {
        None
    };
    // Shared: nobody commits while open reads, cuts a torn tail or sweeps leftovers. A holder
    // that does not let go within the lock timeout fails the open with `Busy`.
    let held = match &shared {
        Some(sh) => Some(sh.lock_file(std::time::Instant::now())?),
        None => None,
    };
    let counters = Arc::new(Counters::default());
    let fsyncs = || counters.fsync();
    let names = vfs.list(dir).map_err(|e| Error::io("list", dir, e))?;
    let keys_state = crate::store::keys::resolve(&*vfs, dir, &options, names.iter().any(|n| n == MANIFEST))?;

    if !names.iter().any(|n| n == MANIFEST) {
        refuse_non_store(dir, &names)?;
        // The KEY file first: the MANIFEST makes the directory a store, and an encrypted one
        // must never be without its key. A plain store drops a killed create's KEY.
        match &keys_state {
            crate::store::keys::KeyState::Create(dk) => {
                let host = options.encryption.as_ref().expect("a store is created encrypted only with a key");
                crate::crypto::keyfile::write(&*vfs, dir, &crate::crypto::keyfile::encode(host, dk)?, &fsyncs)?;
            }
            crate::store::keys::KeyState::Plain if names.iter().any(|n| n == crate::crypto::keyfile::KEY) => {
                let key = dir.join(crate::crypto::keyfile::KEY);
                vfs.remove(&key).map_err(|e| Error::io("remove", &key, e))?;
            }
            _ => {}
        }
        let encrypted = matches!(keys_state, crate::store::keys::KeyState::Create(_));
        Manifest { next_segment: 1, segments: Vec::new(), encrypted }.write(&*vfs, dir, &fsyncs)?;
    }
    if names.iter().any(|n| n == MANIFEST) {
        crate::store::keys::settle_next(&*vfs, dir, &fsyncs)?;
    }
    let crypt = keys_state.crypt();
    let mut manifest = Manifest::read(&*vfs, dir)?;
    check_shape(&manifest, &dir.join(MANIFEST))?;

    let synced =
        SyncedFile::open(&*vfs, dir).map_err(|e| Error::io("open", dir.join(crate::log::synced::SYNCED), e))?;
    let synced_point = synced.read();
    check_not_rolled_back(&*vfs, dir, &names, &manifest, synced_point)?;
    if let Some(sm) = unlisted_later_commits(&*vfs, dir, &names, &manifest)? {
        // The MANIFEST a checkpoint wrote, put back: its active segment is the one the store
        // kept writing to. Listed again before anything is swept; a crash before this write
        // leaves the same MANIFEST and the same segment, so the next open does the same.
        manifest.segments.push(sm);
        manifest.write(&*vfs, dir, &fsyncs)?;
    }
    let Loaded { keys, seq, mut disk, mut segments, mut log } =
        load(&vfs, dir, &manifest, &synced, options.strict, &counters, crypt.as_ref())?;
    sweep(&*vfs, dir, &names, &manifest);

    if log.is_none() {
        let number = manifest.next_segment;
        let mut m = manifest.clone();
        m.next_segment += 1;
        let seg = create_log_segment(&vfs, dir, number, seq + 1, &fsyncs, crypt.clone())?;
        m.segments.push(SegMeta { number, kind: KIND_LOG, sealed: false, first_seq: seq + 1, last_seq: 0, len: 0 });
        m.write(&*vfs, dir, &fsyncs)?;
        manifest = m;
        disk += SEG_HEADER as u64;
        segments.push(seg.clone());
        log = Some(ActiveLog::fresh(seg));
    }
    counters.disk_bytes.store(disk, Ordering::Relaxed);
    segments.sort_by_key(|s| s.number);

    let version = Version { keys, seq, segments: Arc::new(segments) };
    if version.keys.is_built() {
        release_freed_memory();
    }
    let store = Store {
        dir: dir.to_path_buf(),
        options,
        vfs,
        current: ArcSwap::from_pointee(version),
        writer: Mutex::new(Writer { manifest, log, lock: Some(lock), synced: Some(synced) }),
        syncer: Mutex::new(()),
        counters,
        closed: AtomicBool::new(false),
        poisoned: std::sync::OnceLock::new(),
        shared,
        data_key: keys_state.into_data_key(),
    };
    // Still under the commit lock: what memory holds is what the files hold, so the first read
    // needs no catch-up (and no lock) unless another process commits meanwhile.
    store.note_seen();
    drop(held);
    Ok(store)
}

use crate::io::os::release_freed_memory;

/// What the segments of one MANIFEST hold.
pub(crate) struct Loaded {
    pub keys: Arc<Keys>,
    pub seq: u64,
    pub disk: u64,
    pub segments: Vec<Arc<Segment>>,
    pub log: Option<ActiveLog>,
}

/// Loads every segment `manifest` lists (hint or scan), cutting a torn tail of the active one.
/// Open runs it; in shared mode so does a catch-up that finds the MANIFEST replaced — always
/// under the commit lock, so the tail it may cut is never a commit being written.
pub(crate) fn load(
    vfs: &Arc<dyn Vfs>,
    dir: &Path,
    manifest: &Manifest,
    synced: &SyncedFile,
    strict: bool,
    counters: &Counters,
    crypt: Option<&Arc<Crypt>>,
) -> Result<Loaded> {
    let c = crypt.map(|c| &**c);
    let fsyncs = || counters.fsync();
    // Every segment's records, in segment order: the key directory is built from them once.
    let mut sources: Vec<Source> = Vec::with_capacity(manifest.segments.len());
    let mut seq = 0u64;
    let mut disk = 0u64;
    let mut segments = Vec::with_capacity(manifest.segments.len() + 1);
    let synced_point = synced.read();
    let mut log: Option<ActiveLog> = None;
    for sm in &manifest.segments {
        let path = dir.join(seg_name(sm.number));
        let mode = if sm.sealed { OpenMode::Read } else { OpenMode::ReadWrite };
        let f = vfs.open(&path, mode).map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                Error::Corruption {
                    file: path.clone(),
                    offset: 0,
                    reason: "segment listed in MANIFEST is missing".into(),
                }
            } else {
                Error::io("open", &path, e)
            }
        })?;
        let version = check_header(&*f, &path, (sm.number, sm.kind, crypt.is_some()), seq + 1)?;
        if sm.kind == KIND_LOG && sm.first_seq != seq + 1 {
            return Err(Error::Corruption {
                file: dir.join(MANIFEST),
                offset: 0,
                reason: format!("segment {} starts at seq {} after seq {seq}", sm.number, sm.first_seq),
            });
        }
        if sm.sealed {
            let len = f.len().map_err(|e| Error::io("stat", &path, e))?;
            if len != sm.len {
                return Err(Error::Corruption {
                    file: path,
                    offset: len.min(sm.len),
                    reason: format!("sealed segment is {len} bytes, MANIFEST says {}", sm.len),
                });
            }
            let rescan = Rescan {
                file: f.clone(),
                path: path.clone(),
                id: (sm.number, version, sm.kind),
                next_seq: seq + 1,
                len: sm.len,
                active: false,
                last_seq: (sm.kind == KIND_LOG).then_some(sm.last_seq),
                vfs: vfs.clone(),
                dir: dir.to_path_buf(),
            };
            if let Some(h) = crate::log::hint::read(&**vfs, dir, sm.number, c)
                .and_then(|b| hint_records(b, sm.number, sm.len, crypt, rescan))
            {
                if h.whole {
                    // Derived data in a layout no longer written: rewritten paged now, so the
                    // next open reads its directory only. Best effort: one that fails is
                    // read whole again next time.
                    let _ = migrate(&h.source, (&**vfs, dir), (sm.number, sm.len), None, &fsyncs, c);
                }
                sources.push(h.source);
            } else {
                let sc = scan(&*f, &path, (sm.number, version, sm.kind), seq + 1, ScanMode::Sealed, c)?;
                let found = sc.last_seq.unwrap_or(if sm.kind == KIND_LOG { seq } else { 0 });
                if sm.kind == KIND_LOG && found != sm.last_seq {
                    return Err(Error::Corruption {
                        file: path,
                        offset: sc.valid_len,
                        reason: format!("sealed segment ends at commit {found}, MANIFEST says {}", sm.last_seq),
                    });
                }
                // Best effort: a hint that cannot be written is rebuilt again next time.
                let _ = crate::log::hint::write(&**vfs, dir, (sm.number, sm.len), &sc.recs, &fsyncs, c);
                sources.push(Source::Recs(sc.recs.into_iter().map(|(k, r)| (k, r.entry)).collect()));
            }
            seq = sm.last_seq;
            disk += sm.len;
            segments.push(Arc::new(Segment::new(sm.number, version, dir, f, vfs.clone(), crypt.cloned())));
        } else {
            let durable = synced_point.filter(|p| p.segment == sm.number).map_or(0, |p| p.len);
            let a = if let Some(a) =
                active_hint((vfs, crypt), dir, (&f, &path, version), sm.number, durable, seq, &mut sources)
            {
                a
            } else {
                let sc = scan(
                    &*f,
                    &path,
                    (sm.number, version, KIND_LOG),
                    seq + 1,
                    ScanMode::Active { synced: durable, trust_zeros: false },
                    c,
                )?;
                if let Some(why) = &sc.torn {
                    if strict {
                        return Err(Error::Corruption {
                            file: path,
                            offset: sc.valid_len,
                            reason: format!("torn tail (strict mode refuses to drop it): {why}"),
                        });
                    }
                    // Cut before appending: every later commit must follow readable bytes.
                    f.set_len(sc.valid_len).map_err(|e| Error::io("truncate", &path, e))?;
                }
                let tail = ActiveTail { last_seq: sc.last_seq, ends_with_commit: sc.ends_with_commit };
                sources.push(Source::Recs(sc.recs.iter().map(|(k, r)| (k.clone(), r.entry.clone())).collect()));
                let dels = sc.recs.into_iter().filter(|(_, r)| r.entry.is_none()).map(|(k, r)| (k, r.seq)).collect();
                ActiveLoaded { dels, len: sc.valid_len, tail }
            };
            // What open reports must be durable: after a failed fsync (or a buffered writer's
            // exit) the frames just read may exist only in the page cache. Not when the synced
            // record already names every byte (the hint's condition): it is written only after
            // an fsync that covered them.
            if a.len != durable {
                f.sync_data().map_err(|e| Error::io("fsync", &path, e))?;
                counters.fsync();
                // Open's fsync made every commit read durable: record it (no fsync needed; a
                // failed write only means less protection against later damage).
                let _ = synced.write(SyncedPoint { segment: sm.number, len: a.len });
            }
            seq = a.tail.last_seq.unwrap_or(seq);
            disk += a.len;
            let seg = Arc::new(Segment::new(sm.number, version, dir, f, vfs.clone(), crypt.cloned()));
            segments.push(seg.clone());
            let mut recs = ActiveRecs::new();
            recs.extend(a.dels.into_iter().map(|(k, seq)| (k, Rec { seq, entry: None })));
            log = Some(ActiveLog {
                seg,
                len: a.len,
                recs,
                version,
                unsynced: false,
                // Open's fsync made that commit durable; a buffered writer marks it so.
                mark_first: a.tail.ends_with_commit,
                tail: None,
                synced_len: a.len,
                alloc: a.len,
            });
        }
    }

    Ok(Loaded { keys: Arc::new(key_directory(sources)?), seq, disk, segments, log })
}

/// What open knows of the active segment, from its hint or from a scan.
struct ActiveLoaded {
    /// Its deletes (its puts are in the records open collects), with their seqs.
    dels: Vec<(Key, u64)>,
    /// Bytes of intact frames (the whole file once a torn tail is cut).
    len: u64,
    tail: ActiveTail,
}

/// The active segment from the hint a clean close wrote, when that hint still describes it:
/// the synced record vouches for every byte of the file (a clean close's record, untouched
/// since: any later commit moves the length or the record) and the hint is intact, names this
/// segment at this length and carries seqs that continue from `prev_seq`. Anything else: `None`,
/// and open scans as it always did.
fn active_hint(
    (vfs, crypt): (&Arc<dyn Vfs>, Option<&Arc<Crypt>>),
    dir: &Path,
    (f, path, version): (&Arc<dyn crate::io::vfs::VFile>, &Path, u32),
    number: u64,
    durable: u64,
    prev_seq: u64,
    out: &mut Vec<Source>,
) -> Option<ActiveLoaded> {
    let len = f.len().ok()?;
    if len != durable || len <= SEG_HEADER as u64 {
        return None;
    }
    let rescan = Rescan {
        file: f.clone(),
        path: path.to_path_buf(),
        id: (number, version, KIND_LOG),
        next_seq: prev_seq + 1,
        len,
        active: true,
        last_seq: None,
        vfs: vfs.clone(),
        dir: dir.to_path_buf(),
    };
    let h =
        hint_records(crate::log::hint::read(&**vfs, dir, number, crypt.map(|c| &**c))?, number, len, crypt, rescan)?;
    let tail = h.tail?;
    let last = tail.last_seq.unwrap_or(prev_seq);
    let fresh = h.seqs.is_none_or(|(lo, hi)| lo > prev_seq && hi <= last);
    if last < prev_seq || !fresh {
        return None;
    }
    if h.whole {
        // Rewritten paged as a clean close writes it (not fsynced: a lost or torn one costs the
        // next open a scan). Best effort, as for a sealed segment's.
        let _ = migrate(&h.source, (&**vfs, dir), (number, len), Some(tail), &|| {}, crypt.map(|c| &**c));
    }
    out.push(h.source);
    Some(ActiveLoaded { dels: h.dels, len, tail })
}

/// The key directory of every segment's records (in segment order): left to build lazily
/// ([`Keys`]) when every segment came from a hint in key order, built now otherwise (after a
/// crash the active segment is scanned; correctness first, the lazy path is a clean close's).
pub(crate) fn key_directory(mut sources: Vec<Source>) -> Result<Keys> {
    // A segment that holds no records (a fresh active segment after a rotation) changes nothing.
    sources.retain(|s| !matches!(s, Source::Recs(r) if r.is_empty()));
    // No sources at all (a fresh store): lazy too, so what it is written stays in the delta
    // until sealed and an import into it never builds the map.
    if sources.iter().all(|s| matches!(s, Source::Run(_))) {
        let runs = sources.into_iter().map(|s| match s {
            Source::Run(r) => r,
            Source::Recs(_) => unreachable!("checked above"),
        });
        return Ok(Keys::lazy(Runs(runs.map(Arc::new).collect())));
    }
    let mut all = Vec::new();
    for s in sources {
        match s {
            Source::Run(r) => all.extend(r.records()?),
            Source::Recs(recs) => all.extend(recs),
        }
    }
    let (map, live) = build_map(all);
    Ok(Keys::built(map, live))
}

/// An older MANIFEST put back (a restored backup, a copied-over file) would silently roll the
/// store back and sweep the newer segments as leftovers. Segment numbers only grow, so newer
/// state shows: the synced record naming a segment the MANIFEST has not allocated yet, or a log
/// segment holding commits at or past `next_segment` (a crashed rotation leaves only a header
/// there; a crashed compaction leaves a compacted segment, a legitimate leftover).
fn check_not_rolled_back(
    vfs: &dyn Vfs,
    dir: &Path,
    names: &[String],
    m: &Manifest,
    synced: Option<SyncedPoint>,
) -> Result<()> {
    let rolled_back = |why: String| Error::Corruption {
        file: dir.join(MANIFEST),
        offset: 0,
        reason: format!("{why}: the MANIFEST is older than the store (put back?)"),
    };
    if let Some(p) = synced.filter(|p| p.segment >= m.next_segment) {
        return Err(rolled_back(format!(
            "the synced record names segment {} but the MANIFEST allocated only below {}",
            p.segment, m.next_segment
        )));
    }
    for n in names {
        let Some((num, "seg")) = parse_numbered(n) else { continue };
        if num < m.next_segment {
            continue;
        }
        // Only a real segment is evidence; a crashed rotation's header may be incomplete, and
        // anything else named like a segment is a leftover to sweep.
        let Some((hd, len)) = segment_header(vfs, dir, n)? else { continue };
        if num > m.next_segment || (hd.kind == KIND_LOG && len > SEG_HEADER as u64) {
            return Err(rolled_back(format!("segment {n} ({len} bytes) is newer than the MANIFEST")));
        }
    }
    Ok(())
}

/// The header and length of the segment file `name`; `None` when its header does not read or
/// decode (a crashed rotation's, or a file that only looks like a segment).
fn segment_header(vfs: &dyn Vfs, dir: &Path, name: &str) -> Result<Option<(crate::log::format::SegHeader, u64)>> {
    let path = dir.join(name);
    let f = vfs.open(&path, OpenMode::Read).map_err(|e| Error::io("open", &path, e))?;
    let len = f.len().map_err(|e| Error::io("stat", &path, e))?;
    let mut h = [0u8; SEG_HEADER];
    if crate::io::vfs::read_exact_at(&*f, &mut h, 0).is_err() {
        return Ok(None);
    }
    Ok(crate::log::format::decode_seg_header(&h).ok().map(|hd| (hd, len)))
}

/// A log segment the MANIFEST does not list but that holds commits it does not cover. Legitimate
/// unlisted log segments (a compaction's or a reencrypt's inputs whose unlink did not happen)
/// hold only commits older than the MANIFEST's active segment, or covered by its sealed ones.
/// A MANIFEST without an active segment is a checkpoint's (or a reencrypt's): the segment that
/// continues its last commit exactly is the active one a checkpoint left behind, returned to be
/// listed again. Any other such segment is later commits this MANIFEST cannot account for:
/// `Corruption` naming it, never a sweep.
fn unlisted_later_commits(vfs: &dyn Vfs, dir: &Path, names: &[String], m: &Manifest) -> Result<Option<SegMeta>> {
    let listed: HashSet<u64> = m.segments.iter().map(|s| s.number).collect();
    let active = m.segments.iter().find(|s| !s.sealed).map(|s| s.first_seq);
    let covered = m.segments.iter().map(|s| s.last_seq).max().unwrap_or(0);
    let mut later = Vec::new();
    for n in names {
        let Some((num, "seg")) = parse_numbered(n) else { continue };
        if listed.contains(&num) || num >= m.next_segment {
            continue; // what check_not_rolled_back let through at or past the counter is a leftover
        }
        let Some((hd, len)) = segment_header(vfs, dir, n)? else { continue };
        if hd.kind != KIND_LOG || len <= SEG_HEADER as u64 || hd.number != num {
            continue;
        }
        let older = match active {
            Some(first) => hd.first_seq < first,
            None => hd.first_seq <= covered,
        };
        if !older {
            later.push((num, hd.first_seq, dir.join(n), len));
        }
    }
    match later.as_slice() {
        [] => Ok(None),
        [(num, first, _, _)] if active.is_none() && *first == covered + 1 => {
            Ok(Some(SegMeta { number: *num, kind: KIND_LOG, sealed: false, first_seq: *first, last_seq: 0, len: 0 }))
        }
        [(_, first, path, len), ..] => Err(Error::Corruption {
            file: path.clone(),
            offset: 0,
            reason: format!(
                "an unlisted segment ({len} bytes) holds commits from seq {first} that the MANIFEST does not cover \
                 (an older MANIFEST put back?)"
            ),
        }),
    }
}

/// A MANIFEST that checksums but describes an impossible layout is damage, not a torn write.
pub(crate) fn check_shape(m: &Manifest, path: &Path) -> Result<()> {
    let bad = |reason: String| Error::Corruption { file: path.to_path_buf(), offset: 0, reason };
    let mut seen = HashSet::new();
    for (i, s) in m.segments.iter().enumerate() {
        if !seen.insert(s.number) || s.number >= m.next_segment {
            return Err(bad(format!("segment number {} repeated or beyond the counter", s.number)));
        }
        if !s.sealed && i + 1 != m.segments.len() {
            return Err(bad("an unsealed segment that is not the last".into()));
        }
        if s.kind == KIND_COMPACTED && (i != 0 || !s.sealed) {
            return Err(bad("a compacted segment that is not the first".into()));
        }
        if s.kind != KIND_LOG && s.kind != KIND_COMPACTED {
            return Err(bad(format!("unknown segment kind {}", s.kind)));
        }
    }
    Ok(())
}

/// [`sweep`] over what the directory holds now, but for the segments (and their hints) this
/// process still holds: those are marked retired and go when their last reader here lets go
/// (a checkpoint may be linking them, a group-commit leader checking one it fsynced). Called
/// under the commit lock (shared) and the writer mutex, after a MANIFEST swap: no process is
/// creating a file then, and none opens a segment the current MANIFEST does not name, so every
/// other unlisted one is garbage — a killed compaction's inputs included, which hold erased
/// values. Another process still reading one keeps its descriptor (unlinking an open file is
/// safe on Unix; Windows opens files with delete sharing).
pub(crate) fn sweep_unlisted(vfs: &dyn Vfs, dir: &Path, m: &Manifest) {
    if let Ok(mut names) = vfs.list(dir) {
        names.retain(|n| parse_numbered(n).is_none_or(|(num, _)| !crate::log::segment::held_here(dir, num)));
        sweep(vfs, dir, &names, m);
    }
}

/// A directory without a MANIFEST becomes a store only when it holds nothing of anyone's:
/// numbered data files there are a half-made checkpoint (`Corruption`), anything else not ours
/// and not foreign is someone's files (`InvalidArgument`).
/// Whether `dir` holds a MANIFEST. A `dir` that is a file, or a path through one, is no store and
/// can never become one: it is refused as a bad argument, not as the OS's "Not a directory" on a
/// MANIFEST path the caller never named.
fn manifest_exists(vfs: &dyn Vfs, dir: &Path) -> Result<bool> {
    vfs.exists(&dir.join(MANIFEST)).map_err(|e| match e.kind() {
        std::io::ErrorKind::NotADirectory => {
            Error::InvalidArgument(format!("{} is not a directory: a store is a directory", dir.display()))
        }
        _ => Error::io("stat", dir.join(MANIFEST), e),
    })
}

fn refuse_non_store(dir: &Path, names: &[String]) -> Result<()> {
    if let Some(n) = names.iter().find(|n| parse_numbered(n).is_some_and(|(_, ext)| ext != "hint.tmp")) {
        return Err(Error::Corruption {
            file: dir.join(MANIFEST),
            offset: 0,
            reason: format!("MANIFEST is missing but data file {n} exists (an unfinished checkpoint is not a store)"),
        });
    }
    if let Some(n) = names.iter().find(|n| !foreign(n) && !ours_but_not_data(n) && parse_numbered(n).is_none()) {
        return Err(Error::InvalidArgument(format!("{} is not empty ({n}) and holds no rabosh store", dir.display())));
    }
    Ok(())
}

/// Removes our own leftovers: temp files and numbered files the MANIFEST does not list
/// (a crash before a MANIFEST swap, or compaction inputs whose unlink did not happen).
fn sweep(vfs: &dyn Vfs, dir: &Path, names: &[String], m: &Manifest) {
    let listed: HashSet<u64> = m.segments.iter().map(|s| s.number).collect();
    for n in names {
        let stale = match parse_numbered(n) {
            Some((num, ext)) => ext == "hint.tmp" || !listed.contains(&num),
            None => matches!(
                n.as_str(),
                MANIFEST_TMP | crate::crypto::keyfile::KEY_TMP | crate::crypto::keyfile::KEY_NEXT_TMP
            ),
        };
        if stale {
            let _ = vfs.remove(&dir.join(n));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::keydir::map::{KeyMap, apply_one};
    use crate::log::metabuf::MetaBuf;
    use crate::log::record::Entry;

    /// An unlisted log segment with commits the MANIFEST does not cover is listed again only
    /// when it continues a MANIFEST without an active segment exactly; otherwise it is reported,
    /// naming it, never swept (unless the MANIFEST covers its commits).
    #[test]
    fn unlisted_later_commits_are_listed_again_or_reported() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path();
        let store = Store::open(dir, Options::default()).unwrap();
        let mut b = crate::store::batch::Batch::new();
        b.put(b"k".to_vec(), b"v".to_vec(), Vec::new());
        store.write(b).unwrap();
        store.close().unwrap();
        drop(store);
        let names = StdFs.list(dir).unwrap();
        let seg = |number, sealed, first_seq, last_seq| SegMeta {
            number,
            kind: KIND_LOG,
            sealed,
            first_seq,
            last_seq,
            len: 0,
        };
        // A checkpoint's MANIFEST of the empty store: segment 1 continues it (from seq 1).
        let cp = Manifest { next_segment: 2, segments: Vec::new(), encrypted: false };
        assert_eq!(unlisted_later_commits(&StdFs, dir, &names, &cp).unwrap(), Some(seg(1, false, 1, 0)));
        // An active segment listed from seq 1: segment 1 holds commits it cannot account for.
        let active = Manifest { next_segment: 9, segments: vec![seg(8, false, 1, 0)], encrypted: false };
        match unlisted_later_commits(&StdFs, dir, &names, &active) {
            Err(Error::Corruption { file, .. }) => assert_eq!(file, dir.join(seg_name(1))),
            other => panic!("expected corruption naming segment 1, got {other:?}"),
        }
        // Covered (a compaction's input left behind): a leftover, not evidence.
        let covered = Manifest { next_segment: 9, segments: vec![seg(8, true, 0, 1)], encrypted: false };
        assert_eq!(unlisted_later_commits(&StdFs, dir, &names, &covered).unwrap(), None);
    }

    /// The bulk build gives the same map and live bytes as applying each segment's records in
    /// turn (the way commits landed), whatever the mix of puts, overwrites and deletes.
    #[test]
    fn build_map_agrees_with_applying_records_one_by_one() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut rnd = |n: u64| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x % n
        };
        for keys in [0u64, 1, 2, 15, 16, 17, 33, 500, 2000] {
            let mut all = Vec::new();
            let (mut model, mut live) = (KeyMap::new(), 0u64);
            let mut seq = 0;
            for seg in 1..=4u64 {
                let mut run = std::collections::BTreeMap::new();
                for _ in 0..keys {
                    seq += 1;
                    let key: Key = format!("k{:05}", rnd(keys.max(1) * 2)).into_bytes().into();
                    let entry = (rnd(4) != 0).then(|| Entry {
                        seq,
                        meta: MetaBuf::new(&seq.to_le_bytes()),
                        seg,
                        off: 40 + seq,
                        len: rnd(100) as u32,
                        crc: 0,
                    });
                    run.insert(key, entry);
                }
                for (k, e) in &run {
                    apply_one(&mut model, &mut live, k.clone(), e.clone());
                }
                all.extend(run);
            }
            let (map, built_live) = build_map(all);
            assert_eq!(map, model, "{keys} keys");
            assert_eq!(built_live, live, "{keys} keys");
        }
    }
}
