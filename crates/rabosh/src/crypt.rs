//! Sealing with the store's data key: XChaCha20-Poly1305, a fresh random 192-bit nonce from the
//! OS for every blob (never a counter or an offset: a torn tail would re-issue those), and
//! associated data that binds each blob to where it belongs (FORMAT.md, "Encryption at rest").
//! A sealed blob is `nonce (24) | ciphertext | tag (16)`.

use chacha20poly1305::aead::array::Array;
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

impl From<NoRandom> for crate::Error {
    fn from(e: NoRandom) -> crate::Error {
        crate::Error::Io {
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

impl Crypt {
    pub fn new(key: &[u8; 32]) -> Crypt {
        Crypt { aead: XChaCha20Poly1305::new(&Array::from(*key)) }
    }

    /// Appends `nonce | seal(plain) | tag` to `out`, the associated data being `ad`'s parts.
    pub fn seal_into(&self, ad: &[&[u8]], plain: &[u8], out: &mut Vec<u8>) -> Result<(), NoRandom> {
        let nonce = random::<NONCE>()?;
        out.reserve(OVERHEAD + plain.len());
        out.extend_from_slice(&nonce[..]);
        let at = out.len();
        out.extend_from_slice(plain);
        let tag = self
            .aead
            .encrypt_inout_detached(&Array::from(*nonce), &ad.concat(), (&mut out[at..]).into())
            .expect("XChaCha20-Poly1305 seals any message this engine writes (< 1 GiB)");
        out.extend_from_slice(&tag);
        Ok(())
    }

    /// The plaintext of a sealed blob, or `None` when it does not authenticate (damage, the
    /// wrong key, or a blob moved from where it was sealed).
    pub fn open(&self, ad: &[&[u8]], blob: &[u8]) -> Option<Vec<u8>> {
        self.open_owned(ad, blob.to_vec())
    }

    /// [`Crypt::open`] decrypting in the blob's own buffer (a value read: no second copy).
    pub fn open_owned(&self, ad: &[&[u8]], mut blob: Vec<u8>) -> Option<Vec<u8>> {
        if blob.len() < OVERHEAD {
            return None;
        }
        let nonce: [u8; NONCE] = blob[..NONCE].try_into().ok()?;
        let tag: [u8; TAG] = blob[blob.len() - TAG..].try_into().ok()?;
        let end = blob.len() - TAG;
        self.aead
            .decrypt_inout_detached(
                &Array::from(nonce),
                &ad.concat(),
                (&mut blob[NONCE..end]).into(),
                &Array::from(tag),
            )
            .ok()?;
        blob.truncate(end);
        blob.drain(..NONCE);
        Some(blob)
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
    }
}
