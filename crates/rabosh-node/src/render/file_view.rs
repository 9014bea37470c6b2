//! The file view (contract §4), rendered here next to the memory it reads: `view_range` and
//! `viewMaxChars` applied and the shown lines numbered in one pass into one string, so the answer
//! crosses napi once, flat, instead of as a window the facade splits, numbers and joins (see
//! `render`). The facade words every other answer (src/strings.ts) but the directory view
//! (listing.rs); `str_replace`'s snippet, a few lines, it numbers the same way (`edited`).

use super::text::Text;

const HEADER: &str = "Here's the content of ";
const HEADER_TAIL: &str = " with line numbers:";
const TRUNCATED: &str = "\n[Truncated: showing lines ";
const TRUNCATED_USE: &str = ". Use view_range [";
const TRUNCATED_TAIL: &str = ", -1] to read the rest.]";

/// `[start, end]` as the model sent it, when it is two integers (checked by the facade).
pub type Range = Option<(f64, f64)>;

fn clamp(x: f64, hi: usize) -> usize {
    // Integers of any magnitude arrive as f64; past the file they clamp, so no cast overflows.
    crate::js_number::to_unsigned(x.clamp(0.0, hi as f64)) as usize
}

/// The first and last (exclusive) line index the range selects in a file of `n` lines.
#[allow(clippy::float_cmp)] // -1 is the contract's exact sentinel for "to the end"
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

/// UTF-16 code units of `s`: one per character, two for one outside the BMP (a 4-byte UTF-8
/// sequence). Counted on bytes, so the loop vectorises: every byte but a continuation byte starts
/// a character, and a lead byte of 0xF0 or above starts a 4-byte one.
fn utf16_len(s: &[u8]) -> usize {
    s.iter().map(|&b| usize::from(b & 0xC0 != 0x80) + usize::from(b >= 0xF0)).sum()
}

/// Writes `n` in decimal into `buf`, ending just before `end`, last digit first; returns where
/// the most significant digit is. `end` must leave room for the digits (20 for any u64). The
/// directory view's sizes (listing.rs) and the line numbers here share it.
pub(crate) fn digits_before(buf: &mut [u8], end: usize, mut n: u64) -> usize {
    let mut at = end;
    loop {
        at -= 1;
        buf[at] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            return at;
        }
    }
}

/// A line's number field as `push_number` writes it, kept in ASCII and counted up in place from
/// one shown line to the next, so a line costs one short copy instead of a division per digit
/// and a push per character.
struct LineNumber {
    /// Digits right-aligned before the tab in the last byte; spaces before them.
    buf: [u8; 24],
    /// Where the most significant digit is.
    lead: usize,
}

impl LineNumber {
    const TAB: usize = 23;

    fn new(n: usize) -> LineNumber {
        let mut buf = [b' '; 24];
        buf[Self::TAB] = b'\t';
        let lead = digits_before(&mut buf, Self::TAB, n as u64);
        LineNumber { buf, lead }
    }

    /// The number in six columns or more, and the tab.
    fn field(&self) -> &[u8] {
        &self.buf[self.lead.min(Self::TAB - 6)..]
    }

    fn advance(&mut self) {
        // 24 bytes hold any usize (20 digits), so the carry stops before the buffer's start.
        let mut at = Self::TAB - 1;
        loop {
            match self.buf[at] {
                b'9' => {
                    self.buf[at] = b'0';
                    at -= 1;
                }
                b' ' => {
                    self.buf[at] = b'1';
                    self.lead = at;
                    return;
                }
                d => {
                    self.buf[at] = d + 1;
                    return;
                }
            }
        }
    }
}

fn push_int(out: &mut Vec<u8>, n: usize) {
    use std::io::Write;
    let _ = write!(out, "{n}");
}

