//! Differential property test: random command scripts run against the crate (through a scanning
//! handler and an indexed one over the same store, alternately) and against a longhand model
//! written here from the contract. After every step, views of several directories must agree
//! three ways, and usage too: a backend's listing aggregate (the embedded index, PostgreSQL's
//! summary table, both kept from each commit's size changes) that drifted from a full rescan
//! fails it. Cases: `PROPTEST_CASES` (default 256) over the embedded and in-memory backends, a
//! 32nd of them (at least 4) over PostgreSQL.

mod common;

use std::collections::{BTreeMap, BTreeSet};

use proptest::prelude::*;
use rabosh_memory::{Create, Delete, DirEntry, Insert, Rename, StrReplace, Usage, View};

const ROOT: &str = "/memories";
const MAX: u64 = 12;
const SEGMENTS: &[&str] = &["a", "b", "a.md", ".h", "node_modules", "\u{1F600}", "\u{FF5E}"];
const PROBES: &[&str] = &[
    "/memories",
    "/memories/a",
    "/memories/a/b",
    "/memories/.h",
    "/memories/node_modules",
    "/memories/\u{1F600}",
    "/memories/b/\u{FF5E}",
];

#[derive(Debug, Clone)]
enum Action {
    Create(usize, String),
    Replace(usize, String, String),
    Insert(usize, Option<i64>, String),
    Delete(usize),
    Rename(usize, usize),
    View(usize),
    /// Expire what was last updated more than this many steps ago.
    Expire(i64),
}

/// Paths are drawn from a small per-script pool so commands keep hitting what earlier ones made;
/// the pool always holds the root and a few short paths so rename and delete meet subtrees.
fn pool() -> impl Strategy<Value = Vec<String>> {
    let random = prop::collection::vec(prop::sample::select(SEGMENTS), 1..=4)
        .prop_map(|segs| format!("{ROOT}/{}", segs.join("/")));
    prop::collection::vec(random, 2..7).prop_map(|mut paths| {
        for fixed in [ROOT, "/memories/a", "/memories/a/b", "/memories/a/b/a"] {
            paths.push(fixed.to_string());
        }
        paths
    })
}

/// Contents lean on `a` so self-overlapping `old_str` (`aa` in `aaa`) actually occurs.
fn text(max: usize) -> impl Strategy<Value = String> {
    let part = prop_oneof![6 => Just("a"), 2 => Just("b"), 2 => Just("\n"), 1 => Just("é"), 1 => Just("\r")];
    prop::collection::vec(part, 0..=max).prop_map(|parts| parts.concat())
}

fn action() -> impl Strategy<Value = Action> {
    let i = || 0usize..64;
    prop_oneof![
        5 => (i(), text(14)).prop_map(|(p, t)| Action::Create(p, t)),
        5 => (i(), text(3), text(6)).prop_map(|(p, o, n)| Action::Replace(p, o, n)),
        3 => (i(), prop::option::weighted(0.9, -1i64..5), text(3))
            .prop_map(|(p, l, t)| Action::Insert(p, l, t)),
        1 => i().prop_map(Action::Delete),
        2 => (i(), i()).prop_map(|(a, b)| Action::Rename(a, b)),
        2 => i().prop_map(Action::View),
        1 => (0i64..8).prop_map(Action::Expire),
    ]
}

fn script() -> impl Strategy<Value = Vec<(Action, bool)>> {
    prop::collection::vec((action(), any::<bool>()), 1..60)
}

/// The store as the contract describes it: paths to contents, and when each was last written
/// (created, edited or moved: what expiry decides on).
#[derive(Default)]
struct Model {
    files: BTreeMap<String, String>,
    updated: BTreeMap<String, i64>,
    now: i64,
}

fn is_hidden(seg: &str) -> bool {
    seg.starts_with('.') || seg == "node_modules"
}

fn utf16(s: &str) -> Vec<u16> {
    s.encode_utf16().collect()
}

fn line_of(content: &str, byte: usize) -> u64 {
    1 + content[..byte].matches('\n').count() as u64
}

