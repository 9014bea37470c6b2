//! Sealing with the store's data key: XChaCha20-Poly1305, a fresh random 192-bit nonce from the
//! OS for every blob (never a counter or an offset: a torn tail would re-issue those), and
//! associated data that binds each blob to where it belongs (FORMAT.md, "Encryption at rest").
//! A sealed blob is `nonce (24) | ciphertext | tag (16)`.

use chacha20poly1305::aead::array::Array;
use chacha20poly1305::aead::inout::InOutBuf;
use chacha20poly1305::{AeadInOut, KeyInit, XChaCha20Poly1305};
use std::fmt;

pub const NONCE: usize = 24;
pub const TAG: usize = 16;
/// Bytes a sealed blob adds to its plaintext.
pub const OVERHEAD: usize = NONCE + TAG;

/// Domain tags that open every blob's associated data, so a blob of one kind never opens as
/// another: a frame's keys and metadata, one value, a hint file, the wrapped data key.
pub const AD_HEAD: &[u8; 4] = b"RBH1";
pub const AD_VALUE: &[u8; 4] = b"RBV1";
pub const AD_HINT: &[u8; 4] = b"RBT1";
pub const AD_KEY: &[u8; 4] = b"RBK1";

/// An AEAD under one 32-byte key (the data key, or the host's key for wrapping it). The key
/// schedule is wiped on drop (the crate's `zeroize` feature).
pub struct Crypt {
    aead: XChaCha20Poly1305,
}

impl fmt::Debug for Crypt {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Crypt { .. }")
    }
}

/// The OS random source failed: nothing can be sealed safely.
#[derive(Debug)]
pub struct NoRandom(pub String);

impl From<NoRandom> for crate::error::Error {
    fn from(e: NoRandom) -> crate::error::Error {
        crate::error::Error::Io {
            op: "getrandom",
            path: std::path::PathBuf::new(),
            source: std::io::Error::other(format!("the OS random source failed: {}", e.0)),
        }
    }
}

pub fn random<const N: usize>() -> Result<zeroize::Zeroizing<[u8; N]>, NoRandom> {
    let mut b = zeroize::Zeroizing::new([0u8; N]);
    getrandom::fill(&mut b[..]).map_err(|e| NoRandom(e.to_string()))?;
    Ok(b)
}

/// Nonces a frame's blobs take in turn, all drawn from the OS in one call (one system call per
/// frame instead of one per blob). Each is still 192 random bits of its own: never a counter
/// or an offset.
pub struct Nonces {
    bytes: NonceBytes,
    next: usize,
}

/// Room for the nonces of a frame of up to seven puts on the stack (no allocation per commit).
const INLINE_NONCES: usize = 8;

enum NonceBytes {
    Inline([u8; NONCE * INLINE_NONCES]),
    Heap(Vec<u8>),
}

impl Nonces {
    /// `n` fresh random nonces.
    pub fn draw(n: usize) -> Result<Nonces, NoRandom> {
        let mut bytes = if n <= INLINE_NONCES {
            NonceBytes::Inline([0; NONCE * INLINE_NONCES])
        } else {
            NonceBytes::Heap(vec![0; NONCE * n])
        };
        let b = match &mut bytes {
            NonceBytes::Inline(a) => &mut a[..NONCE * n],
            NonceBytes::Heap(v) => &mut v[..],
        };
        getrandom::fill(b).map_err(|e| NoRandom(e.to_string()))?;
        Ok(Nonces { bytes, next: 0 })
    }

    /// The next unused nonce; each is handed out once (panics past the `n` drawn: a caller
    /// that counted its blobs wrong must not seal one with a repeated nonce).
    fn take(&mut self) -> [u8; NONCE] {
        let b = match &self.bytes {
            NonceBytes::Inline(a) => &a[..],
            NonceBytes::Heap(v) => &v[..],
        };
        let at = self.next * NONCE;
        let nonce = b.get(at..at + NONCE).expect("more blobs sealed than nonces drawn");
        self.next += 1;
        nonce.try_into().expect("NONCE bytes")
    }
}

