//! A PostgreSQL store opened with a key, against the real server: the table's bytes hold no
//! content or metadata fragment (paths stay plain, as docs/guide/postgres.md says), a wrong key, no
//! key, and a key for a plain store are refused at open, a row moved onto another is
//! Corruption, and rotating the key rewraps the one key row.

mod postgres_util;

use std::sync::Arc;

use postgres_util::{Schema, url};
use rabosh_memory::{Create, EncryptionKey, Error, Memories, MemoryOptions, View};
use rabosh_memory_postgres::{PgBackend, PgOptions};

const KEY: [u8; 32] = [0x31; 32];
const OTHER: [u8; 32] = [0x32; 32];

fn options(s: &Schema, key: Option<[u8; 32]>) -> PgOptions {
    PgOptions { encryption: key.map(EncryptionKey::new), ..s.options() }
}

fn open(s: &Schema, key: Option<[u8; 32]>) -> rabosh_memory::Result<Arc<PgBackend>> {
    PgBackend::open(&url(), options(s, key)).map(Arc::new)
}

fn memories(b: &Arc<PgBackend>) -> Memories {
    Memories::new(b.clone(), MemoryOptions::default()).unwrap()
}

/// Every byte of the key table's value and metadata columns, and of the key row.
fn sealed_bytes(s: &Schema) -> Vec<Vec<u8>> {
    let mut c = s.client();
    let mut out = Vec::new();
    for row in c.query(&format!("SELECT v, m FROM \"{}\".kv", s.name), &[]).unwrap() {
        out.push(row.get::<_, Vec<u8>>(0));
        out.push(row.get::<_, Vec<u8>>(1));
    }
    out
}

fn holds(bytes: &[Vec<u8>], needle: &[u8]) -> bool {
    bytes.iter().any(|b| b.windows(needle.len()).any(|w| w == needle))
}

#[test]
fn contents_and_metadata_are_sealed_and_paths_stay_plain() {
    let s = Schema::new("enc_bytes");
    let b = open(&s, Some(KEY)).unwrap();
    assert!(b.is_encrypted());
    let m = memories(&b);
    assert_eq!(m.create("/memories/health/visit.md", "blood pressure zebra 120/80").unwrap(), Create::Created);
    m.str_replace("/memories/health/visit.md", "zebra", "okapi").unwrap();
    m.create("/memories/plan.md", "launch the quokka project").unwrap();
    m.rename("/memories/plan.md", "/memories/later.md").unwrap();
    assert_eq!(
        m.view("/memories/health/visit.md").unwrap(),
        View::File { content: "blood pressure okapi 120/80".into() }
    );
    assert!(matches!(m.view("/memories").unwrap(), View::Dir { .. }));
    let bytes = sealed_bytes(&s);
    assert!(!bytes.is_empty());
    for needle in ["blood pressure", "okapi", "quokka", "120/80"] {
        assert!(!holds(&bytes, needle.as_bytes()), "{needle} readable in the table");
    }
    // The control: the same check finds the content in a plain schema's rows.
    let plain = Schema::new("enc_plain");
    memories(&open(&plain, None).unwrap()).create("/memories/p.md", "blood pressure").unwrap();
    assert!(holds(&sealed_bytes(&plain), b"blood pressure"));
    // Paths are the keys, plain by design: listings are ranges over them.
    let mut c = s.client();
    let keys: Vec<Vec<u8>> =
        c.query(&format!("SELECT k FROM \"{}\".kv", s.name), &[]).unwrap().iter().map(|r| r.get(0)).collect();
    assert!(holds(&keys, b"/memories/health/visit.md"));
    // The key row holds the wrapped data key, not the host key.
    let wrapped: Vec<u8> = c.query_one(&format!("SELECT wrapped FROM \"{}\".rabosh_key", s.name), &[]).unwrap().get(0);
    assert!(!wrapped.windows(8).any(|w| w == &KEY[..8]));
}

#[test]
fn the_wrong_key_no_key_and_a_key_for_a_plain_store_are_refused_at_open() {
    let s = Schema::new("enc_refuse");
    memories(&open(&s, Some(KEY)).unwrap()).create("/memories/a", "alpha").unwrap();
    assert!(matches!(open(&s, Some(OTHER)).err(), Some(Error::WrongKey(_))));
    assert!(matches!(open(&s, None).err(), Some(Error::KeyRequired(_))));
    let reopened = open(&s, Some(KEY)).unwrap();
    assert_eq!(memories(&reopened).view("/memories/a").unwrap(), View::File { content: "alpha".into() });

    let plain = Schema::new("enc_plain_rows");
    memories(&open(&plain, None).unwrap()).create("/memories/a", "alpha").unwrap();
    assert!(matches!(open(&plain, Some(KEY)).err(), Some(Error::NotEncrypted(_))));
    // Refused without writing: the plain store still opens plain.
    assert!(!open(&plain, None).unwrap().is_encrypted());
}

#[test]
fn a_row_moved_onto_another_is_corruption_not_the_other_memorys_content() {
    let s = Schema::new("enc_swap");
    let b = open(&s, Some(KEY)).unwrap();
    let m = memories(&b);
    m.create("/memories/a", "alpha").unwrap();
    m.create("/memories/b", "bravo").unwrap();
    s.client()
        .batch_execute(&format!(
            "UPDATE \"{0}\".kv SET v = (SELECT v FROM \"{0}\".kv WHERE k = convert_to('m:default:/memories/b', 'UTF8')) \
             WHERE k = convert_to('m:default:/memories/a', 'UTF8')",
            s.name
        ))
        .unwrap();
    assert!(matches!(m.view("/memories/a"), Err(Error::Corruption(_))), "{:?}", m.view("/memories/a"));
    assert_eq!(m.view("/memories/b").unwrap(), View::File { content: "bravo".into() });
}

