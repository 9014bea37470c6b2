//! The text algorithms of str_replace and insert, free of storage so they can be tested alone.
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

/// How many times `needle` occurs without overlaps, stopping at two (all a caller needs).
pub(crate) fn count_upto_two(haystack: &str, needle: &str) -> usize {
    haystack.match_indices(needle).take(2).count()
}

/// Replaces the first occurrence literally (no `$&`-style patterns) and returns the new text and
/// the 1-based line on which the occurrence started.
pub(crate) fn replace_first(haystack: &str, needle: &str, with: &str) -> Option<(String, u64)> {
    let pos = haystack.find(needle)?;
    let mut out = String::with_capacity(haystack.len() - needle.len() + with.len());
    out.push_str(&haystack[..pos]);
    out.push_str(with);
    out.push_str(&haystack[pos + needle.len()..]);
    Some((out, 1 + newlines(&haystack[..pos])))
}

/// Lines `line − 2 … line + 2` of `content` (clamped), with the number of the first one.
pub(crate) fn snippet(content: &str, line: u64) -> (u64, Vec<String>) {
    let all: Vec<&str> = content.split('\n').collect();
    let first = line.saturating_sub(2).max(1);
    let last = (line + 2).min(all.len() as u64);
    let shown = all[(first - 1) as usize..last as usize].iter().map(|s| s.to_string()).collect();
    (first, shown)
}

/// Inserts `text` as a line before index `at`. Err(count) when `at` is missing or outside
/// `[0, count]`, count being the file's lines for insertion (one trailing `\n` dropped first).
pub(crate) fn insert_line(content: &str, at: Option<i64>, text: &str) -> Result<String, u64> {
    let mut lines: Vec<&str> = if content.is_empty() {
        Vec::new()
    } else {
        content.strip_suffix('\n').unwrap_or(content).split('\n').collect()
    };
    let count = lines.len() as u64;
    let at = match at {
        Some(n) if n >= 0 && (n as u64) <= count => n as usize,
        _ => return Err(count),
    };
    lines.insert(at, text.strip_suffix('\n').unwrap_or(text));
    let mut out = lines.join("\n");
    if !out.ends_with('\n') {
        out.push('\n');
    }
    Ok(out)
}

fn newlines(s: &str) -> u64 {
    s.bytes().filter(|&b| b == b'\n').count() as u64
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn overlapping_starts_are_all_listed() {
        let lines = |h: &str, n: &str| occurrence_lines(h, n, &mut 0);
        assert_eq!(lines("aaa", "aa"), vec![1, 1]);
        assert_eq!(count_upto_two("aaa", "aa"), 1);
        assert_eq!(lines("ab ab", "ab"), vec![1, 1]);
        assert_eq!(count_upto_two("ab ab", "ab"), 2);
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
        let (s, line) = replace_first("x\ny = 1", "1", "$& $' $` $1 $$").unwrap();
        assert_eq!(s, "x\ny = $& $' $` $1 $$");
        assert_eq!(line, 2);
        assert_eq!(replace_first("abc", "z", ""), None);
        assert_eq!(replace_first("a\nb\nc", "a\nb", "").unwrap(), ("\nc".to_string(), 1));
    }

    #[test]
    fn snippet_is_clamped() {
        let c = "1\n2\n3\n4\n5\n6\n7";
        assert_eq!(snippet(c, 1), (1, vec!["1".into(), "2".into(), "3".into()]));
        assert_eq!(snippet(c, 4).0, 2);
        assert_eq!(snippet(c, 4).1.len(), 5);
        assert_eq!(snippet(c, 7), (5, vec!["5".into(), "6".into(), "7".into()]));
        assert_eq!(snippet("a\r\nb", 1), (1, vec!["a\r".into(), "b".into()]));
        assert_eq!(snippet("a\n", 2), (1, vec!["a".into(), "".into()]));
    }

    #[test]
    fn insert_rules() {
        assert_eq!(insert_line("a\n", Some(1), ""), Ok("a\n".into()));
        assert_eq!(insert_line("", Some(0), "x"), Ok("x\n".into()));
        assert_eq!(insert_line("", Some(1), "x"), Err(0));
        assert_eq!(insert_line("a\nb", Some(1), "x\n"), Ok("a\nx\nb\n".into()));
        assert_eq!(insert_line("a\nb\n", Some(2), "c"), Ok("a\nb\nc\n".into()));
        assert_eq!(insert_line("a\nb\n", Some(3), "c"), Err(2));
        assert_eq!(insert_line("a\nb\n", Some(-1), "c"), Err(2));
        assert_eq!(insert_line("a\nb\n", None, "c"), Err(2));
        assert_eq!(insert_line("a\n\n", Some(0), "x"), Ok("x\na\n".into()));
        assert_eq!(insert_line("a\n\n", Some(2), ""), Ok("a\n\n".into()));
        // A blank last line of the original can be lost (contract §4: reproduce that).
        assert_eq!(insert_line("a\n\n", Some(1), "x"), Ok("a\nx\n".into()));
        assert_eq!(insert_line("a\n\n\n", Some(3), "x"), Ok("a\n\n\nx\n".into()));
        assert_eq!(insert_line("a\r\nb", Some(1), "x"), Ok("a\r\nx\nb\n".into()));
    }
}