/// Runs `f` on `parts` joined: on the stack when they fit (every associated data this engine
/// makes does: at most 33 bytes), so a seal or an open allocates nothing for it.
fn with_ad<R>(parts: &[&[u8]], f: impl FnOnce(&[u8]) -> R) -> R {
    let len: usize = parts.iter().map(|p| p.len()).sum();
    let mut stack = [0u8; 64];
    if len > stack.len() {
        return f(&parts.concat());
    }
    let mut at = 0;
    for p in parts {
        stack[at..at + p.len()].copy_from_slice(p);
        at += p.len();
    }
    f(&stack[..len])
}

impl Crypt {
    #[must_use]
    pub fn new(key: &[u8; 32]) -> Crypt {
        Crypt { aead: XChaCha20Poly1305::new(&Array::from(*key)) }
    }

    /// Appends `nonce | seal(plain) | tag` to `out` under a fresh random nonce, the associated
    /// data being `ad`'s parts joined.
    pub fn seal_into(&self, ad: &[&[u8]], plain: &[u8], out: &mut Vec<u8>) -> Result<(), NoRandom> {
        self.seal_with(&mut Nonces::draw(1)?, ad, plain, out);
        Ok(())
    }

    /// [`Crypt::seal_into`] with the next of `nonces` (several blobs of one frame).
    pub fn seal_with(&self, nonces: &mut Nonces, ad: &[&[u8]], plain: &[u8], out: &mut Vec<u8>) {
        let nonce = nonces.take();
        out.reserve(OVERHEAD + plain.len());
        out.extend_from_slice(&nonce);
        let at = out.len();
        out.extend_from_slice(plain);
        let tag = with_ad(ad, |ad| {
            self.aead
                .encrypt_inout_detached(&Array::from(nonce), ad, (&mut out[at..]).into())
                .expect("XChaCha20-Poly1305 seals any message this engine writes (< 1 GiB)")
        });
        out.extend_from_slice(&tag);
    }

    /// The plaintext of a sealed blob, or `None` when it does not authenticate (damage, the
    /// wrong key, or a blob moved from where it was sealed).
    #[must_use]
    pub fn open(&self, ad: &[&[u8]], blob: &[u8]) -> Option<Vec<u8>> {
        let mut plain = Vec::new();
        self.open_to(ad, blob, &mut plain)?;
        Some(plain)
    }

    /// [`Crypt::open`] decrypting in the blob's own buffer (a value read: no second buffer).
    #[must_use]
    pub fn open_owned(&self, ad: &[&[u8]], mut blob: Vec<u8>) -> Option<Vec<u8>> {
        if blob.len() < OVERHEAD {
            return None;
        }
        let (head, body) = blob.split_at_mut(NONCE);
        let end = body.len() - TAG;
        let (text, tag) = body.split_at_mut(end);
        self.decrypt(ad, head, text, tag)?;
        // The plaintext moves down over the nonce: one copy within the buffer.
        blob.copy_within(NONCE..NONCE + end, 0);
        blob.truncate(end);
        Some(blob)
    }

    /// A sealed blob read in two pieces, its `nonce` and `body` (ciphertext then tag), opened in
    /// `body`'s own buffer with no copy and no move: for a large blob (a hint file, read whole
    /// at open) the copy would cost about as much as the cipher's Poly1305 half.
    #[must_use]
    pub fn open_body(&self, ad: &[&[u8]], nonce: &[u8], mut body: Vec<u8>) -> Option<Vec<u8>> {
        let end = body.len().checked_sub(TAG)?;
        let (text, tag) = body.split_at_mut(end);
        self.decrypt(ad, nonce, text, tag)?;
        body.truncate(end);
        Some(body)
    }

