//! The directory view's text (contract §4, "Directory view"), rendered here rather than in the
//! facade, which words every other answer (src/strings.ts). A listing is the one answer whose size
//! grows with the store: 50,000 entries rendered in JS cost 3-60 ms of JS-thread time (BigInt-free
//! formatting, cold code on a fresh process at the top of that range) plus the flattening of a
//! 250,000-piece string, against about 1 ms to take one finished string across napi. Rendered
//! on the pool, the JS thread only receives it.

use rabosh_memory::DirEntry;

const HEADER: &str = "Here're the files and directories up to 2 levels deep in ";
const HEADER_TAIL: &str = ", excluding hidden items and node_modules:";

/// `n` in decimal. By hand: `write!` through the formatting machinery (and, here, a u128) was
/// the larger part of a listing line's cost.
fn push_decimal(out: &mut String, n: u64) {
    let mut buf = [0u8; 20];
    let at = super::file_view::digits_before(&mut buf, 20, n);
    buf[at..].iter().for_each(|&d| out.push(char::from(d)));
}

/// `0B`, `512B`, `4K`, `1.2K`: the largest unit not above the value (capped at G), no decimals for
/// a whole quotient, else one decimal rounded half to even on the exact quotient.
pub fn push_size(out: &mut String, bytes: u64) {
    const UNITS: [char; 4] = ['B', 'K', 'M', 'G'];
    let exp = (0..4).rev().find(|&e| bytes >= 1u64 << (10 * e)).unwrap_or(0);
    let shift = 10 * exp;
    if bytes & ((1u64 << shift) - 1) == 0 {
        push_decimal(out, bytes >> shift);
        out.push(UNITS[exp]);
        return;
    }
    // Tenths in u128: bytes * 10 may not fit a u64.
    let unit = 1u128 << shift;
    let v = u128::from(bytes);
    let mut tenths = v * 10 / unit;
    let twice_rest = (v * 10 % unit) * 2;
    if twice_rest > unit || (twice_rest == unit && tenths % 2 == 1) {
        tenths += 1;
    }
    // At most u64::MAX * 10 / 1024, so the whole part fits a u64.
    push_decimal(out, (tenths / 10) as u64);
    out.push('.');
    out.push(char::from(b'0' + (tenths % 10) as u8));
    out.push(UNITS[exp]);
}

/// The whole answer: header, the total line, then one line per entry in the order given.
pub fn render(path: &str, total: u64, entries: &[DirEntry]) -> String {
    let per_line = path.len() + 10;
    let mut out = String::with_capacity(
        HEADER.len() + path.len() + HEADER_TAIL.len() + entries.iter().map(|e| e.rel.len() + per_line).sum::<usize>(),
    );
    out.push_str(HEADER);
    out.push_str(path);
    out.push_str(HEADER_TAIL);
    out.push('\n');
    push_size(&mut out, total);
    out.push('\t');
    out.push_str(path);
    for e in entries {
        out.push('\n');
        push_size(&mut out, e.size);
        out.push('\t');
        out.push_str(path);
        out.push('/');
        out.push_str(&e.rel);
        if e.is_dir {
            out.push('/');
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn size(bytes: u64) -> String {
        let mut s = String::new();
        push_size(&mut s, bytes);
        s
    }

    /// Independent of the code above: the decimal expansion of bytes / 1024^exp, written out by
    /// long division, then rounded half to even by hand on its digits.
    fn reference(bytes: u64) -> String {
        let units = ["B", "K", "M", "G"];
        let mut exp = 0;
        while exp < 3 && bytes as f64 >= 1024f64.powi(i32::try_from(exp).unwrap() + 1) {
            exp += 1;
        }
        let unit = 1024u128.pow(exp as u32);
        let whole = u128::from(bytes) / unit;
        let mut rest = u128::from(bytes) % unit;
        if rest == 0 {
            return format!("{whole}{}", units[exp]);
        }
        let mut digits = Vec::new();
        while rest != 0 {
            rest *= 10;
            digits.push(rest / unit);
            rest %= unit;
        }
        let first = digits[0];
        let after: &[u128] = &digits[1..];
        let above_half = after.first().is_some_and(|&d| d > 5) || (after.first() == Some(&5) && after.len() > 1);
        let exactly_half = after == [5];
        let (mut w, mut d) = (whole, first);
        if above_half || (exactly_half && d % 2 == 1) {
            d += 1;
            if d == 10 {
                d = 0;
                w += 1;
            }
        }
        format!("{w}.{d}{}", units[exp])
    }

    #[test]
    fn sizes_at_the_edges() {
        let cases = [
            (0, "0B"),
            (512, "512B"),
            (1023, "1023B"),
            (1024, "1K"),
            (1280, "1.2K"),
            (1331, "1.3K"),
            (1792, "1.8K"),
            (4096, "4K"),
            (1_048_575, "1024.0K"),
            (1_048_576, "1M"),
            (1_610_612_736, "1.5G"),
            (5 * (1 << 40), "5120G"),
        ];
        for (bytes, want) in cases {
            assert_eq!(size(bytes), want, "{bytes}");
        }
    }

    #[test]
    fn sizes_agree_with_long_division() {
        // A fixed pseudo-random walk over every magnitude, plus every tie (a quarter unit past a
        // tenth) near the unit boundaries.
        let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
        for _ in 0..50_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let bytes = x >> (x % 53 + 11);
            assert_eq!(size(bytes), reference(bytes), "{bytes}");
        }
        for exp in 1..4u32 {
            let unit = 1u64 << (10 * exp);
            for k in 1..200u64 {
                for q in [1, 3] {
                    let bytes = k * unit + q * unit / 4;
                    assert_eq!(size(bytes), reference(bytes), "{bytes}");
                }
            }
        }
    }

    #[test]
    fn a_listing_in_the_contracts_shape() {
        let e = |rel: &str, size, is_dir| DirEntry { rel: rel.into(), size, is_dir };
        let text = render("/memories/p", 2304, &[e("a.md", 1280, false), e("d", 1024, true), e("d/b.md", 1024, false)]);
        assert_eq!(
            text,
            "Here're the files and directories up to 2 levels deep in /memories/p, excluding hidden items and \
             node_modules:\n2.2K\t/memories/p\n1.2K\t/memories/p/a.md\n1K\t/memories/p/d/\n1K\t/memories/p/d/b.md"
        );
        assert!(render("/memories", 0, &[]).ends_with("node_modules:\n0B\t/memories"));
    }
}
