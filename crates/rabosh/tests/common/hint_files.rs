//! What the hint tests compare and handle: a store's answers, its hint files, a copy of it.

use rabosh::{Options, Store};
use std::path::Path;

/// Each key's value and metadata by point read, then the whole listing.
pub type Answers = (Vec<Option<(Vec<u8>, Vec<u8>)>>, Vec<(Vec<u8>, Vec<u8>)>);

/// The answers of the store at `dir` for the keys `keys` names, by point read first (before
/// anything builds the key directory), then the listing.
pub fn answers(dir: &Path, opts: Options, keys: impl Iterator<Item = Vec<u8>>) -> rabosh::Result<Answers> {
    let s = Store::open(dir, opts)?;
    let snap = s.snapshot()?;
    let mut points = Vec::new();
    for k in keys {
        points.push(match snap.get(&k)? {
            Some(v) => Some((v, snap.meta(&k)?.expect("a value has metadata"))),
            None => None,
        });
    }
    let listed = snap.range(b"", None).map(|(k, m)| (k.to_vec(), m.to_vec())).collect();
    drop(snap);
    s.close()?;
    Ok((points, listed))
}

pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

/// The hint files of the store at `dir`, by name in order.
pub fn hints(dir: &Path) -> Vec<String> {
    let mut h: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".hint"))
        .collect();
    h.sort();
    h
}