    /// [`Crypt::open`] into `out`, read straight from `blob` (no copy of the ciphertext first):
    /// for the key directory's build, which opens every hint page into one reused buffer.
    /// `out` holds the plaintext (its length) when this returns `Some`; otherwise its bytes are
    /// unspecified (the crate checks the tag before it writes any).
    pub fn open_to(&self, ad: &[&[u8]], blob: &[u8], out: &mut Vec<u8>) -> Option<()> {
        let end = blob.len().checked_sub(TAG)?;
        let text = blob.get(NONCE..end)?;
        // Only growth is zeroed: a reused buffer costs no fill per blob.
        if out.len() < text.len() {
            out.resize(text.len(), 0);
        }
        out.truncate(text.len());
        let nonce: [u8; NONCE] = blob[..NONCE].try_into().ok()?;
        let tag: [u8; TAG] = blob[end..].try_into().ok()?;
        let buf = InOutBuf::new(text, &mut out[..]).ok()?;
        with_ad(ad, |ad| self.aead.decrypt_inout_detached(&Array::from(nonce), ad, buf, &Array::from(tag)).ok())
    }

    fn decrypt(&self, ad: &[&[u8]], nonce: &[u8], text: &mut [u8], tag: &[u8]) -> Option<()> {
        let nonce: [u8; NONCE] = nonce.try_into().ok()?;
        let tag: [u8; TAG] = tag.try_into().ok()?;
        with_ad(ad, |ad| self.aead.decrypt_inout_detached(&Array::from(nonce), ad, text.into(), &Array::from(tag)).ok())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opens_only_with_the_same_key_and_associated_data() {
        let c = Crypt::new(&[7; 32]);
        let mut blob = Vec::new();
        c.seal_into(&[b"ad", b"1"], b"secret", &mut blob).unwrap();
        assert_eq!(blob.len(), 6 + OVERHEAD);
        assert!(!blob.windows(6).any(|w| w == b"secret"));
        assert_eq!(c.open(&[b"ad1"], &blob).as_deref(), Some(&b"secret"[..]));
        assert_eq!(c.open(&[b"ad2"], &blob), None);
        assert_eq!(Crypt::new(&[8; 32]).open(&[b"ad1"], &blob), None);
        for i in 0..blob.len() {
            let mut bad = blob.clone();
            bad[i] ^= 1;
            assert_eq!(c.open(&[b"ad1"], &bad), None, "byte {i} flipped");
        }
        let body = |b: &[u8]| b[NONCE..].to_vec();
        assert_eq!(c.open_body(&[b"ad1"], &blob[..NONCE], body(&blob)).as_deref(), Some(&b"secret"[..]));
        assert_eq!(c.open_body(&[b"ad2"], &blob[..NONCE], body(&blob)), None);
        assert_eq!(c.open_body(&[b"ad1"], &blob[..NONCE], body(&blob)[1..].to_vec()), None);
        assert_eq!(c.open_body(&[b"ad1"], &blob[..NONCE], vec![0; TAG - 1]), None);
        for i in 0..blob.len() {
            let mut bad = blob.clone();
            bad[i] ^= 1;
            assert_eq!(c.open_body(&[b"ad1"], &bad[..NONCE], body(&bad)), None, "byte {i} flipped (pieces)");
        }
        // Into a reused buffer, longer or shorter than the plaintext.
        for mut out in [Vec::new(), vec![9; 3], vec![9; 100]] {
            assert_eq!(c.open_to(&[b"ad1"], &blob, &mut out), Some(()));
            assert_eq!(out, b"secret");
            assert_eq!(c.open_to(&[b"ad2"], &blob, &mut out), None);
            for i in 0..blob.len() {
                let mut bad = blob.clone();
                bad[i] ^= 1;
                assert_eq!(c.open_to(&[b"ad1"], &bad, &mut out), None, "byte {i} flipped (into a buffer)");
            }
            for len in 0..blob.len() {
                assert_eq!(c.open_to(&[b"ad1"], &blob[..len], &mut out), None, "cut to {len}");
            }
        }
    }
}
