//! `reencrypt`: plain → encrypted, encrypted → plain, encrypted → a new data key. A power loss
//! or a kill at every step of it (every state `SimFs` recorded: durable, random and
//! process-crash images) leaves a store that opens with the old mode or the new one, holding
//! exactly what it held; never neither.

mod common;

use common::{Model, contents, random_batch};
use rabosh::{Encryption, Options, Store, Vfs};
use rabosh_testkit::{Rng, SimFs};
use std::sync::Arc;

const DIR: &str = "/s";

fn opts(fs: &SimFs, key: Option<u8>) -> Options {
    Options {
        segment_bytes: 1024,
        vfs: Some(Arc::new(fs.clone()) as Arc<dyn Vfs>),
        encryption: key.map(|k| Encryption::new([k; 32])),
        ..Options::default()
    }
}

fn build(fs: &SimFs, key: Option<u8>) -> Model {
    let s = Store::open(DIR, opts(fs, key)).unwrap();
    let mut rng = Rng::new(5);
    let mut model = Model::new();
    for seq in 1..=40 {
        s.write(random_batch(&mut rng, &mut model, seq)).unwrap();
        if seq == 25 {
            s.compact().unwrap();
        }
    }
    s.close().unwrap();
    model
}

/// Opens `fs` with `from` or else `to`; returns which worked.
fn open_either(fs: &SimFs, from: Option<u8>, to: Option<u8>, model: &Model, what: &str) -> &'static str {
    let (s, which) = match Store::open(DIR, opts(fs, from)) {
        Ok(s) => (s, "from"),
        Err(e1) => match Store::open(DIR, opts(fs, to)) {
            Ok(s) => (s, "to"),
            Err(e2) => panic!("{what}: opens with neither key: {e1} / {e2}"),
        },
    };
    assert!(contents(&s).unwrap() == *model, "{what}: contents differ ({which})");
    s.close().unwrap();
    which
}

fn every_crash_opens_with_one_mode(from: Option<u8>, to: Option<u8>) {
    let fs = SimFs::new();
    let model = build(&fs, from);
    fs.set_capture(true);
    rabosh::reencrypt_with(std::path::Path::new(DIR), opts(&fs, from), to.map(|k| Encryption::new([k; 32]))).unwrap();
    fs.set_capture(false);
    let captures = fs.take_captures();
    assert!(captures.len() > 10, "{} steps recorded", captures.len());
    let mut seen = std::collections::BTreeMap::new();
    let mut rng = Rng::new(11);
    for c in &captures {
        for (i, img) in [c.durable_image(), c.image(rng.next_u64()), c.process_crash_image()].into_iter().enumerate() {
            let what = format!("{from:?} -> {to:?}, step {}, image {i}", c.step);
            *seen.entry(open_either(&img, from, to, &model, &what)).or_insert(0) += 1;
        }
    }
    // The finished rewrite opens with `to` only (unless both are the same host key).
    let s = Store::open(DIR, opts(&fs, to)).unwrap();
    assert!(contents(&s).unwrap() == model);
    assert_eq!(s.is_encrypted(), to.is_some());
    s.close().unwrap();
    if from != to {
        assert!(Store::open(DIR, opts(&fs, from)).is_err(), "the old mode still opens the rewritten store");
    }
    assert!(seen.len() == 2 || from == to, "crash states seen: {seen:?}");
    eprintln!("{from:?} -> {to:?}: {seen:?}");
}

#[test]
fn plain_to_encrypted_survives_a_crash_at_every_step() {
    every_crash_opens_with_one_mode(None, Some(1));
}

#[test]
fn encrypted_to_plain_survives_a_crash_at_every_step() {
    every_crash_opens_with_one_mode(Some(1), None);
}

#[test]
fn a_new_data_key_under_a_new_host_key_survives_a_crash_at_every_step() {
    every_crash_opens_with_one_mode(Some(1), Some(2));
}

#[test]
fn a_wrong_from_key_is_refused_and_writes_nothing() {
    let fs = SimFs::new();
    build(&fs, Some(1));
    let before: Vec<_> = fs.names(std::path::Path::new(DIR));
    let e = rabosh::reencrypt_with(std::path::Path::new(DIR), opts(&fs, Some(9)), None).unwrap_err();
    assert_eq!(e.code(), "RABOSH_WRONG_KEY");
    assert_eq!(fs.names(std::path::Path::new(DIR)), before);
}
