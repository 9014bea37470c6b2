//! An encrypted store's hint files are trusted only through their AEAD tag (open skips the
//! plain hint's CRC there: the tag covers it). Every byte of every sealed hint flipped, and
//! every hint cut short, must read as a missing hint and be rebuilt from its segment: the
//! lazy point reads and the listing then answer exactly what was written, never a wrong or
//! missing key.

use rabosh::{Batch, Encryption, Options, Store};
use std::collections::BTreeMap;
use std::path::Path;

fn opts() -> Options {
    Options { encryption: Some(Encryption::new([3; 32])), segment_bytes: 4096, ..Options::default() }
}

type Model = BTreeMap<Vec<u8>, (Vec<u8>, Vec<u8>)>;

/// Puts over several segments (each sealed one gets a hint, the active one at close), an
/// overwrite and a delete; returns what the store holds.
fn populate(dir: &Path) -> Model {
    let s = Store::open(dir, opts()).unwrap();
    let mut model = Model::new();
    for i in 0..7u8 {
        let key = format!("/memories/health/note{i}.md").into_bytes();
        let (value, meta) = (vec![b'a' + i; 1500], vec![i; 40]);
        let mut b = Batch::new();
        b.put(key.clone(), value.clone(), meta.clone());
        s.write(b).unwrap();
        model.insert(key, (value, meta));
    }
    let mut b = Batch::new();
    b.delete(b"/memories/health/note2.md".to_vec());
    s.write(b).unwrap();
    model.remove(&b"/memories/health/note2.md"[..]);
    s.close().unwrap();
    model
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), to.join(e.file_name())).unwrap();
    }
}

/// Opens `dir` and checks every key by point read (the lazy path, from the hints) before the
/// listing (which builds the map).
fn check(dir: &Path, model: &Model, what: &str) {
    let s = Store::open(dir, opts()).unwrap_or_else(|e| panic!("{what}: open failed: {e}"));
    let snap = s.snapshot().unwrap();
    for i in 0..7u8 {
        let key = format!("/memories/health/note{i}.md").into_bytes();
        let got = snap.get(&key).unwrap_or_else(|e| panic!("{what}: note{i}: {e}"));
        // (length, first byte): enough to tell the values apart, short enough to print.
        let brief = |v: Option<&Vec<u8>>| v.map(|v| (v.len(), v[0]));
        assert_eq!(brief(got.as_ref()), brief(model.get(&key).map(|(v, _)| v)), "{what}: note{i}");
    }
    let listed: Vec<_> = snap.range(b"", None).map(|(k, m)| (k.to_vec(), m.to_vec())).collect();
    let want: Vec<_> = model.iter().map(|(k, (_, m))| (k.clone(), m.clone())).collect();
    assert_eq!(listed, want, "{what}: listing");
    drop(snap);
    s.close().unwrap();
}

#[test]
fn a_damaged_or_cut_sealed_hint_is_rebuilt_never_believed() {
    let tmp = tempfile::tempdir().unwrap();
    let orig = tmp.path().join("orig");
    let model = populate(&orig);
    let mut hints: Vec<_> = std::fs::read_dir(&orig)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".hint"))
        .collect();
    hints.sort();
    assert!(hints.len() >= 3, "sealed segments' hints and the active one's: {hints:?}");
    check(&orig, &model, "intact");

    let mut n = 0;
    for name in &hints {
        let bytes = std::fs::read(orig.join(name)).unwrap();
        let damaged = (0..bytes.len()).map(|i| {
            let mut b = bytes.clone();
            b[i] ^= 0x10;
            (format!("{name}: byte {i} flipped"), b)
        });
        let cut = [0, 8, 31, 32, 47, 48, bytes.len() / 2, bytes.len() - 1]
            .into_iter()
            .map(|len| (format!("{name}: cut to {len} bytes"), bytes[..len].to_vec()));
        for (what, b) in damaged.chain(cut) {
            let dir = tmp.path().join(format!("case{n}"));
            n += 1;
            copy_dir(&orig, &dir);
            std::fs::write(dir.join(name), &b).unwrap();
            check(&dir, &model, &what);
            std::fs::remove_dir_all(&dir).unwrap();
        }
    }
}
