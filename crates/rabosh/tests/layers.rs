//! The engine's folders are its layers (docs/architecture.md, "The engine's layers"): a file
//! names only its own folder and the folders below it, the files name each other in no circle,
//! and only the crate root names the test kit's module. Read from the source tree, so a new
//! upward `crate::` path fails here, not in a review.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// The folders bottom up, each with the rank a file in it has. The ground files come first;
/// `lib.rs` (which only declares and re-exports) and the test kit's `sealed.rs` stand on top.
const LAYERS: &[(&str, u8)] =
    &[("error", 0), ("probe", 0), ("io", 1), ("crypto", 2), ("log", 3), ("keydir", 4), ("store", 5)];
const TOP: &[&str] = &["lib", "sealed"];

/// The layer of a top-level module name: `None` for a name the crate root defines or
/// re-exports (`crate::Error`), which a file inside the engine must not take from there.
fn rank(top: &str) -> Option<u8> {
    if TOP.contains(&top) {
        return Some(u8::MAX);
    }
    LAYERS.iter().find(|(name, _)| *name == top).map(|(_, r)| *r)
}

/// The source without comments (a doc link may name any module) and without string contents.
fn code_only(src: &str) -> String {
    let mut out = String::with_capacity(src.len());
    let mut chars = src.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '/' if chars.peek() == Some(&'/') => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            '/' if chars.peek() == Some(&'*') => {
                chars.next();
                let mut last = ' ';
                for c in chars.by_ref() {
                    if last == '*' && c == '/' {
                        break;
                    }
                    last = c;
                }
            }
            '"' => {
                out.push('"');
                let mut escaped = false;
                for c in chars.by_ref() {
                    if c == '"' && !escaped {
                        break;
                    }
                    escaped = c == '\\' && !escaped;
                }
                out.push('"');
            }
            _ => out.push(c),
        }
    }
    out
}

/// Every module path a file names with `crate::`, as its segments up to the first non-module
/// (`crate::log::format::FRAME_HEADER` gives `["log", "format", "FRAME_HEADER"]`); a braced
/// group (`crate::{a::X, b}`) gives one path per member.
fn crate_paths(code: &str) -> Vec<Vec<String>> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(at) = rest.find("crate::") {
        let before = rest[..at].chars().next_back();
        rest = &rest[at + "crate::".len()..];
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue; // `$crate::` or a longer name
        }
        if let Some(group) = rest.strip_prefix('{') {
            let end = group.find('}').unwrap_or(group.len());
            for member in group[..end].split(',') {
                let path: Vec<String> = member.trim().split("::").map(|s| ident(s).to_string()).collect();
                if path.first().is_some_and(|s| !s.is_empty()) {
                    out.push(path);
                }
            }
            continue;
        }
        let mut path = Vec::new();
        let mut tail = rest;
        loop {
            let name = ident(tail);
            if name.is_empty() {
                break;
            }
            path.push(name.to_string());
            match tail[name.len()..].strip_prefix("::") {
                Some(next) if !next.starts_with('{') => tail = next,
                _ => break,
            }
        }
        if !path.is_empty() {
            out.push(path);
        }
    }
    out
}

fn ident(s: &str) -> &str {
    let s = s.trim_start();
    let end = s.find(|c: char| !(c.is_alphanumeric() || c == '_')).unwrap_or(s.len());
    &s[..end]
}

/// A source file's module path (`log/format.rs` → `log::format`, `log/mod.rs` → `log`).
fn module_of(file: &str) -> String {
    let file = file.strip_suffix(".rs").unwrap_or(file);
    let file = file.strip_suffix("/mod").unwrap_or(file);
    file.replace('/', "::")
}

/// What breaks the layering in `files` (path under src/ → source): upward names, names taken
/// from the crate root, the test kit named outside the root, and circles between files.
fn violations(files: &BTreeMap<String, String>) -> Vec<String> {
    let modules: BTreeSet<String> = files.keys().map(|f| module_of(f)).collect();
    let mut bad = Vec::new();
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for (file, src) in files {
        let module = module_of(file);
        let top = module.split("::").next().unwrap_or_default().to_string();
        let Some(own) = rank(&top) else {
            bad.push(format!("{file}: a file outside every layer folder (add it to a folder, or to LAYERS)"));
            continue;
        };
        for path in crate_paths(&code_only(src)) {
            let named = &path[0];
            match rank(named) {
                None if own != u8::MAX => {
                    bad.push(format!("{file}: names crate::{named}, which the crate root re-exports: use its module"));
                }
                Some(_) if named == "sealed" && own != u8::MAX => {
                    bad.push(format!("{file}: production code names the test kit's module crate::sealed"));
                }
                Some(r) if r > own => {
                    bad.push(format!("{file}: names crate::{}, a layer above its own ({top})", path.join("::")));
                }
                _ => {}
            }
            // The longest prefix of the path that is a file of the tree: the module it names.
            let target = (1..=path.len()).rev().map(|n| path[..n].join("::")).find(|m| modules.contains(m));
            if let Some(target) = target
                && target != module
                && !TOP.contains(&module.as_str())
            {
                edges.entry(module.clone()).or_default().insert(target);
            }
        }
    }
    if let Some(circle) = find_circle(&edges) {
        bad.push(format!("files that name each other in a circle: {}", circle.join(" -> ")));
    }
    bad
}

