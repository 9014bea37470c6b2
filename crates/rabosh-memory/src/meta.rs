//! The 40-byte metadata every memory carries beside its content, little-endian:
//! size u64, lines u64, created_ms i64, updated_ms i64, accessed_ms i64 (0 = never).
//! Size and line count are stored so listings, usage and expiry never read a value.

/// Bytes of the encoding below.
pub(crate) const META_LEN: usize = 40;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct MemMeta {
    pub size: u64,
    pub lines: u64,
    pub created_ms: i64,
    pub updated_ms: i64,
    pub accessed_ms: i64,
}

impl MemMeta {
    pub fn for_content(content: &str, created_ms: i64, updated_ms: i64, accessed_ms: i64) -> Self {
        MemMeta {
            size: content.len() as u64,
            lines: content.bytes().filter(|&b| b == b'\n').count() as u64 + 1,
            created_ms,
            updated_ms,
            accessed_ms,
        }
    }

    pub fn encode(&self) -> Vec<u8> {
        let mut m = vec![0u8; META_LEN];
        m[0..8].copy_from_slice(&self.size.to_le_bytes());
        m[8..16].copy_from_slice(&self.lines.to_le_bytes());
        m[16..24].copy_from_slice(&self.created_ms.to_le_bytes());
        m[24..32].copy_from_slice(&self.updated_ms.to_le_bytes());
        m[32..40].copy_from_slice(&self.accessed_ms.to_le_bytes());
        m
    }

    /// Missing trailing bytes read as zero: the engine hands back whatever bytes were stored.
    pub fn decode(m: &[u8]) -> Self {
        let u = |i: usize| {
            let mut b = [0u8; 8];
            let have = m.get(i..).unwrap_or(&[]);
            let n = have.len().min(8);
            b[..n].copy_from_slice(&have[..n]);
            u64::from_le_bytes(b)
        };
        MemMeta {
            size: u(0),
            lines: u(8),
            created_ms: u(16) as i64,
            updated_ms: u(24) as i64,
            accessed_ms: u(32) as i64,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_is_fixed() {
        let m = MemMeta { size: 1, lines: 2, created_ms: -3, updated_ms: 4, accessed_ms: 0 };
        let e = m.encode();
        assert_eq!(&e[0..8], &[1, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(&e[8..16], &[2, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(&e[16..24], &(-3i64).to_le_bytes());
        assert_eq!(MemMeta::decode(&e), m);
    }

    #[test]
    fn counts_bytes_and_lines() {
        let m = MemMeta::for_content("é\na\r\n", 0, 0, 0);
        assert_eq!((m.size, m.lines), (6, 3));
        assert_eq!(MemMeta::for_content("", 0, 0, 0).lines, 1);
    }
}
