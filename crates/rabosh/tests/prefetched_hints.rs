//! Open reads the sealed segments' hints two at a time (src/hint_prefetch.rs: every other one
//! on a thread of its own) and consumes them in segment order. Over a plain store of several
//! sealed segments, each hint in turn missing, damaged or cut short — whichever thread read it —
//! open must answer exactly what was written: point reads from the hints (the lazy path) and
//! the listing (the map built from them), and a put after open lands beside the rest.

use rabosh::{Batch, Options, Store};
use std::collections::BTreeMap;
use std::path::Path;

fn opts() -> Options {
    Options { segment_bytes: 4096, ..Options::default() }
}

type Model = BTreeMap<Vec<u8>, (Vec<u8>, Vec<u8>)>;

fn key(i: u8) -> Vec<u8> {
    format!("/memories/notes/note{i:02}.md").into_bytes()
}

/// Puts over several segments (each sealed one gets a hint at rotation, the active one at
/// close), overwrites of early keys in later segments and a delete; returns what the store holds.
fn populate(dir: &Path) -> Model {
    let s = Store::open(dir, opts()).unwrap();
    let mut model = Model::new();
    let mut put = |s: &Store, i: u8, fill: u8| {
        let (value, meta) = (vec![fill; 1200], vec![i; 40]);
        let mut b = Batch::new();
        b.put(key(i), value.clone(), meta.clone());
        s.write(b).unwrap();
        model.insert(key(i), (value, meta));
    };
    for i in 0..14u8 {
        put(&s, i, b'a' + i);
    }
    // Later segments shadow earlier ones: a hint consumed for the wrong segment shows here.
    for i in [1u8, 4, 9] {
        put(&s, i, b'A' + i);
    }
    let mut b = Batch::new();
    b.delete(key(6));
    s.write(b).unwrap();
    model.remove(&key(6));
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

fn check(dir: &Path, model: &Model, what: &str) {
    let s = Store::open(dir, opts()).unwrap_or_else(|e| panic!("{what}: open failed: {e}"));
    let snap = s.snapshot().unwrap();
    for i in 0..14u8 {
        let got = snap.get(&key(i)).unwrap_or_else(|e| panic!("{what}: note{i}: {e}"));
        let brief = |v: Option<&Vec<u8>>| v.map(|v| (v.len(), v[0]));
        assert_eq!(brief(got.as_ref()), brief(model.get(&key(i)).map(|(v, _)| v)), "{what}: note{i}");
    }
    let listed: Vec<_> = snap.range(b"", None).map(|(k, m)| (k.to_vec(), m.to_vec())).collect();
    let want: Vec<_> = model.iter().map(|(k, (_, m))| (k.clone(), m.clone())).collect();
    assert_eq!(listed, want, "{what}: listing");
    drop(snap);
    let mut b = Batch::new();
    b.put(b"/memories/after.md".to_vec(), b"x".to_vec(), vec![0; 40]);
    s.write(b).unwrap_or_else(|e| panic!("{what}: put after open: {e}"));
    assert!(s.snapshot().unwrap().get(b"/memories/after.md").unwrap().is_some(), "{what}: put after open");
    // And gone again, so a reopen holds the model.
    let mut b = Batch::new();
    b.delete(b"/memories/after.md".to_vec());
    s.write(b).unwrap();
    s.close().unwrap();
}

fn sealed_hints(dir: &Path) -> Vec<String> {
    let mut hints: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".hint"))
        .collect();
    hints.sort();
    // The last is the active segment's (written at close), which open reads itself.
    hints.pop();
    hints
}

#[test]
fn every_sealed_hint_read_ahead_answers_as_written_or_is_rebuilt() {
    let tmp = tempfile::tempdir().unwrap();
    let orig = tmp.path().join("orig");
    let model = populate(&orig);
    let hints = sealed_hints(&orig);
    assert!(hints.len() >= 4, "several sealed segments, both threads' halves: {hints:?}");
    check(&orig, &model, "intact");

    let mut n = 0;
    for name in &hints {
        let bytes = std::fs::read(orig.join(name)).unwrap();
        let cases: Vec<(String, Option<Vec<u8>>)> = vec![
            (format!("{name}: missing"), None),
            (
                format!("{name}: middle byte flipped"),
                Some({
                    let mut b = bytes.clone();
                    b[bytes.len() / 2] ^= 0x10;
                    b
                }),
            ),
            (
                format!("{name}: last byte flipped"),
                Some({
                    let mut b = bytes.clone();
                    *b.last_mut().unwrap() ^= 0x01;
                    b
                }),
            ),
            (format!("{name}: cut in half"), Some(bytes[..bytes.len() / 2].to_vec())),
            (format!("{name}: empty"), Some(Vec::new())),
        ];
        for (what, b) in cases {
            let dir = tmp.path().join(format!("case{n}"));
            n += 1;
            copy_dir(&orig, &dir);
            match b {
                None => std::fs::remove_file(dir.join(name)).unwrap(),
                Some(b) => std::fs::write(dir.join(name), &b).unwrap(),
            }
            check(&dir, &model, &what);
            // Rebuilt by that open: the next open reads every hint ahead again.
            check(&dir, &model, &format!("{what}, reopened"));
            std::fs::remove_dir_all(&dir).unwrap();
        }
    }
}
