//! Model-based property test of version history: random scripts of commands and host edits run
//! against a recording handler and against a longhand model written here. After every step the
//! whole version list (operation, path, content, which memory) must equal the model's; at the
//! end, `at(t)` for every step's instant must show exactly the model's state at that step, and
//! its root listing must be the one the live handler answered then. Cases: `PROPTEST_CASES`
//! (default 64), over both backends.

mod common;

use std::collections::{BTreeMap, HashMap};

use common::{Fixture, Kind, fixture_on};
use proptest::prelude::*;
use rabosh_memory::{HistoryOptions, Memories, Operation, Precondition, VersionQuery, View, hex, id_hex, sha256};

const PATHS: &[&str] =
    &["/memories/a", "/memories/b", "/memories/a/x", "/memories/a/y", "/memories/b/x", "/memories/c/x", "/memories/c"];

#[derive(Debug, Clone)]
enum Step {
    Create(usize, String),
    /// `str_replace` of the whole content (one match whenever the content is not empty).
    ReplaceAll(usize, String),
    Put(usize, String),
    Remove(usize),
    Delete(usize),
    Rename(usize, usize),
}

fn step() -> impl Strategy<Value = Step> {
    let p = || 0..PATHS.len();
    let t = || prop::sample::select(vec!["", "a", "b", "ab", "a\nb"]).prop_map(String::from);
    prop_oneof![
        3 => (p(), t()).prop_map(|(i, s)| Step::Create(i, s)),
        2 => (p(), t()).prop_map(|(i, s)| Step::ReplaceAll(i, s)),
        2 => (p(), t()).prop_map(|(i, s)| Step::Put(i, s)),
        1 => p().prop_map(Step::Remove),
        1 => p().prop_map(Step::Delete),
        2 => (p(), p()).prop_map(|(a, b)| Step::Rename(a, b)),
    ]
}

/// The model: live memories (path → (memory ordinal, content)) and the versions so far.
#[derive(Default, Clone)]
struct Model {
    live: BTreeMap<String, (usize, String)>,
    versions: Vec<(Operation, String, Option<String>, usize)>,
    next_memory: usize,
}

fn at_or_under<'a>(live: &'a BTreeMap<String, (usize, String)>, path: &str) -> Vec<&'a String> {
    let below = format!("{path}/");
    // The memory itself first, then its subtree in byte order: the order the command stages.
    let mut keys: Vec<&String> = live.keys().filter(|k| *k == path).collect();
    keys.extend(live.keys().filter(|k| k.starts_with(&below)));
    keys
}

impl Model {
    fn write(&mut self, path: &str, content: &str) {
        if let Some((m, c)) = self.live.get_mut(path) {
            *c = content.to_string();
            self.versions.push((Operation::Modified, path.into(), Some(content.into()), *m));
        } else {
            let m = self.next_memory;
            self.next_memory += 1;
            self.live.insert(path.into(), (m, content.into()));
            self.versions.push((Operation::Created, path.into(), Some(content.into()), m));
        }
    }

    fn delete(&mut self, paths: Vec<String>) {
        for p in paths {
            let (m, _) = self.live.remove(&p).expect("live");
            self.versions.push((Operation::Deleted, p, None, m));
        }
    }

