//! Key layout `m:{scope}:{path}`. Keys order by UTF-8 bytes, so a subtree is one contiguous range;
//! the trailing `/` of a subtree prefix keeps `/memories/a` from matching `/memories/ab`.

use crate::{Error, ROOT, Result};

/// Refuses a path that is not in the facade's normalised form: reaching here means a caller bug.
pub(crate) fn check_normalised(path: &str) -> Result<()> {
    if path == ROOT {
        return Ok(());
    }
    let bad = || Error::NotNormalised(path.to_string());
    let rest = path.strip_prefix("/memories/").ok_or_else(bad)?;
    if rest.split('/').any(|s| s.is_empty() || s == "." || s == "..") {
        return Err(bad());
    }
    Ok(())
}

/// Scope names are key components, so they must never contain the `:` separator.
pub(crate) fn valid_scope(scope: &str) -> bool {
    (1..=64).contains(&scope.len())
        && scope.bytes().all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'))
}

pub(crate) fn key(scope: &str, path: &str) -> Vec<u8> {
    format!("m:{scope}:{path}").into_bytes()
}

/// Prefix of every memory key of `scope`.
pub(crate) fn scope_prefix(scope: &str) -> Vec<u8> {
    format!("m:{scope}:").into_bytes()
}

/// Whether `key` is a memory's (of any scope), not a version's, a setting's or a base's.
pub(crate) fn is_memory_key(key: &[u8]) -> bool {
    key.starts_with(b"m:")
}

/// Prefix of every memory strictly under `path`.
#[must_use]
pub fn subtree_prefix(scope: &str, path: &str) -> Vec<u8> {
    format!("m:{scope}:{path}/").into_bytes()
}

/// Splits a key into its scope and its path; None for keys that are not memory keys.
#[must_use]
pub fn parse(key: &[u8]) -> Option<(&str, &str)> {
    let rest = key.strip_prefix(b"m:")?;
    let colon = rest.iter().position(|&b| b == b':')?;
    let scope = std::str::from_utf8(&rest[..colon]).ok()?;
    let path = std::str::from_utf8(&rest[colon + 1..]).ok()?;
    Some((scope, path))
}

/// The segments of a path below the root (`/memories/a/b` → `["a", "b"]`, the root → `[]`).
#[must_use]
pub fn segments(path: &str) -> Vec<&str> {
    match path.strip_prefix("/memories/") {
        Some(rest) => rest.split('/').collect(),
        None => Vec::new(),
    }
}

/// A segment that hides a memory from listings of any directory above it.
#[must_use]
pub fn hidden(segment: &str) -> bool {
    segment.starts_with('.') || segment == "node_modules"
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn normalised_forms() {
        for ok in ["/memories", "/memories/a", "/memories/a/b.md", "/memories/.h", "/memories/C:/a"] {
            assert!(check_normalised(ok).is_ok(), "{ok}");
        }
        for bad in [
            "",
            "/",
            "/memories/",
            "/memoriesx",
            "/memories.md",
            "memories/a",
            "/memories//a",
            "/memories/./a",
            "/memories/../a",
            "/memories/a/",
            "/memories/a/..",
            "/memories/a/.",
        ] {
            assert!(matches!(check_normalised(bad), Err(Error::NotNormalised(_))), "{bad}");
        }
    }

    #[test]
    fn scopes() {
        assert!(valid_scope("default"));
        assert!(valid_scope("a.B_9-x"));
        assert!(valid_scope(&"a".repeat(64)));
        assert!(!valid_scope(&"a".repeat(65)));
        assert!(!valid_scope(""));
        assert!(!valid_scope("a:b"));
        assert!(!valid_scope("a b"));
        assert!(!valid_scope("é"));
    }

    #[test]
    fn parse_round_trip() {
        let k = key("s.1", "/memories/a:b/c");
        assert_eq!(parse(&k), Some(("s.1", "/memories/a:b/c")));
        assert_eq!(parse(b"h:x:/memories/a"), None);
        assert_eq!(segments("/memories"), Vec::<&str>::new());
        assert_eq!(segments("/memories/a/b"), vec!["a", "b"]);
    }
}