#[test]
fn rotation_rewraps_the_key_row_and_every_handle_keeps_working() {
    let s = Schema::new("enc_rotate");
    let b = open(&s, Some(KEY)).unwrap();
    let other_handle = open(&s, Some(KEY)).unwrap();
    memories(&b).create("/memories/a", "alpha").unwrap();
    b.rotate_key(&EncryptionKey::new(OTHER)).unwrap();
    memories(&other_handle).create("/memories/b", "bravo").unwrap();
    assert!(matches!(open(&s, Some(KEY)).err(), Some(Error::WrongKey(_))));
    let after = memories(&open(&s, Some(OTHER)).unwrap());
    assert_eq!(after.view("/memories/a").unwrap(), View::File { content: "alpha".into() });
    assert_eq!(after.view("/memories/b").unwrap(), View::File { content: "bravo".into() });
    let plain = Schema::new("enc_rotate_plain");
    let p = open(&plain, None).unwrap();
    assert!(matches!(p.rotate_key(&EncryptionKey::new(KEY)), Err(Error::NotEncrypted(_))));
}

/// A plain handle opened on an empty schema before the first open with a key made the schema
/// encrypted must not go on writing plain rows into it (a schema with a key and plain rows
/// answers Corruption to every keyed reader): its writes are refused with `KeyRequired`, nothing
/// plain reaches the table, and the keyed handle works on.
#[test]
fn a_plain_handle_from_before_the_first_keyed_open_writes_no_plain_row() {
    let s = Schema::new("enc_first_open");
    let plain = open(&s, None).unwrap();
    assert!(!plain.is_encrypted());
    let keyed = open(&s, Some(KEY)).unwrap();
    assert!(keyed.is_encrypted());
    let m = memories(&plain);
    for _ in 0..2 {
        match m.create("/memories/leak.md", "plain walrus secret") {
            Err(Error::KeyRequired(msg)) => assert!(msg.contains("encrypted after this handle opened"), "{msg}"),
            other => panic!("want KeyRequired, got {other:?}"),
        }
    }
    let mut c = s.client();
    let rows: i64 = c.query_one(&format!("SELECT count(*) FROM \"{}\".kv", s.name), &[]).unwrap().get(0);
    assert_eq!(rows, 0, "a plain row reached the encrypted schema");
    let k = memories(&keyed);
    k.create("/memories/a.md", "sealed walrus").unwrap();
    assert_eq!(k.view("/memories/a.md").unwrap(), View::File { content: "sealed walrus".into() });
    assert!(!holds(&sealed_bytes(&s), b"walrus"));
    // A handle opened plain now is refused at open, as before.
    assert!(matches!(open(&s, None).err(), Some(Error::KeyRequired(_))));
}

/// The same, with the plain handle writing while the first keyed open runs (SERIALIZABLE: the
/// keyed open's read of `kv` and the plain upsert's read of the encrypted mark make overlapping
/// ones a cycle, and one is rolled back). Whichever wins, no schema ends with a key and a row.
#[test]
fn a_plain_writer_racing_the_first_keyed_open_never_leaves_a_key_and_a_plain_row() {
    let (mut keyed_won, mut plain_won) = (0, 0);
    for round in 0..16 {
        let s = Schema::new(&format!("enc_race_{round}"));
        let plain = open(&s, None).unwrap();
        let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
        let writer = {
            let (m, stop) = (memories(&plain), stop.clone());
            std::thread::spawn(move || {
                // Staggered starts: some rounds write first, some open first, some overlap.
                std::thread::sleep(std::time::Duration::from_millis(round * 2));
                for i in 0.. {
                    if stop.load(std::sync::atomic::Ordering::Relaxed) {
                        return Ok(());
                    }
                    match m.create(&format!("/memories/p{i}.md"), "plain walrus") {
                        Ok(_) => {}
                        Err(Error::KeyRequired(_)) => return Err(()),
                        Err(e) => panic!("plain write: {e}"),
                    }
                }
                Ok(())
            })
        };
        let keyed = open(&s, Some(KEY));
        stop.store(true, std::sync::atomic::Ordering::Relaxed);
        let refused = writer.join().unwrap().is_err();
        let mut c = s.client();
        let rows: i64 = c.query_one(&format!("SELECT count(*) FROM \"{}\".kv", s.name), &[]).unwrap().get(0);
        match keyed {
            Ok(_) => {
                keyed_won += 1;
                assert_eq!(rows, 0, "round {round}: a key and {rows} plain rows");
                assert!(refused || rows == 0);
            }
            Err(Error::NotEncrypted(_)) => {
                plain_won += 1;
                let key: Option<String> =
                    c.query_one(&format!("SELECT to_regclass('\"{}\".rabosh_key')::TEXT", s.name), &[]).unwrap().get(0);
                if key.is_some() {
                    let n: i64 =
                        c.query_one(&format!("SELECT count(*) FROM \"{}\".rabosh_key", s.name), &[]).unwrap().get(0);
                    assert_eq!(n, 0, "round {round}: plain rows and a key");
                }
            }
            Err(e) => panic!("round {round}: keyed open: {e}"),
        }
    }
    eprintln!("keyed open won {keyed_won}, plain writer won {plain_won}");
}