/// The whole file view of `content` at `path`: the header, lines `first + 1 … last` the range
/// selects, each numbered, while they fit `max_chars` UTF-16 code units (header excluded, `\n`
/// separators included, the first always shown), then the truncation note if lines were left out.
///
/// Line ends found with memchr, one copy of each shown line. Why here (callgrind, one view of a
/// 4 KiB memory of 65 lines through the handler, 220k instructions before): the JS rendering of a
/// window — split, `padStart`, `String(n)` and ~195 cons-string adds, plus the scavenges they
/// caused — cost ~86k, and the window's own selection here (a byte-filter line count that did not
/// vectorise, `str::split`, a `to_string` and a `chars()` pass per line) ~77k; the whole view is
/// now ~75k. Built as bytes with the line numbers counted up in place (`LineNumber`), the
/// formatting fell again (docs/investigations/view-instructions.md).
pub fn render(path: &str, content: &str, range: Range, max_chars: usize) -> Text {
    let bytes = content.as_bytes();
    let lines = memchr::memchr_iter(b'\n', bytes).count() + 1;
    let (first, last) = bounds(range, lines);
    let ascii = content.is_ascii();
    // Enough for every selected line numbered (ASCII), capped near the budget for a large memory.
    let body = (content.len() + 8 * (last.saturating_sub(first))).min(max_chars.saturating_add(256));
    let mut out = Vec::with_capacity(HEADER.len() + path.len() + HEADER_TAIL.len() + body);
    out.extend_from_slice(HEADER.as_bytes());
    out.extend_from_slice(path.as_bytes());
    out.extend_from_slice(HEADER_TAIL.as_bytes());
    let (mut shown, mut used) = (0, 0);
    let mut number = LineNumber::new(first + 1);
    // Line i spans [start, end of line): the ends are the \n positions, then the content's end.
    let ends = memchr::memchr_iter(b'\n', bytes).chain(std::iter::once(bytes.len()));
    let mut start = 0;
    for (i, end) in ends.enumerate().take(last) {
        let line = &bytes[start..end];
        start = end + 1;
        if i < first {
            continue;
        }
        let units = if ascii { line.len() } else { utf16_len(line) };
        let field = number.field();
        let cost = usize::from(shown > 0) + field.len() + units;
        if shown > 0 && used + cost > max_chars {
            break;
        }
        used += cost;
        out.push(b'\n');
        out.extend_from_slice(field);
        out.extend_from_slice(line);
        number.advance();
        shown += 1;
    }
    if first + shown < last {
        let b = first + shown;
        out.extend_from_slice(TRUNCATED.as_bytes());
        push_int(&mut out, first + 1);
        out.extend_from_slice(b" to ");
        push_int(&mut out, b);
        out.extend_from_slice(b" of ");
        push_int(&mut out, lines);
        out.extend_from_slice(TRUNCATED_USE.as_bytes());
        push_int(&mut out, b + 1);
        out.extend_from_slice(TRUNCATED_TAIL.as_bytes());
    }
    // Whole lines of `content` (cut only at \n) between ASCII parts: valid UTF-8.
    Text::rendered(out, ascii && path.is_ascii())
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fmt::Write as _;

    const H: &str = "Here's the content of /memories/a with line numbers:";

    /// `n` right-aligned in six columns (more when it has more digits), then a tab: the plain
    /// formatting `LineNumber` must agree with.
    fn push_number(out: &mut String, n: usize) {
        write!(out, "{n:>6}\t").unwrap();
    }

    fn view(content: &str, range: Range, max: usize) -> String {
        let text = render("/memories/a", content, range, max);
        text.as_str().strip_prefix(H).expect("the header first").to_string()
    }

    #[test]
    fn a_whole_file_and_its_trailing_empty_line() {
        assert_eq!(view("a\nb\n", None, 16_000), "\n     1\ta\n     2\tb\n     3\t");
        assert_eq!(view("", None, 16_000), "\n     1\t");
        assert_eq!(view("a\r\nb", None, 16_000), "\n     1\ta\r\n     2\tb");
    }

    #[test]
    fn ranges_clamp_like_the_contract() {
        let c = "1\n2\n3\n4\n5";
        let all = "\n     1\t1\n     2\t2\n     3\t3\n     4\t4\n     5\t5";
        assert_eq!(view(c, Some((2.0, 3.0)), 99), "\n     2\t2\n     3\t3");
        assert_eq!(view(c, Some((-7.0, -1.0)), 99), all);
        assert_eq!(view(c, Some((4.0, -2.0)), 99), "");
        assert_eq!(view(c, Some((3.0, -2.0)), 99), "\n     3\t3");
        assert_eq!(view(c, Some((1e300, 1e300)), 99), "");
        assert_eq!(view(c, Some((0.0, 0.0)), 99), "");
        assert_eq!(view(c, Some((5.0, 1e300)), 99), "\n     5\t5");
        assert_eq!(view(c, Some((-1e300, -1e300)), 99), "");
    }

    #[test]
    fn the_budget_counts_numbered_lines_in_utf16_and_never_cuts_below_one() {
        // Each line "x" numbers to 8 units; two lines and the \n between them: 17.
        let note = |a, b, n, c| {
            format!("\n[Truncated: showing lines {a} to {b} of {n}. Use view_range [{c}, -1] to read the rest.]")
        };
        assert_eq!(view("x\nx\nx", None, 17), format!("\n     1\tx\n     2\tx{}", note(1, 2, 3, 3)));
        assert_eq!(view("x\nx\nx", None, 16), format!("\n     1\tx{}", note(1, 1, 3, 2)));
        assert_eq!(view("x\nx\nx", None, 1), format!("\n     1\tx{}", note(1, 1, 3, 2)));
        assert_eq!(view("x\nx\nx", Some((2.0, 3.0)), 1), format!("\n     2\tx{}", note(2, 2, 3, 3)));
        // U+1F600 is two UTF-16 units, four UTF-8 bytes; é one unit, two bytes.
        assert_eq!(view("\u{1F600}\nx", None, 9 + 1 + 8), "\n     1\t\u{1F600}\n     2\tx");
        assert_eq!(view("\u{1F600}\nx", None, 9 + 8), format!("\n     1\t\u{1F600}{}", note(1, 1, 2, 2)));
        assert_eq!(view("é\nx", None, 8 + 1 + 8), "\n     1\té\n     2\tx");
        assert_eq!(view("é\nx", None, 8 + 8), format!("\n     1\té{}", note(1, 1, 2, 2)));
    }

    #[test]
    fn utf16_lengths_agree_with_std() {
        for s in ["", "abc", "é", "€uro", "\u{1F600}", "a\u{10FFFF}\u{FFFF}\u{800}\u{7FF}\u{80}\u{7F}"] {
            assert_eq!(utf16_len(s.as_bytes()), s.encode_utf16().count(), "{s:?}");
        }
    }

    #[test]
    fn line_numbers_past_six_digits_widen_the_column() {
        let mut s = String::new();
        push_number(&mut s, 1_000_000);
        push_number(&mut s, 7);
        push_number(&mut s, 123_456);
        assert_eq!(s, "1000000\t     7\t123456\t");
    }

    #[test]
    fn counted_up_line_numbers_match_formatted_ones() {
        let starts = [1, 7, 9, 98, 99_990, 999_990, 9_999_990, usize::MAX - 3];
        for start in starts {
            let mut n = LineNumber::new(start);
            for k in 0..12usize {
                let Some(at) = start.checked_add(k) else { break };
                let mut expected = String::new();
                push_number(&mut expected, at);
                assert_eq!(std::str::from_utf8(n.field()).unwrap(), expected, "{at}");
                if at == usize::MAX {
                    break;
                }
                n.advance();
            }
        }
    }

    #[test]
    fn ascii_views_cross_as_latin1_and_others_as_utf8() {
        assert!(matches!(render("/memories/a", "x\ny", None, 99), Text::Ascii(_)));
        assert!(matches!(render("/memories/a", "é", None, 99), Text::Utf8(_)));
        assert!(matches!(render("/memories/é", "x", None, 99), Text::Utf8(_)));
    }
}
