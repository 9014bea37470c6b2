//! Actor limits: an actor is refused where the handler is built when the version record could
//! not hold it, and every accepted actor is written and read back whole (issue 19 item 3).

mod common;

use common::{Kind, fixture_on};
use proptest::prelude::*;
use rabosh_memory::{
    Actor, Error, HistoryOptions, MAX_ACTOR_ID_BYTES, MAX_ACTOR_TYPE_BYTES, MAX_PATH_BYTES, VersionQuery,
};

/// The case: an id near 65,535 bytes pushed the record past the 64 KiB metadata limit and
/// every write of the handler failed. It is refused when the handler is built.
#[test]
fn an_id_near_64_kib_is_refused_at_construction() {
    let f = fixture_on(Kind::Embedded);
    let actor = Actor { kind: "t".into(), id: "i".repeat(65_535) };
    let refused = f.default_handler().with_history(HistoryOptions::default()).with_actor(actor);
    assert!(matches!(refused, Err(Error::InvalidOption { option: "actor.id", .. })));
}

fn sized(n: usize) -> String {
    // Mixed widths so byte counts, not characters, are what is limited.
    let mut s: String = "é".repeat(n / 2);
    if n % 2 == 1 {
        s.push('x');
    }
    s
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    /// Any actor is either refused by `with_actor` (and only when over a limit) or recorded whole
    /// on a write at the longest path.
    #[test]
    fn every_accepted_actor_is_recorded_whole(
        kind_len in prop_oneof![0..4usize, (MAX_ACTOR_TYPE_BYTES - 2)..(MAX_ACTOR_TYPE_BYTES + 3)],
        id_len in prop_oneof![0..4usize, (MAX_ACTOR_ID_BYTES - 2)..(MAX_ACTOR_ID_BYTES + 3), 60_000..70_000usize],
    ) {
        let f = fixture_on(Kind::Embedded);
        let actor = Actor { kind: sized(kind_len), id: sized(id_len) };
        let legal = (1..=MAX_ACTOR_TYPE_BYTES).contains(&kind_len) && id_len <= MAX_ACTOR_ID_BYTES;
        match f.default_handler().with_history(HistoryOptions::default()).with_actor(actor.clone()) {
            Err(Error::InvalidOption { .. }) => prop_assert!(!legal, "refused a legal actor {kind_len}/{id_len}"),
            Err(e) => panic!("{e}"),
            Ok(m) => {
                prop_assert!(legal, "accepted an actor over the limits {kind_len}/{id_len}");
                let path = format!("/memories/{}", "p".repeat(MAX_PATH_BYTES - "/memories/".len()));
                m.create(&path, "x").unwrap();
                m.delete(&path).unwrap();
                let page = m.versions(&VersionQuery::default()).unwrap();
                prop_assert_eq!(page.data.len(), 2);
                prop_assert!(page.data.iter().all(|v| v.actor.as_ref() == Some(&actor)));
            }
        }
    }
}
