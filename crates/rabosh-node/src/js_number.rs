//! JS numbers arrive as f64. Where one becomes an unsigned count, it has been checked to be a
//! non-negative integer in range (or is clamped on purpose); this is the one cast that does it.

/// `v` as an unsigned integer: exact for the checked integers callers pass, saturating for
/// anything else (negative and NaN to 0), as Rust's float casts are.
#[allow(clippy::cast_sign_loss, clippy::cast_possible_truncation)] // saturation is the point
pub(crate) fn to_unsigned(v: f64) -> u64 {
    v as u64
}

#[cfg(test)]
mod tests {
    #[test]
    fn saturates() {
        assert_eq!(super::to_unsigned(3.0), 3);
        assert_eq!(super::to_unsigned(-1.0), 0);
        assert_eq!(super::to_unsigned(f64::NAN), 0);
        assert_eq!(super::to_unsigned(1e300), u64::MAX);
    }
}
