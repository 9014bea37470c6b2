//! Nothing written reaches the disk readable: every byte of every file of an encrypted store,
//! after writes, renames, compaction, a checkpoint and a power loss (with the recovery after
//! it), holds no key, value or metadata fragment. The same workload on a plain store finds
//! them all (so the search itself can fail).

use rabosh::{Batch, Encryption, Options, Store, Vfs};
use rabosh_testkit::SimFs;
use std::path::Path;
use std::sync::Arc;

const DIR: &str = "/db";
const CP: &str = "/db-checkpoint";

fn options(fs: &SimFs, encrypted: bool) -> Options {
    Options {
        segment_bytes: 2048,
        vfs: Some(Arc::new(fs.clone()) as Arc<dyn Vfs>),
        encryption: encrypted.then(|| Encryption::new([0x42; 32])),
        ..Options::default()
    }
}

/// Path segments, contents and metadata, each distinctive enough that a hit is no accident.
fn fragments(i: usize) -> (String, String, String) {
    (
        format!("/memories/health/diagnosis-{i:03}.md"),
        format!("the patient reports symptom number {i:03} in detail"),
        format!("metadata-sha-{i:03}-abcdef"),
    )
}

/// Runs the workload on `fs`; returns what was written and the recovered post-crash filesystem.
fn workload(fs: &SimFs, encrypted: bool) -> (Vec<String>, SimFs) {
    let mut written = Vec::new();
    let s = Store::open(DIR, options(fs, encrypted)).unwrap();
    for i in 0..60 {
        let (k, v, m) = fragments(i);
        let mut b = Batch::new();
        b.put(k.clone(), v.clone(), m.clone());
        s.write(b).unwrap();
        written.extend([k, v, m]);
    }
    // Renames: delete the old path, put the new one (one commit).
    for i in 0..20 {
        let (k, v, m) = fragments(i);
        let to = format!("/memories/renamed/moved-{i:03}.md");
        let mut b = Batch::new();
        b.delete(k);
        b.put(to.clone(), v, m);
        s.write(b).unwrap();
        written.push(to);
    }
    s.compact().unwrap();
    s.checkpoint(CP).unwrap();
    for i in 60..70 {
        let (k, v, m) = fragments(i);
        let mut b = Batch::new();
        b.put(k.clone(), v.clone(), m.clone());
        s.write(b).unwrap();
        written.extend([k, v, m]);
    }
    // Power loss with the store open (no clean close), then recovery, a write and a clean close.
    let img = fs.crash(7);
    drop(s);
    let s = Store::open(DIR, options(&img, encrypted)).unwrap();
    let mut b = Batch::new();
    b.put("/memories/after-crash/secret-plan.md", "launch codes are hidden under the mat", "meta-after-crash");
    s.write(b).unwrap();
    written.extend(
        ["/memories/after-crash/secret-plan.md", "launch codes are hidden under the mat", "meta-after-crash"]
            .map(String::from),
    );
    s.close().unwrap();
    drop(s);
    let cp = Store::open(CP, options(&img, encrypted)).unwrap();
    assert!(cp.snapshot().unwrap().get(fragments(30).0.as_bytes()).unwrap().is_some());
    cp.close().unwrap();
    (written, img)
}

/// How many (file, fragment) pairs are found: every fragment and every path segment of it.
fn hits(fss: &[&SimFs], written: &[String]) -> Vec<String> {
    let mut needles: Vec<String> = written.to_vec();
    for w in written {
        needles.extend(w.split('/').filter(|p| p.len() >= 6).map(String::from));
    }
    let mut found = Vec::new();
    for fs in fss {
        for dir in [DIR, CP] {
            for name in fs.names(Path::new(dir)) {
                let path = Path::new(dir).join(&name);
                let Ok(bytes) = fs.read_file(&path) else { continue };
                for n in &needles {
                    if bytes.windows(n.len()).any(|w| w == n.as_bytes()) {
                        found.push(format!("{}: {n}", path.display()));
                    }
                }
            }
        }
    }
    found
}

#[test]
fn no_key_value_or_metadata_fragment_is_on_the_disk_of_an_encrypted_store() {
    let fs = SimFs::new();
    let (written, after) = workload(&fs, true);
    let found = hits(&[&fs, &after], &written);
    assert!(found.is_empty(), "{} plaintext fragments on disk, e.g. {:?}", found.len(), &found[..found.len().min(5)]);
}

#[test]
fn the_same_search_finds_every_fragment_in_a_plain_store() {
    let fs = SimFs::new();
    let (written, after) = workload(&fs, false);
    let found = hits(&[&fs, &after], &written);
    // The first 20 paths were renamed away and compacted out: erased from a plain store too.
    let erased: Vec<String> = (0..20).map(|i| fragments(i).0).collect();
    for w in written.iter().filter(|w| !erased.contains(w)) {
        assert!(found.iter().any(|f| f.ends_with(&format!(": {w}"))), "plain store: {w} not found");
    }
}