impl Model {
    fn under(&self, dir: &str) -> Vec<(String, u64)> {
        let prefix = format!("{dir}/");
        self.files
            .iter()
            .filter_map(|(p, c)| p.strip_prefix(&prefix).map(|rel| (rel.to_string(), c.len() as u64)))
            .collect()
    }

    fn at_or_under(&self, path: &str) -> Vec<String> {
        let prefix = format!("{path}/");
        self.files.keys().filter(|p| *p == path || p.starts_with(&prefix)).cloned().collect()
    }

    fn view(&self, path: &str) -> View {
        if let Some(c) = self.files.get(path).filter(|_| path != ROOT) {
            return View::File { content: c.clone() };
        }
        let visible: Vec<(Vec<String>, u64)> = self
            .under(path)
            .into_iter()
            .map(|(rel, size)| (rel.split('/').map(String::from).collect::<Vec<_>>(), size))
            .filter(|(segs, _)| !segs.iter().any(|s| is_hidden(s)))
            .collect();
        if visible.is_empty() && path != ROOT {
            return View::NotFound;
        }
        let total = visible.iter().map(|(_, s)| s).sum();
        let mut entries = Vec::new();
        let mut names: Vec<&String> = visible.iter().map(|(s, _)| &s[0]).collect::<BTreeSet<_>>().into_iter().collect();
        names.sort_by_key(|n| utf16(n));
        for name in names {
            if let Some((_, size)) = visible.iter().find(|(s, _)| s.len() == 1 && &s[0] == name) {
                entries.push(DirEntry { rel: name.as_str().into(), size: *size, is_dir: false });
            }
            let below: Vec<&(Vec<String>, u64)> =
                visible.iter().filter(|(s, _)| s.len() > 1 && &s[0] == name).collect();
            if below.is_empty() {
                continue;
            }
            let size = below.iter().map(|(_, s)| s).sum();
            entries.push(DirEntry { rel: name.as_str().into(), size, is_dir: true });
            let mut names2: Vec<&String> =
                below.iter().map(|(s, _)| &s[1]).collect::<BTreeSet<_>>().into_iter().collect();
            names2.sort_by_key(|n| utf16(n));
            for name2 in names2 {
                let rel = format!("{name}/{name2}");
                if let Some((_, size)) = below.iter().find(|(s, _)| s.len() == 2 && &s[1] == name2) {
                    entries.push(DirEntry { rel: rel.as_str().into(), size: *size, is_dir: false });
                }
                let deeper: u64 = below.iter().filter(|(s, _)| s.len() > 2 && &s[1] == name2).map(|(_, s)| s).sum();
                if below.iter().any(|(s, _)| s.len() > 2 && &s[1] == name2) {
                    entries.push(DirEntry { rel: rel.into(), size: deeper, is_dir: true });
                }
            }
        }
        View::Dir { total, entries }
    }

    fn create(&mut self, path: &str, text: &str) -> Create {
        if path == ROOT {
            Create::Exists
        } else if text.len() as u64 > MAX {
            Create::TooLarge { limit: MAX }
        } else if self.files.contains_key(path) {
            Create::Exists
        } else {
            self.files.insert(path.to_string(), text.to_string());
            self.updated.insert(path.to_string(), self.now);
            Create::Created
        }
    }

    fn str_replace(&mut self, path: &str, old: &str, new: &str) -> StrReplace {
        let Some(content) = self.files.get(path).filter(|_| path != ROOT).cloned() else {
            return StrReplace::NotFound;
        };
        if old.is_empty() {
            return StrReplace::NoMatch;
        }
        let starts: Vec<usize> =
            (0..=content.len()).filter(|&i| content.is_char_boundary(i) && content[i..].starts_with(old)).collect();
        if starts.is_empty() {
            return StrReplace::NoMatch;
        }
        let mut without_overlap = 0;
        let mut free_from = 0;
        for &s in &starts {
            if s >= free_from {
                without_overlap += 1;
                free_from = s + old.len();
            }
        }
        if without_overlap > 1 {
            return StrReplace::Multiple { lines: starts.iter().map(|&s| line_of(&content, s)).collect() };
        }
        let at = starts[0];
        let edited = format!("{}{}{}", &content[..at], new, &content[at + old.len()..]);
        if edited.len() as u64 > MAX {
            return StrReplace::TooLarge { limit: MAX };
        }
        let line = line_of(&content, at);
        let lines: Vec<&str> = edited.split('\n').collect();
        let first = if line > 2 { line - 2 } else { 1 };
        let last = std::cmp::min(lines.len() as u64, line + 2);
        let snippet = (first..=last).map(|n| lines[n as usize - 1].to_string()).collect();
        self.files.insert(path.to_string(), edited);
        self.updated.insert(path.to_string(), self.now);
        StrReplace::Edited { first_line: first, snippet }
    }