    fn apply(&mut self, s: &Step) {
        match s {
            Step::Create(i, text) => {
                if !self.live.contains_key(PATHS[*i]) {
                    self.write(PATHS[*i], text);
                }
            }
            Step::ReplaceAll(i, text) => {
                if self.live.get(PATHS[*i]).is_some_and(|(_, c)| !c.is_empty()) {
                    self.write(PATHS[*i], text);
                }
            }
            Step::Put(i, text) => {
                if self.live.get(PATHS[*i]).is_none_or(|(_, c)| c != text) {
                    self.write(PATHS[*i], text);
                }
            }
            Step::Remove(i) => {
                if self.live.contains_key(PATHS[*i]) {
                    self.delete(vec![PATHS[*i].to_string()]);
                }
            }
            Step::Delete(i) => {
                let doomed: Vec<String> = at_or_under(&self.live, PATHS[*i]).into_iter().cloned().collect();
                self.delete(doomed);
            }
            Step::Rename(a, b) => {
                let (from, to) = (PATHS[*a], PATHS[*b]);
                let inside = to.strip_prefix(from).is_some_and(|r| r.starts_with('/'));
                let moving: Vec<String> = at_or_under(&self.live, from).into_iter().cloned().collect();
                if from == to || inside || moving.is_empty() || !at_or_under(&self.live, to).is_empty() {
                    return;
                }
                for old in moving {
                    let new = format!("{to}{}", &old[from.len()..]);
                    let (m, c) = self.live.remove(&old).expect("live");
                    self.versions.push((Operation::Renamed, new.clone(), Some(c.clone()), m));
                    self.live.insert(new, (m, c));
                }
            }
        }
    }
}

fn run(m: &Memories, s: &Step) {
    match s {
        Step::Create(i, text) => drop(m.create(PATHS[*i], text).unwrap()),
        Step::ReplaceAll(i, text) => {
            let View::File { content: old, .. } = m.view(PATHS[*i]).unwrap() else { return };
            m.str_replace(PATHS[*i], &old, text).unwrap();
        }
        Step::Put(i, text) => drop(m.host_put(PATHS[*i], text, &Precondition::default()).unwrap()),
        Step::Remove(i) => drop(m.host_remove(PATHS[*i], None).unwrap()),
        Step::Delete(i) => drop(m.delete(PATHS[*i]).unwrap()),
        Step::Rename(a, b) => drop(m.rename(PATHS[*a], PATHS[*b]).unwrap()),
    }
}

/// The versions as (operation, path, content, memory ordinal by first appearance), oldest first.
fn recorded(m: &Memories) -> Vec<(Operation, String, Option<String>, usize)> {
    let page = m.versions(&VersionQuery { limit: Some(100_000), ..Default::default() }).unwrap();
    let mut ordinals: HashMap<u128, usize> = HashMap::new();
    page.data
        .into_iter()
        .rev()
        .map(|v| {
            let next = ordinals.len();
            let ordinal = *ordinals.entry(v.memory_id).or_insert(next);
            let (_, content) = m.version(&id_hex(v.id)).unwrap().unwrap();
            if let Some(c) = &content {
                assert_eq!(v.sha256_hex(), Some(hex(&sha256(c.as_bytes()))));
                assert_eq!(v.size, c.len() as u64);
            }
            (v.operation, v.path.unwrap(), content, ordinal)
        })
        .collect()
}

fn check(kind: Kind, steps: &[Step]) {
    let f: Fixture = fixture_on(kind);
    let m = f.default_handler().with_history(HistoryOptions::default());
    let mut model = Model::default();
    let mut seen = Vec::new();
    for (n, s) in steps.iter().enumerate() {
        f.set_now(1_000 + 10 * i64::try_from(n).unwrap());
        run(&m, s);
        model.apply(s);
        assert_eq!(recorded(&m), model.versions, "after step {n}: {s:?}");
        seen.push((1_000 + 10 * i64::try_from(n).unwrap(), model.live.clone(), m.view("/memories").unwrap()));
    }
    for (t, live, root) in seen {
        let at = m.at(t).unwrap();
        let past = m.past(&at).unwrap();
        assert_eq!(m.view_at(&past, "/memories").unwrap(), root, "root listing at {t}");
        for p in PATHS {
            let got = match m.view_at(&past, p).unwrap() {
                View::File { content, .. } => Some(content),
                _ => None,
            };
            assert_eq!(got, live.get(*p).map(|(_, c)| c.clone()), "{p} at {t}");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|c| c.parse().ok()).unwrap_or(64)
    ))]

    #[test]
    fn history_matches_the_model_on_the_engine(steps in prop::collection::vec(step(), 1..30)) {
        check(Kind::Embedded, &steps);
    }

    #[test]
    fn history_matches_the_model_in_memory(steps in prop::collection::vec(step(), 1..30)) {
        check(Kind::InMemory, &steps);
    }
}
