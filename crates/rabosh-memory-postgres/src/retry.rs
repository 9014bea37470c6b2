//! Jittered exponential backoff between reruns of a conflicting transaction: "full jitter"
//! (a uniform wait up to a doubling cap), so contenders that collided once spread out instead of
//! colliding again in lockstep.

use std::collections::hash_map::RandomState;
use std::hash::{BuildHasher, Hasher};
use std::time::Duration;

pub struct Backoff {
    cap: Duration,
    max: Duration,
    state: u64,
}

impl Backoff {
    pub fn new(first: Duration, max: Duration) -> Backoff {
        // RandomState is seeded per process and per call: enough randomness for jitter, no crate.
        let mut h = RandomState::new().build_hasher();
        h.write_u64(0x9E37_79B9_7F4A_7C15);
        Backoff { cap: first, max, state: h.finish() | 1 }
    }

    fn next_random(&mut self) -> u64 {
        // xorshift64*
        let mut x = self.state;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.state = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    /// The next wait: uniform in `[0, cap]`, then the cap doubles up to `max`.
    pub fn next_wait(&mut self) -> Duration {
        let cap_us = self.cap.as_micros().max(1) as u64;
        let wait = Duration::from_micros(self.next_random() % (cap_us + 1));
        self.cap = (self.cap * 2).min(self.max);
        wait
    }

    pub fn sleep(&mut self) {
        std::thread::sleep(self.next_wait());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_stay_under_a_doubling_cap() {
        let mut b = Backoff::new(Duration::from_millis(1), Duration::from_millis(8));
        let caps = [1, 2, 4, 8, 8, 8];
        let mut distinct = std::collections::HashSet::new();
        for cap in caps {
            let w = b.next_wait();
            assert!(w <= Duration::from_millis(cap), "{w:?} > {cap} ms");
            distinct.insert(w);
        }
        assert!(distinct.len() > 1, "jitter produced one value: {distinct:?}");
    }
}
