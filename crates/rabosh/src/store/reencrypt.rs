//! Rewriting a closed store to a new encryption mode (plain ↔ encrypted, or a new data key).
//!
//! Under the store's exclusive lock: every live entry is copied into a new compacted segment
//! (sealed with the new data key, or plain) numbered `N` = the MANIFEST's `next_segment` (the
//! next open adds the active segment); then `KEY.next` is written (the mode that applies from
//! segment `N` on: the new KEY file, or "plain"); then the MANIFEST swap lists only the new
//! segments — the commit point; then `KEY.next` replaces `KEY` (or both go, for plain) and the
//! old segments are removed. Open settles a leftover `KEY.next` by the MANIFEST: if its first
//! segment is `N` or later the swap happened and `KEY.next` applies, otherwise it is dropped.
//! So a kill anywhere leaves a store that opens with `from` (before the swap) or `to` (after).

use crate::crypto::encryption::Encryption;
use crate::crypto::keyfile::{DataKey, KEY_NEXT, KEY_NEXT_TMP, encode_next, finish_next};
use crate::error::{Error, Result};
use crate::io::vfs::write_all_at;
use crate::log::format::{FRAME_HEADER, KIND_COMPACTED, PayloadBuilder, SEG_HEADER, encode_seg_header};
use crate::log::manifest::{Manifest, SegMeta};
use crate::log::record::{Rec, SegRecs};
use crate::log::segment::{hint_name, seg_name};
use crate::store::handle::Store;
use crate::store::options::Options;
use crate::store::writer::create_unlisted;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::Ordering;

/// Rewrites the closed store in `dir` in place from `from` to `to` (`None` = plain): plain to
/// encrypted, encrypted to plain, or encrypted under a fresh data key. Crash-safe: a kill at any
/// point leaves a store that opens with `from` or with `to`. The store must not be open
/// anywhere (`Locked` otherwise); `from` must open it (`WrongKey`, `KeyRequired`,
/// `NotEncrypted` otherwise, and nothing is written).
pub fn reencrypt(dir: &Path, from: Option<Encryption>, to: Option<Encryption>) -> Result<()> {
    reencrypt_with(dir, Options { encryption: from, create_if_missing: false, ..Options::default() }, to)
}

/// [`reencrypt`] through the filesystem (and other settings) of `options`, for tests.
#[doc(hidden)]
pub fn reencrypt_with(dir: &Path, options: Options, to: Option<Encryption>) -> Result<()> {
    let options = Options { shared: false, create_if_missing: false, ..options };
    let store = Store::open(dir, options)?;
    store.rewrite_encrypted(to)
}

