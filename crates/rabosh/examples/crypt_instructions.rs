//! A fixed workload for counting instructions with callgrind (stable on a busy machine, unlike
//! wall time): `crypt_instructions <plain|encrypted> <put|read> <n>` makes a store in a temporary
//! directory and does `n` buffered puts of a 1 KiB value (or writes `n` keys, then reads each
//! once). Run it at two `n` and divide the difference: that is the cost of one put or one read.
//! `valgrind --tool=callgrind target/cross/examples/crypt_instructions encrypted put 2000`.
//! Open: `crypt_instructions <mode> seed <dir>` writes 5,000 keys and closes;
//! `crypt_instructions <mode> open <dir>` opens that store once and reads one key (run this one
//! under callgrind: the open + first read of issue 21's bench row, without the seeding).

use rabosh::{Batch, Durability, Encryption, Options, Store};

fn key(i: usize) -> Vec<u8> {
    format!("m:default:/memories/project-{:02}/note{i:05}.md", i % 37).into_bytes()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let encrypted = args[1] == "encrypted";
    let opts = Options {
        durability: Durability::Buffered,
        encryption: encrypted.then(|| Encryption::new([9; 32])),
        ..Options::default()
    };
    if args[2] == "seed" || args[2] == "open" {
        return open_row(&args[2], &args[3], opts);
    }
    let n: usize = args[3].parse().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let s = Store::open(tmp.path().join("s"), opts).unwrap();
    let (value, meta) = (vec![b'x'; 1024], vec![7u8; 40]);
    let puts = if args[2] == "put" { n } else { 1 };
    for i in 0..puts {
        let mut b = Batch::new();
        b.put(key(i), value.clone(), meta.clone());
        s.write(b).unwrap();
    }
    if args[2] == "read" {
        let snap = s.snapshot().unwrap();
        for _ in 0..n {
            assert_eq!(snap.get(&key(0)).unwrap().unwrap().len(), 1024);
        }
    }
    s.close().unwrap();
}

/// The open row: `seed` writes 5,000 keys of a 1 KiB value (one commit each) and closes cleanly
/// (so every segment has a hint); `open` opens once and reads one key.
fn open_row(what: &str, dir: &str, opts: Options) {
    let s = Store::open(dir, opts).unwrap();
    match what {
        "seed" => {
            let (value, meta) = (vec![b'x'; 1024], vec![7u8; 40]);
            for i in 0..5000 {
                let mut b = Batch::new();
                b.put(key(i), value.clone(), meta.clone());
                s.write(b).unwrap();
            }
        }
        _ => assert_eq!(s.snapshot().unwrap().get(&key(17)).unwrap().unwrap().len(), 1024),
    }
    s.close().unwrap();
}
