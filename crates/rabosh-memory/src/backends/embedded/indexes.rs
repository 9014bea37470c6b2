//! The listing indexes of one embedded store, each at some published seq, and the changes of
//! commits appended since (in seq order) that bring them forward as those commits become durable.

use std::collections::{HashMap, VecDeque};

use crate::listing_delta::SizeChange;
use crate::listing_index::ScopeIndex;

#[derive(Default)]
pub(crate) struct Indexes {
    pub trees: HashMap<String, ScopeIndex>,
    pub pending: VecDeque<(u64, Vec<SizeChange>)>,
}

impl Indexes {
    pub fn clear(&mut self) {
        self.trees.clear();
        self.pending.clear();
    }

    /// Moves every index to `published` by applying queued commits in order. An index the queue
    /// cannot carry there without a gap is dropped (rebuilt when next asked for); queued
    /// commits no index needs any more are dropped.
    pub fn catch_up(&mut self, published: u64) {
        let pending = &self.pending;
        self.trees.retain(|scope, index| {
            if index.seq > published {
                return false;
            }
            let from = index.seq;
            for (seq, changes) in pending.iter().filter(|(s, _)| *s > from && *s <= published) {
                if *seq != index.seq + 1 {
                    return false;
                }
                index.apply(scope, changes, *seq);
            }
            index.seq == published
        });
        let oldest = self.trees.values().map(|i| i.seq).min();
        match oldest {
            None => self.pending.clear(),
            Some(oldest) => {
                while self.pending.front().is_some_and(|(s, _)| *s <= oldest) {
                    self.pending.pop_front();
                }
            }
        }
    }
}