/// One circle of `edges`, as the modules along it back to the first; `None`: there is none.
fn find_circle(edges: &BTreeMap<String, BTreeSet<String>>) -> Option<Vec<String>> {
    fn visit<'a>(
        at: &'a str,
        edges: &'a BTreeMap<String, BTreeSet<String>>,
        done: &mut BTreeSet<&'a str>,
        stack: &mut Vec<&'a str>,
    ) -> Option<Vec<String>> {
        if let Some(i) = stack.iter().position(|m| *m == at) {
            let mut circle: Vec<String> = stack[i..].iter().map(ToString::to_string).collect();
            circle.push(at.to_string());
            return Some(circle);
        }
        if !done.insert(at) {
            return None;
        }
        stack.push(at);
        for next in edges.get(at).into_iter().flatten() {
            if let Some(c) = visit(next, edges, done, stack) {
                return Some(c);
            }
        }
        stack.pop();
        None
    }
    let mut done = BTreeSet::new();
    edges.keys().find_map(|m| visit(m, edges, &mut done, &mut Vec::new()))
}

fn read_tree(root: &Path, dir: &Path, out: &mut BTreeMap<String, String>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            read_tree(root, &path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let rel = path.strip_prefix(root).unwrap().to_string_lossy().replace('\\', "/");
            // A file that holds a module's unit tests (`hint/index_tests.rs`) is its parent's.
            out.insert(rel, std::fs::read_to_string(&path).unwrap());
        }
    }
}

#[test]
fn no_file_names_a_layer_above_its_own_and_none_name_each_other_in_a_circle() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = BTreeMap::new();
    read_tree(&root, &root, &mut files);
    assert!(files.len() > 20, "the engine's sources were not found under {}", root.display());
    let bad = violations(&files);
    assert!(bad.is_empty(), "the engine's layering is broken:\n  {}", bad.join("\n  "));
}

/// The check itself catches what it is for (a tree made up here, not the engine's).
#[test]
fn the_check_finds_an_upward_name_a_root_name_the_test_kit_and_a_circle() {
    let tree = |files: &[(&str, &str)]| -> Vec<String> {
        violations(&files.iter().map(|(f, s)| (f.to_string(), s.to_string())).collect())
    };
    let fine = tree(&[
        ("lib.rs", "pub use store::handle::Store; pub use error::Error;"),
        ("io/vfs.rs", "use crate::error::{Error, Result}; // crate::store::handle in a comment"),
        ("store/handle.rs", "use crate::io::vfs::Vfs; use crate::log::format::{A, B};"),
        ("log/format.rs", "use crate::{io::vfs::Vfs, error::Error}; const S: &str = \"crate::store\";"),
    ]);
    assert_eq!(fine, Vec::<String>::new());
    let upward = tree(&[("log/format.rs", "use crate::store::handle::Store;"), ("store/handle.rs", "")]);
    assert!(upward[0].contains("a layer above"), "{upward:?}");
    let root_name = tree(&[("io/vfs.rs", "use crate::{Error, Result};")]);
    assert!(root_name[0].contains("re-exports"), "{root_name:?}");
    let kit = tree(&[("store/open.rs", "crate::sealed::sealed_blobs()"), ("sealed.rs", "")]);
    assert!(kit[0].contains("test kit"), "{kit:?}");
    let circle = tree(&[
        ("store/a.rs", "use crate::store::b::X;"),
        ("store/b.rs", "use crate::store::c::Y;"),
        ("store/c.rs", "fn f() { crate::store::a::g() }"),
    ]);
    assert!(circle[0].contains("store::a -> store::b -> store::c -> store::a"), "{circle:?}");
    let outside = tree(&[("util.rs", "")]);
    assert!(outside[0].contains("outside every layer"), "{outside:?}");
}
