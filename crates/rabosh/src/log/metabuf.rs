//! The opaque metadata an entry keeps in memory. Every key of a store holds one, so short
//! metadata (the common case) lives inline in the entry instead of in a heap allocation of its
//! own; only longer metadata is boxed.

/// Inline capacity: the inline variant (length byte + bytes + tag) fills the same 48 bytes the
/// boxed variant's alignment rounds the enum up to anyway.
const INLINE: usize = 46;

/// The largest metadata one entry may carry: it stays in memory for every key.
pub const MAX_META: usize = 64 << 10;

#[derive(Clone, PartialEq, Eq)]
pub enum MetaBuf {
    Inline(u8, [u8; INLINE]),
    Heap(Box<[u8]>),
}

impl MetaBuf {
    pub fn new(bytes: &[u8]) -> MetaBuf {
        if bytes.len() <= INLINE {
            let mut buf = [0u8; INLINE];
            buf[..bytes.len()].copy_from_slice(bytes);
            MetaBuf::Inline(bytes.len() as u8, buf)
        } else {
            MetaBuf::Heap(bytes.into())
        }
    }

    pub fn as_slice(&self) -> &[u8] {
        match self {
            MetaBuf::Inline(n, buf) => &buf[..*n as usize],
            MetaBuf::Heap(b) => b,
        }
    }

    pub fn len(&self) -> usize {
        self.as_slice().len()
    }
}

impl std::fmt::Debug for MetaBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MetaBuf({:02x?})", self.as_slice())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_metadata_costs_no_allocation_and_no_extra_width() {
        assert_eq!(std::mem::size_of::<MetaBuf>(), 48);
        for n in [0, 1, 40, INLINE] {
            let bytes: Vec<u8> = (0..n as u8).collect();
            let m = MetaBuf::new(&bytes);
            assert!(matches!(m, MetaBuf::Inline(..)), "{n} bytes should stay inline");
            assert_eq!(m.as_slice(), &bytes[..]);
        }
        let long = vec![7u8; INLINE + 1];
        let m = MetaBuf::new(&long);
        assert!(matches!(m, MetaBuf::Heap(_)));
        assert_eq!(m.as_slice(), &long[..]);
    }
}
