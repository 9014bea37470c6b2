//! Little-endian integers and the CRC-32C every file of a store is checked with.

pub fn crc(parts: &[&[u8]]) -> u32 {
    parts.iter().fold(0u32, |c, p| crc32c::crc32c_append(c, p))
}

pub fn put_u32(out: &mut Vec<u8>, v: u32) {
    out.extend_from_slice(&v.to_le_bytes());
}
pub fn put_u64(out: &mut Vec<u8>, v: u64) {
    out.extend_from_slice(&v.to_le_bytes());
}
