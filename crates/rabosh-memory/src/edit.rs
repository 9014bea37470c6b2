//! The text algorithms of `str_replace` and insert, free of storage so they can be tested alone.
//! Lines are split on `\n` only: a `\r` stays part of its line.

/// 1-based line of the start of every occurrence of `needle`, counted WITH overlaps
/// (`aa` in `aaa` starts on two positions). `needle` must not be empty.
///
/// Linear in `haystack.len() + needle.len()` whatever the input (the model chooses both): one
/// pass of the prefix-function automaton over the bytes, lines counted by a cursor that only moves
/// forward. A match of valid UTF-8 in valid UTF-8 can only start on a character boundary, so
/// byte positions are character positions here. `steps` counts automaton transitions and cursor
/// moves, so tests can bound the work without timing it.
pub(crate) fn occurrence_lines(haystack: &str, needle: &str, steps: &mut u64) -> Vec<u64> {
    debug_assert!(!needle.is_empty());
    let (text, pat) = (haystack.as_bytes(), needle.as_bytes());
    let border = prefix_function(pat, steps);
    let mut lines = Vec::new();
    let (mut line, mut counted_to, mut matched) = (1u64, 0usize, 0usize);
    for (i, &b) in text.iter().enumerate() {
        while matched > 0 && pat[matched] != b {
            matched = border[matched - 1];
            *steps += 1;
        }
        if pat[matched] == b {
            matched += 1;
        }
        *steps += 1;
        if matched == pat.len() {
            let start = i + 1 - pat.len();
            for &c in &text[counted_to..start] {
                line += u64::from(c == b'\n');
            }
            *steps += (start - counted_to) as u64;
            counted_to = start;
            lines.push(line);
            matched = border[matched - 1];
        }
    }
    lines
}

/// `border[i]`: length of the longest proper prefix of `pat[..=i]` that is also its suffix.
fn prefix_function(pat: &[u8], steps: &mut u64) -> Vec<usize> {
    let mut border = vec![0; pat.len()];
    let mut k = 0;
    for i in 1..pat.len() {
        while k > 0 && pat[k] != pat[i] {
            k = border[k - 1];
            *steps += 1;
        }
        if pat[k] == pat[i] {
            k += 1;
        }
        *steps += 1;
        border[i] = k;
    }
    border
}

/// Where `needle` occurs in `haystack`, counted without overlaps and only as far as `str_replace`
/// needs: nowhere, once (at this byte offset), or more than once. `needle` must not be empty.
///
/// These run on the writer thread inside the commit, before its fsync, so every byte scan here
/// is on the durable edit's latency: the searches are memchr's vectorised ones, and each byte of
/// the memory is scanned once (the first occurrence, then the rest for a second one).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Found {
    Nowhere,
    Once(usize),
    Several,
}

pub(crate) fn find_unique(haystack: &str, needle: &str) -> Found {
    debug_assert!(!needle.is_empty());
    let finder = memchr::memmem::Finder::new(needle.as_bytes());
    let text = haystack.as_bytes();
    match finder.find(text) {
        None => Found::Nowhere,
        Some(pos) if finder.find(&text[pos + needle.len()..]).is_some() => Found::Several,
        Some(pos) => Found::Once(pos),
    }
}

/// Replaces the `needle_len` bytes at `pos` (an occurrence [`find_unique`] found) literally (no
/// `$&`-style patterns); returns the new text and the 1-based line on which the occurrence started.
pub(crate) fn replace_at(haystack: &str, pos: usize, needle_len: usize, with: &str) -> (String, u64) {
    let mut out = String::with_capacity(haystack.len() - needle_len + with.len());
    out.push_str(&haystack[..pos]);
    out.push_str(with);
    out.push_str(&haystack[pos + needle_len..]);
    (out, 1 + newlines(&haystack[..pos]))
}

/// Lines `line − 2 … line + 2` of `content` (clamped), with the number of the first one; `pos`
/// is a byte offset on line `line` (the replacement's start). Only those lines are walked: the
/// start of the first is found backwards from `pos`, not by splitting the whole memory.
pub(crate) fn snippet_at(content: &str, pos: usize, line: u64) -> (u64, Vec<String>) {
    let bytes = content.as_bytes();
    let first = line.saturating_sub(2).max(1);
    let line_start = |end: usize| memchr::memrchr(b'\n', &bytes[..end]).map_or(0, |i| i + 1);
    let mut start = line_start(pos);
    for _ in first..line {
        // Line `line` is not the first, so a newline ends the line before it.
        start = line_start(start - 1);
    }
    let wanted = (line + 2 - first + 1) as usize;
    let shown = content[start..].split('\n').take(wanted).map(str::to_string).collect();
    (first, shown)
}