    fn insert(&mut self, path: &str, at: Option<i64>, text: &str) -> Insert {
        let Some(content) = self.files.get(path).filter(|_| path != ROOT).cloned() else {
            return Insert::NotFound;
        };
        let mut lines: Vec<String> = Vec::new();
        if !content.is_empty() {
            let body = if content.ends_with('\n') { &content[..content.len() - 1] } else { &content[..] };
            lines = body.split('\n').map(String::from).collect();
        }
        let count = lines.len() as u64;
        let at = match at.map(u64::try_from) {
            Some(Ok(n)) if n <= count => n as usize,
            _ => {
                return Insert::InvalidLine { count };
            }
        };
        let line = text.strip_suffix('\n').unwrap_or(text);
        lines.insert(at, line.to_string());
        let mut edited = lines.join("\n");
        if !edited.ends_with('\n') {
            edited += "\n";
        }
        if edited.len() as u64 > MAX {
            return Insert::TooLarge { limit: MAX };
        }
        self.files.insert(path.to_string(), edited);
        self.updated.insert(path.to_string(), self.now);
        Insert::Edited
    }

    fn delete(&mut self, path: &str) -> Delete {
        if path == ROOT {
            return Delete::IsRoot;
        }
        let doomed = self.at_or_under(path);
        if doomed.is_empty() {
            return Delete::NotFound;
        }
        for p in &doomed {
            self.files.remove(p);
            self.updated.remove(p);
        }
        Delete::Deleted { count: doomed.len() as u64 }
    }

    fn rename(&mut self, old: &str, new: &str) -> Rename {
        if old == ROOT {
            return Rename::IsRoot;
        }
        if new == ROOT || new == old {
            return Rename::DestinationExists;
        }
        if new.starts_with(&format!("{old}/")) {
            return Rename::Inside;
        }
        let moving = self.at_or_under(old);
        if moving.is_empty() {
            return Rename::NotFound;
        }
        if !self.at_or_under(new).is_empty() {
            return Rename::DestinationExists;
        }
        for p in &moving {
            let content = self.files.remove(p).unwrap();
            self.updated.remove(p);
            let to = format!("{new}{}", &p[old.len()..]);
            self.updated.insert(to.clone(), self.now);
            self.files.insert(to, content);
        }
        Rename::Renamed { count: moving.len() as u64 }
    }

    /// How many memories expiring what was written before `instant` deletes.
    fn expire_before(&mut self, instant: i64) -> u64 {
        let doomed: Vec<String> = self.updated.iter().filter(|(_, t)| **t < instant).map(|(p, _)| p.clone()).collect();
        for p in &doomed {
            self.files.remove(p);
            self.updated.remove(p);
        }
        doomed.len() as u64
    }

    fn usage(&self) -> Usage {
        Usage { memories: self.files.len() as u64, bytes: self.files.values().map(|c| c.len() as u64).sum() }
    }
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(256)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(cases()))]

    #[test]
    fn commands_match_the_model(pool in pool(), script in script(), in_memory in any::<bool>()) {
        run(if in_memory { common::Kind::InMemory } else { common::Kind::Embedded }, &pool, &script)?;
    }
}

proptest! {
    // Each case is a schema on the server and every view a round trip: fewer of them.
    #![proptest_config(ProptestConfig::with_cases((cases() / 32).max(4)))]

    #[test]
    fn commands_match_the_model_over_postgres(pool in pool(), script in script()) {
        run(common::Kind::Postgres, &pool, &script)?;
    }
}

