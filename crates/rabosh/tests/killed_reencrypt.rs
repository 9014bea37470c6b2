//! `reencrypt` and `rotate_key` in a real process SIGKILLed at the steps that matter: just
//! before the MANIFEST swap, between the swap and `KEY.next`'s promotion to `KEY`, and after the
//! promotion (before `KEY.next` is removed). Afterwards the store opens with the old key (before
//! the swap) or the new one (after it), holding exactly what it held; never neither. Own `main`
//! (harness = false): the binary re-executes itself as the child, whose filesystem announces the
//! chosen step on stdout and then waits to be killed.

#[macro_use]
mod common;
use common::{Model, contents, read_line, spawn};

use rabosh::{Batch, Encryption, Options, StdFs, Store, Vfs};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

/// Where the child stops.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Point {
    /// `MANIFEST.tmp` written, not yet renamed over `MANIFEST`.
    BeforeSwap,
    /// `MANIFEST` swapped; `KEY.next` not yet promoted.
    AfterSwap,
    /// `KEY` replaced (or removed, for plain) from `KEY.next`, which is still there; for a
    /// rotation, the new `KEY` renamed into place.
    AfterPromotion,
    /// A rotation's new `KEY.tmp` written, not yet renamed over `KEY`.
    BeforeKey,
}

impl Point {
    fn parse(s: &str) -> Point {
        match s {
            "before-swap" => Point::BeforeSwap,
            "after-swap" => Point::AfterSwap,
            "after-promotion" => Point::AfterPromotion,
            "before-key" => Point::BeforeKey,
            _ => panic!("unknown point {s}"),
        }
    }
}

/// The real filesystem, hanging at `point`. Armed once `KEY.next` is in place (so the open that
/// precedes the rewrite, which may write a MANIFEST of its own, passes), or from the start for a
/// rotation (which writes `KEY` alone).
#[derive(Debug)]
struct HangAt {
    point: Point,
    armed: AtomicBool,
}

fn name(p: &Path) -> &str {
    p.file_name().and_then(|n| n.to_str()).unwrap_or("")
}

impl HangAt {
    fn hang() {
        println!("HANGING");
        std::io::stdout().flush().unwrap();
        std::thread::sleep(std::time::Duration::from_secs(120));
        panic!("not killed");
    }
}

impl Vfs for HangAt {
    std_fs_except_rename_and_remove!();
    fn rename(&self, from: &Path, to: &Path) -> std::io::Result<()> {
        let armed = self.armed.load(Ordering::SeqCst);
        if armed
            && ((self.point == Point::BeforeSwap && name(to) == "MANIFEST")
                || (self.point == Point::BeforeKey && name(to) == "KEY"))
        {
            Self::hang();
        }
        StdFs.rename(from, to)?;
        match name(to) {
            "KEY.next" => self.armed.store(true, Ordering::SeqCst),
            "MANIFEST" if armed && self.point == Point::AfterSwap => Self::hang(),
            "KEY" if armed && self.point == Point::AfterPromotion => Self::hang(),
            _ => {}
        }
        Ok(())
    }
    fn remove(&self, path: &Path) -> std::io::Result<()> {
        StdFs.remove(path)?;
        // Decrypting promotes "plain" by removing KEY.
        if self.armed.load(Ordering::SeqCst) && self.point == Point::AfterPromotion && name(path) == "KEY" {
            Self::hang();
        }
        Ok(())
    }
}

/// "-" is plain; a digit is the key of 32 such bytes.
fn key(s: &str) -> Option<Encryption> {
    s.parse::<u8>().ok().map(|k| Encryption::new([k; 32]))
}

fn opts(k: Option<Encryption>) -> Options {
    Options { encryption: k, ..Options::default() }
}

/// `child <dir> reencrypt|rotate <point> <from> <to>`.
fn child(args: &[String]) {
    let dir = PathBuf::from(&args[0]);
    let vfs = Arc::new(HangAt { point: Point::parse(&args[2]), armed: AtomicBool::new(args[1] == "rotate") });
    let options = Options { vfs: Some(vfs), ..opts(key(&args[3])) };
    match args[1].as_str() {
        "reencrypt" => rabosh::reencrypt_with(&dir, options, key(&args[4])).unwrap(),
        _ => Store::open(&dir, options).unwrap().rotate_key(key(&args[4]).unwrap()).unwrap(),
    }
    println!("FINISHED");
}

fn build(dir: &Path, from: &str) -> Model {
    let s = Store::open(dir, opts(key(from))).unwrap();
    for i in 0..60u32 {
        let mut b = Batch::new();
        b.put(
            format!("k{:03}", i % 40).into_bytes(),
            format!("value {i} of the store").repeat(1 + i as usize % 7),
            vec![i as u8],
        );
        s.write(b).unwrap();
        if i == 30 {
            s.compact().unwrap();
        }
    }
    let model = contents(&s).unwrap();
    s.close().unwrap();
    model
}

/// Kills the child at `point` of `op` from `from` to `to`; checks the store opens with the key
/// the point implies, holding `model`, and again once that open settled what the kill left.
fn kill_at(op: &str, point: &str, from: &str, to: &str) {
    let what = format!("{op} {from} → {to} killed {point}");
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("store");
    let model = build(&dir, from);
    let (mut child, mut out) = spawn(&["child", dir.to_str().unwrap(), op, point, from, to]);
    assert_eq!(read_line(&mut out).as_deref(), Some("HANGING"), "{what}: the child reached the point");
    child.kill().unwrap();
    child.wait().unwrap();
    if op == "reencrypt" && point != "before-swap" {
        assert!(dir.join("KEY.next").exists(), "{what}: killed before KEY.next was settled");
    }
    let expect = match point {
        "before-swap" | "before-key" => from,
        _ => to,
    };
    let other = if expect == from { to } else { from };
    for round in ["first open", "second open"] {
        let s = match Store::open(&dir, opts(key(expect))) {
            Ok(s) => s,
            Err(e) => match Store::open(&dir, opts(key(other))) {
                Ok(_) => panic!("{what}, {round}: opens with {other}, not {expect} ({e})"),
                Err(e2) => panic!("{what}, {round}: opens with neither key: {e} / {e2}"),
            },
        };
        assert!(contents(&s).unwrap() == model, "{what}, {round}: contents differ");
        s.verify().unwrap();
        s.close().unwrap();
    }
    assert!(!dir.join("KEY.next").exists(), "{what}: the open settled KEY.next");
}

fn reencrypt_killed_at_each_step() {
    for (from, to) in [("-", "1"), ("1", "2"), ("1", "-")] {
        for point in ["before-swap", "after-swap", "after-promotion"] {
            kill_at("reencrypt", point, from, to);
        }
    }
}

fn rotation_killed_around_its_rename() {
    for point in ["before-key", "after-promotion"] {
        kill_at("rotate", point, "1", "2");
    }
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.get(1).map(String::as_str) == Some("child") {
        return child(&args[2..]);
    }
    let filters: Vec<&String> = args[1..].iter().filter(|a| !a.starts_with('-')).collect();
    let tests: [(&str, fn()); 2] = [
        ("reencrypt_killed_at_each_step", reencrypt_killed_at_each_step),
        ("rotation_killed_around_its_rename", rotation_killed_around_its_rename),
    ];
    common::run_named(&filters, &tests);
}
