//! The part of a memory a file view shows (contract §4, "File view"): `view_range` and
//! `viewMaxChars` applied here, on the pool, so only the shown lines cross to JS. The facade
//! still numbers the lines and words the header and the truncation note.

/// Lines `first` (0-based) … `first + shown` of a memory of `lines` lines, as one substring.
#[derive(Debug, PartialEq, Eq)]
pub struct Window<'a> {
    pub first: usize,
    pub shown: usize,
    pub lines: usize,
    /// Lines of the selected range were left out for the budget.
    pub truncated: bool,
    /// The shown lines joined by `\n` (a slice of the content).
    pub text: &'a str,
}

/// `[start, end]` as the model sent it, when it is two integers (checked by the facade).
pub type Range = Option<(f64, f64)>;

fn clamp(x: f64, hi: usize) -> usize {
    // Integers of any magnitude arrive as f64; past the file they clamp, so no cast overflows.
    x.clamp(0.0, hi as f64) as usize
}

/// The first and last (exclusive) line index the range selects in a file of `n` lines.
fn bounds(range: Range, n: usize) -> (usize, usize) {
    let Some((start, end)) = range else {
        return (0, n);
    };
    let first = clamp(start.max(1.0) - 1.0, n);
    let last = if end == -1.0 {
        n
    } else if end < -1.0 {
        clamp(n as f64 + end, n)
    } else {
        clamp(end, n)
    };
    (first, last)
}

/// UTF-16 code units of `\n`-free `line` numbered as line `number`: 6 columns (or more), a tab.
fn numbered_len(number: usize, line: &str) -> usize {
    let digits = number.to_string().len();
    digits.max(6) + 1 + line.chars().map(char::len_utf16).sum::<usize>()
}

pub fn select(content: &str, range: Range, max_chars: usize) -> Window<'_> {
    let lines = content.bytes().filter(|&b| b == b'\n').count() + 1;
    let (first, last) = bounds(range, lines);
    let mut window = Window { first, shown: 0, lines, truncated: false, text: "" };
    let (mut from, mut to, mut used, mut at) = (None, 0, 0, 0);
    for (i, line) in content.split('\n').enumerate().take(last) {
        let start = at;
        at += line.len() + 1;
        if i < first {
            continue;
        }
        let cost = usize::from(window.shown > 0) + numbered_len(i + 1, line);
        if window.shown > 0 && used + cost > max_chars {
            break;
        }
        used += cost;
        from.get_or_insert(start);
        to = start + line.len();
        window.shown += 1;
    }
    window.truncated = first + window.shown < last;
    if let Some(from) = from {
        window.text = &content[from..to];
    }
    window
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shown(content: &str, range: Range, max: usize) -> (usize, usize, usize, bool, &str) {
        let w = select(content, range, max);
        (w.first, w.shown, w.lines, w.truncated, w.text)
    }

    #[test]
    fn a_whole_file_and_its_trailing_empty_line() {
        assert_eq!(shown("a\nb\n", None, 16_000), (0, 3, 3, false, "a\nb\n"));
        assert_eq!(shown("", None, 16_000), (0, 1, 1, false, ""));
    }

    #[test]
    fn ranges_clamp_like_the_contract() {
        let c = "1\n2\n3\n4\n5";
        assert_eq!(shown(c, Some((2.0, 3.0)), 99), (1, 2, 5, false, "2\n3"));
        assert_eq!(shown(c, Some((-7.0, -1.0)), 99), (0, 5, 5, false, c));
        assert_eq!(shown(c, Some((4.0, -2.0)), 99), (3, 0, 5, false, ""));
        assert_eq!(shown(c, Some((3.0, -2.0)), 99), (2, 1, 5, false, "3"));
        assert_eq!(shown(c, Some((1e300, 1e300)), 99), (5, 0, 5, false, ""));
        assert_eq!(shown(c, Some((0.0, 0.0)), 99), (0, 0, 5, false, ""));
        assert_eq!(shown(c, Some((5.0, 1e300)), 99), (4, 1, 5, false, "5"));
    }

    #[test]
    fn the_budget_counts_numbered_lines_in_utf16_and_never_cuts_below_one() {
        // Each line "x" numbers to 8 units; two lines and the \n between them: 17.
        assert_eq!(shown("x\nx\nx", None, 17), (0, 2, 3, true, "x\nx"));
        assert_eq!(shown("x\nx\nx", None, 16), (0, 1, 3, true, "x"));
        assert_eq!(shown("x\nx\nx", None, 1), (0, 1, 3, true, "x"));
        // U+1F600 is two UTF-16 units, four UTF-8 bytes.
        assert_eq!(shown("\u{1F600}\nx", None, 9 + 1 + 8), (0, 2, 2, false, "\u{1F600}\nx"));
        assert_eq!(shown("\u{1F600}\nx", None, 9 + 8), (0, 1, 2, true, "\u{1F600}"));
    }

    #[test]
    fn line_numbers_past_six_digits_widen_the_column() {
        assert_eq!(numbered_len(1_000_000, "ab"), 7 + 1 + 2);
        assert_eq!(numbered_len(7, ""), 7);
    }
}