/// One script over `kind`, checked step by step against the model.
fn run(kind: common::Kind, pool: &[String], script: &[(Action, bool)]) -> Result<(), TestCaseError> {
    let fx = common::fixture_on(kind);
    let scan = fx.handler(|o| o.max_memory_bytes = MAX);
    let indexed = fx.handler(|o| {
        o.max_memory_bytes = MAX;
        o.listing_index = true;
    });
    let mut model = Model::default();
    for (step, (action, via_index)) in script.iter().enumerate() {
        let m = if *via_index { &indexed } else { &scan };
        model.now = 1_000 + i64::try_from(step).unwrap();
        fx.set_now(model.now);
        let commits = fx.commits();
        let at = |i: &usize| pool[*i % pool.len()].clone();
        // Edits pick an existing memory half the time, or they would mostly miss.
        let existing: Vec<String> = model.files.keys().cloned().collect();
        let file_at = |i: &usize| match existing.len() {
            n if n > 0 && i.is_multiple_of(2) => existing[(i / 2) % n].clone(),
            _ => at(i),
        };
        let (got, want) = match action {
            Action::Create(p, t) => {
                let p = &at(p);
                (format!("{:?}", m.create(p, t).unwrap()), format!("{:?}", model.create(p, t)))
            }
            Action::Replace(p, o, n) => {
                let p = &file_at(p);
                (format!("{:?}", m.str_replace(p, o, n).unwrap()), format!("{:?}", model.str_replace(p, o, n)))
            }
            Action::Insert(p, l, t) => {
                let p = &file_at(p);
                (format!("{:?}", m.insert(p, *l, t).unwrap()), format!("{:?}", model.insert(p, *l, t)))
            }
            Action::Delete(p) => {
                let p = &at(p);
                (format!("{:?}", m.delete(p).unwrap()), format!("{:?}", model.delete(p)))
            }
            Action::Rename(a, b) => {
                let (a, b) = (&file_at(a), &at(b));
                (format!("{:?}", m.rename(a, b).unwrap()), format!("{:?}", model.rename(a, b)))
            }
            Action::View(p) => {
                let p = &at(p);
                (format!("{:?}", m.view(p).unwrap()), format!("{:?}", model.view(p)))
            }
            Action::Expire(ago) => {
                let expired = m.expire_before(model.now - ago).unwrap();
                prop_assert!(expired.reclaim_error.is_none(), "{:?}", expired.reclaim_error);
                (format!("Expired {}", expired.count), format!("Expired {}", model.expire_before(model.now - ago)))
            }
        };
        prop_assert_eq!(&got, &want, "step {} {:?}", step, action);
        if std::env::var_os("MODEL_STATS").is_some() {
            eprintln!(
                "OUTCOME {} {}",
                format!("{action:?}").split('(').next().unwrap_or(""),
                got.split([' ', '{', '(']).next().unwrap_or("")
            );
        }
        let changed = ["Created", "Edited", "Deleted", "Renamed"].iter().any(|w| got.starts_with(w))
            || (got.starts_with("Expired") && got != "Expired 0");
        prop_assert_eq!(fx.commits() - commits, u64::from(changed), "step {} {:?}", step, action);
        let read = fx.values_read();
        for probe in PROBES.iter().copied().chain(model.files.keys().map(String::as_str).take(3)) {
            let want = model.view(probe);
            if matches!(want, View::File { .. }) {
                continue;
            }
            prop_assert_eq!(&scan.view(probe).unwrap(), &want, "scan {} after step {}", probe, step);
            prop_assert_eq!(&indexed.view(probe).unwrap(), &want, "index {} after step {}", probe, step);
        }
        prop_assert_eq!(scan.usage().unwrap(), model.usage());
        prop_assert_eq!(indexed.usage().unwrap(), model.usage());
        prop_assert_eq!(fx.values_read(), read, "listing or usage read a value");
    }
    for (path, content) in &model.files {
        prop_assert_eq!(scan.view(path).unwrap(), View::File { content: content.clone() });
    }
    Ok(())
}
