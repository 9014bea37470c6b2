//! A sealed value moved within its segment — two values of one length swapped in place, as a
//! bad sector remap, a buggy copy or an attacker with write access to the disk might — never
//! answers as the other key's value: the offset in each value's associated data makes it fail
//! (Corruption). Found through `sealed_blobs`, which walks the files as FORMAT.md lays them out.

use rabosh::{Batch, Encryption, Options, StdFs, Store};
use rabosh_testkit::sealed_blobs;

fn opts() -> Options {
    Options { encryption: Some(Encryption::new([5; 32])), ..Options::default() }
}

#[test]
fn a_value_swapped_with_another_of_its_length_does_not_open() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("s");
    let s = Store::open(&dir, opts()).unwrap();
    for (k, v) in [("a", b'A'), ("b", b'B')] {
        let mut b = Batch::new();
        b.put(k.as_bytes().to_vec(), vec![v; 200], vec![]);
        s.write(b).unwrap();
    }
    s.close().unwrap();

    let values: Vec<_> = sealed_blobs(&StdFs, &dir, &Encryption::new([5; 32]))
        .unwrap()
        .into_iter()
        .filter(|b| b.file.ends_with(".seg") && b.bytes.len() == 200 + 40)
        .collect();
    assert_eq!(values.len(), 2, "the two sealed values: {values:?}");
    assert_eq!(values[0].file, values[1].file);
    let path = dir.join(&values[0].file);
    let mut bytes = std::fs::read(&path).unwrap();
    let (x, y) = (values[0].offset as usize, values[1].offset as usize);
    bytes[x..x + 240].copy_from_slice(&values[1].bytes);
    bytes[y..y + 240].copy_from_slice(&values[0].bytes);
    std::fs::write(&path, &bytes).unwrap();

    let s = Store::open(&dir, opts()).unwrap();
    let snap = s.snapshot().unwrap();
    for k in ["a", "b"] {
        match snap.get(k.as_bytes()) {
            Err(e) => assert!(e.to_string().contains("authenticate"), "{k}: {e}"),
            Ok(v) => panic!("{k}: a moved value answered: {:?}", v.map(|v| v[0] as char)),
        }
    }
}