/// Inserts `text` as a line before index `at`. Err(count) when `at` is missing or outside
/// `[0, count]`, count being the file's lines for insertion (one trailing `\n` dropped first).
/// Built by splicing at the line's byte offset, found by a vectorised newline search.
pub(crate) fn insert_at(content: &str, at: Option<i64>, text: &str) -> Result<String, u64> {
    let body = content.strip_suffix('\n').unwrap_or(content);
    let count = if content.is_empty() { 0 } else { newlines(body) + 1 };
    let at = match at {
        Some(n) if u64::try_from(n).is_ok_and(|n| n <= count) => n.unsigned_abs(),
        _ => return Err(count),
    };
    let text = text.strip_suffix('\n').unwrap_or(text);
    let mut out = String::with_capacity(body.len() + text.len() + 2);
    if count == 0 {
        out.push_str(text);
    } else if at == count {
        out.push_str(body);
        out.push('\n');
        out.push_str(text);
    } else {
        // Line `at` starts after the at-th newline (at < count, so that newline exists).
        let off = match at {
            0 => 0,
            n => memchr::memchr_iter(b'\n', body.as_bytes()).nth(n as usize - 1).map_or(body.len(), |i| i + 1),
        };
        out.push_str(&body[..off]);
        out.push_str(text);
        out.push('\n');
        out.push_str(&body[off..]);
    }
    if !out.ends_with('\n') {
        out.push('\n');
    }
    Ok(out)
}