impl Store {
    #[allow(clippy::needless_pass_by_value)] // the key is handed over: zeroized when this call drops it
    fn rewrite_encrypted(&self, to: Option<Encryption>) -> Result<()> {
        let mut w = self.writable()?;
        self.settle(&mut w)?;
        let vfs = &*self.vfs;
        let fsyncs = self.fsyncs();
        let cur = self.current.load_full();
        // A key directory that cannot be read whole (a hint page and its segment both damaged)
        // is refused before a file is made: counting it reads every hint page.
        cur.keys.totals()?;
        let number = w.manifest.next_segment;
        let dk = match &to {
            Some(_) => Some(DataKey::fresh()?),
            None => None,
        };
        let crypt = dk.as_ref().map(|d| d.crypt.clone());
        let path = self.dir.join(seg_name(number));

        // 1. The new segments, unlisted (a failure or a kill here leaves garbage the next open sweeps).
        let f = create_unlisted(vfs, &path)?;
        let io = |op, e| Error::io(op, &path, e);
        write_all_at(&*f, &encode_seg_header(KIND_COMPACTED, number, 0, crypt.is_some()), 0)
            .map_err(|e| io("write", e))?;
        let mut off = SEG_HEADER as u64;
        let mut recs = SegRecs::new();
        let mut pending = Vec::new();
        let mut pb = PayloadBuilder::new(KIND_COMPACTED, 0);
        let mut flush = |pb: PayloadBuilder,
                         pending: &mut Vec<(crate::log::record::Key, crate::log::record::Entry)>|
         -> Result<()> {
            let mut pb = pb;
            pb.set_seq(pending.iter().map(|(_, e)| e.seq).max().unwrap_or(0));
            let (frame, placed) = pb.seal(false, crypt.as_deref(), number, off)?;
            write_all_at(&*f, &frame, off).map_err(|e| Error::io("write", &path, e))?;
            let base = off + FRAME_HEADER as u64;
            for ((k, mut e), at) in pending.drain(..).zip(placed) {
                (e.seg, e.off, e.len, e.crc) = (number, base + at.rel as u64, at.len, at.crc);
                recs.insert(k, Rec { seq: e.seq, entry: Some(e) });
            }
            off += frame.len() as u64;
            Ok(())
        };
        // Streamed in key order from the directory's merge: no map of every key is built.
        let pins = crate::keydir::page_cache::Pins::default();
        for (k, v) in cur.keys.range(&pins, std::ops::Bound::Unbounded, std::ops::Bound::Unbounded)? {
            let e = v.entry().expect("a merge yields live puts only");
            let value = cur.segment(e.seg).expect("version holds its segments").read_value(&e)?;
            pb.put(e.seq, k, &value, e.meta.as_slice());
            pending.push((k.into(), e));
            if pb.buf.len() >= 1 << 20 {
                flush(std::mem::replace(&mut pb, PayloadBuilder::new(KIND_COMPACTED, 0)), &mut pending)?;
            }
        }
        if !pending.is_empty() {
            flush(pb, &mut pending)?;
        }
        f.sync_data().map_err(|e| io("fsync", e))?;
        fsyncs();
        drop(f);
        crate::log::hint::write(vfs, &self.dir, (number, off), &recs, &fsyncs, crypt.as_deref())?;
        // No active segment yet: one numbered past the old MANIFEST's `next_segment` would read
        // as a MANIFEST put back (recovery rule 3) if the swap never happens. The next open
        // creates it, in the new mode (rule 8, as for a checkpoint).

        // 2. What applies from segment `number` on, durable before the swap can be.
        let key_file = match (&to, &dk) {
            (Some(host), Some(dk)) => Some(crate::crypto::keyfile::encode(host, dk)?),
            _ => None,
        };
        let next = encode_next(number, key_file.as_deref());
        crate::io::replace::write_atomic(vfs, &self.dir, KEY_NEXT, KEY_NEXT_TMP, &next, &fsyncs)?;

        // 3. The commit point.
        let old = w.manifest.clone();
        let m = Manifest {
            next_segment: number + 1,
            segments: vec![SegMeta {
                number,
                kind: KIND_COMPACTED,
                sealed: true,
                first_seq: 0,
                last_seq: cur.seq,
                len: off,
            }],
            encrypted: to.is_some(),
        };
        m.write(vfs, &self.dir, &fsyncs)?;

        // 4. Settle the key files, then let go of the old segments and remove them, still
        // under the lock (no opener can be creating files now). This handle is closed.
        finish_next(vfs, &self.dir, &fsyncs)?;
        self.closed.store(true, Ordering::SeqCst);
        w.log = None;
        let seq = cur.seq;
        drop(cur);
        self.current.store(Arc::new(crate::keydir::map::Version::new(
            crate::keydir::map::KeyMap::new(),
            0,
            seq,
            Arc::new(Vec::new()),
        )));
        for sm in &old.segments {
            let _ = vfs.remove(&self.dir.join(seg_name(sm.number)));
            let _ = vfs.remove(&self.dir.join(hint_name(sm.number)));
        }
        let _ = vfs.sync_dir(&self.dir);
        w.synced = None;
        w.lock = None;
        Ok(())
    }
}
