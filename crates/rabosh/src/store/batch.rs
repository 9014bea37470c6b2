//! What one commit writes: a batch of puts and deletes.

/// One operation of a batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Op {
    /// `meta`: opaque bytes the layer above keeps beside the value; held in memory for every
    /// key, so listings never read values. At most [`MAX_META`](crate::MAX_META) bytes.
    Put {
        key: Vec<u8>,
        value: Vec<u8>,
        meta: Vec<u8>,
    },
    Delete {
        key: Vec<u8>,
    },
}

/// An atomic group of puts and deletes: one commit, all or nothing.
#[derive(Debug, Clone, Default)]
pub struct Batch {
    pub(crate) ops: Vec<Op>,
}

impl Batch {
    #[must_use]
    pub fn new() -> Self {
        Batch::default()
    }
    /// A batch with room for `ops` operations: a large import's op list then never grows by
    /// doubling (each doubling copies it and leaves the old block behind for a moment).
    #[must_use]
    pub fn with_capacity(ops: usize) -> Self {
        Batch { ops: Vec::with_capacity(ops) }
    }
    pub fn put(&mut self, key: impl Into<Vec<u8>>, value: impl Into<Vec<u8>>, meta: impl Into<Vec<u8>>) {
        self.ops.push(Op::Put { key: key.into(), value: value.into(), meta: meta.into() });
    }
    pub fn delete(&mut self, key: impl Into<Vec<u8>>) {
        self.ops.push(Op::Delete { key: key.into() });
    }
    #[must_use]
    pub fn len(&self) -> usize {
        self.ops.len()
    }
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }
    #[must_use]
    pub fn ops(&self) -> &[Op] {
        &self.ops
    }
}