/// `\n` bytes in `s` (memchr's vectorised count: line counts are taken on every write).
pub(crate) fn newlines(s: &str) -> u64 {
    memchr::memchr_iter(b'\n', s.as_bytes()).count() as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    // ---- the longhand models: the straightforward split-and-join versions these replaced ----

    fn count_upto_two(haystack: &str, needle: &str) -> usize {
        haystack.match_indices(needle).take(2).count()
    }

    fn replace_first(haystack: &str, needle: &str, with: &str) -> Option<(String, u64)> {
        let pos = haystack.find(needle)?;
        let edited = format!("{}{with}{}", &haystack[..pos], &haystack[pos + needle.len()..]);
        Some((edited, 1 + haystack[..pos].bytes().filter(|&b| b == b'\n').count() as u64))
    }

    fn snippet(content: &str, line: u64) -> (u64, Vec<String>) {
        let all: Vec<&str> = content.split('\n').collect();
        let first = line.saturating_sub(2).max(1);
        let last = (line + 2).min(all.len() as u64);
        (first, all[(first - 1) as usize..last as usize].iter().map(std::string::ToString::to_string).collect())
    }

    fn insert_line(content: &str, at: Option<i64>, text: &str) -> Result<String, u64> {
        let mut lines: Vec<&str> = if content.is_empty() {
            Vec::new()
        } else {
            content.strip_suffix('\n').unwrap_or(content).split('\n').collect()
        };
        let count = lines.len() as u64;
        let at = match at {
            Some(n) if u64::try_from(n).is_ok_and(|n| n <= count) => n.unsigned_abs() as usize,
            _ => return Err(count),
        };
        lines.insert(at, text.strip_suffix('\n').unwrap_or(text));
        let mut out = lines.join("\n");
        if !out.ends_with('\n') {
            out.push('\n');
        }
        Ok(out)
    }

    /// What `str_replace`'s text steps give: None for no match, Err for several, else the edited
    /// text, the snippet's first line and its lines.
    type Replaced = Option<Result<(String, u64, Vec<String>), ()>>;

    /// `str_replace`'s text steps as commands.rs runs them.
    fn str_replace(content: &str, old: &str, new: &str) -> Replaced {
        match find_unique(content, old) {
            Found::Nowhere => None,
            Found::Several => Some(Err(())),
            Found::Once(pos) => {
                let (edited, line) = replace_at(content, pos, old.len(), new);
                let (first, shown) = snippet_at(&edited, pos, line);
                Some(Ok((edited, first, shown)))
            }
        }
    }

    fn str_replace_longhand(content: &str, old: &str, new: &str) -> Replaced {
        match count_upto_two(content, old) {
            0 => None,
            1 => {
                let (edited, line) = replace_first(content, old, new)?;
                let (first, shown) = snippet(&edited, line);
                Some(Ok((edited, first, shown)))
            }
            _ => Some(Err(())),
        }
    }

    /// Text from a small alphabet, so needles match, overlap and straddle lines often.
    fn text(max: usize) -> impl Strategy<Value = String> {
        proptest::collection::vec(
            prop_oneof![Just("a"), Just("b"), Just("\n"), Just("\r"), Just("é"), Just("ab\n")],
            0..max,
        )
        .prop_map(|parts| parts.concat())
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2_000))]

        #[test]
        fn str_replace_agrees_with_the_longhand(content in text(40), old in text(4), new in text(6)) {
            prop_assume!(!old.is_empty());
            prop_assert_eq!(str_replace(&content, &old, &new), str_replace_longhand(&content, &old, &new));
        }

        #[test]
        fn insert_agrees_with_the_longhand(content in text(30), text in text(4), at in proptest::option::of(-2i64..14)) {
            prop_assert_eq!(insert_at(&content, at, &text), insert_line(&content, at, &text));
        }

        #[test]
        fn newlines_are_counted(content in text(60)) {
            prop_assert_eq!(newlines(&content), content.bytes().filter(|&b| b == b'\n').count() as u64);
        }
    }

    #[test]
    fn overlapping_starts_are_all_listed() {
        let lines = |h: &str, n: &str| occurrence_lines(h, n, &mut 0);
        assert_eq!(lines("aaa", "aa"), vec![1, 1]);
        assert_eq!(find_unique("aaa", "aa"), Found::Once(0));
        assert_eq!(lines("ab ab", "ab"), vec![1, 1]);
        assert_eq!(find_unique("ab ab", "ab"), Found::Several);
        assert_eq!(find_unique("ab ab", "ba"), Found::Nowhere);
        assert_eq!(lines("x\nab\n\nab", "ab"), vec![2, 4]);
        assert_eq!(lines("é\néé", "é"), vec![1, 2, 2]);
        assert_eq!(lines("a\nb\na\nb", "a\nb"), vec![1, 3]);
    }

    #[test]
    fn occurrence_counting_is_linear_in_text_and_pattern() {
        // The old search restarted `find` after every start: on `a`×n with an `a`×m pattern that is
        // about n·m byte comparisons. The automaton's steps stay within a small multiple of n + m.
        for (n, m) in [(4_000, 1), (4_000, 250), (4_000, 2_000), (20_000, 4_000)] {
            let (text, pat) = ("a".repeat(n), "a".repeat(m));
            let mut steps = 0;
            let lines = occurrence_lines(&text, &pat, &mut steps);
            assert_eq!(lines.len(), n - m + 1);
            assert!(steps <= 3 * (n + m) as u64, "n={n} m={m}: {steps} steps");
        }
        // Lines stay right when many newlines precede far-apart matches.
        let text = format!("{}ab{}ab", "\n".repeat(1_000), "x\n".repeat(500));
        let mut steps = 0;
        assert_eq!(occurrence_lines(&text, "ab", &mut steps), vec![1_001, 1_501]);
        assert!(steps <= 3 * text.len() as u64 + 10, "{steps}");
    }

    #[test]
    fn replacement_is_literal() {
        let (s, line) = replace_at("x\ny = 1", 6, 1, "$& $' $` $1 $$");
        assert_eq!(s, "x\ny = $& $' $` $1 $$");
        assert_eq!(line, 2);
        assert_eq!(replace_at("a\nb\nc", 0, 3, ""), ("\nc".to_string(), 1));
    }

    #[test]
    fn snippet_is_clamped() {
        let c = "1\n2\n3\n4\n5\n6\n7";
        assert_eq!(snippet_at(c, 0, 1), (1, vec!["1".into(), "2".into(), "3".into()]));
        assert_eq!(snippet_at(c, 6, 4), (2, vec!["2".into(), "3".into(), "4".into(), "5".into(), "6".into()]));
        assert_eq!(snippet_at(c, 12, 7), (5, vec!["5".into(), "6".into(), "7".into()]));
        assert_eq!(snippet_at("a\r\nb", 0, 1), (1, vec!["a\r".into(), "b".into()]));
        assert_eq!(snippet_at("a\n", 2, 2), (1, vec!["a".into(), String::new()]));
    }

    #[test]
    fn insert_rules() {
        assert_eq!(insert_at("a\n", Some(1), ""), Ok("a\n".into()));
        assert_eq!(insert_at("", Some(0), "x"), Ok("x\n".into()));
        assert_eq!(insert_at("", Some(1), "x"), Err(0));
        assert_eq!(insert_at("a\nb", Some(1), "x\n"), Ok("a\nx\nb\n".into()));
        assert_eq!(insert_at("a\nb\n", Some(2), "c"), Ok("a\nb\nc\n".into()));
        assert_eq!(insert_at("a\nb\n", Some(3), "c"), Err(2));
        assert_eq!(insert_at("a\nb\n", Some(-1), "c"), Err(2));
        assert_eq!(insert_at("a\nb\n", None, "c"), Err(2));
        assert_eq!(insert_at("a\n\n", Some(0), "x"), Ok("x\na\n".into()));
        assert_eq!(insert_at("a\n\n", Some(2), ""), Ok("a\n\n".into()));
        // A blank last line of the original can be lost (contract §4: reproduce that).
        assert_eq!(insert_at("a\n\n", Some(1), "x"), Ok("a\nx\n".into()));
        assert_eq!(insert_at("a\n\n\n", Some(3), "x"), Ok("a\n\n\nx\n".into()));
        assert_eq!(insert_at("a\r\nb", Some(1), "x"), Ok("a\r\nx\nb\n".into()));
        assert_eq!(insert_at("\n", Some(0), "x"), Ok("x\n".into()));
    }
}
