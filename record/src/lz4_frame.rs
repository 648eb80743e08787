//! A chunk's lz4 compression: lz4's frame format, written block by block.

use std::io;

/// LZ4's frame format (<https://github.com/lz4/lz4/blob/dev/doc/lz4_Frame_format.md>)
/// as a chunk's compression: the magic number; a descriptor saying version
/// 1, independent blocks of at most 4 MiB, no block or content checksums
/// (the chunk's CRC covers it) and no content size; its header checksum;
/// the blocks; an end mark.
mod lz4_format {
    pub const MAGIC: u32 = 0x184D_2204;
    /// Version 01, blocks independent.
    pub const FLG: u8 = 0b0110_0000;
    /// Blocks of at most 4 MiB.
    pub const BD: u8 = 0b0111_0000;
    pub const BLOCK_MAX_BYTES: usize = 4 << 20;
    /// The second byte of XXH32(FLG, BD) with seed 0, as the format asks.
    pub const HEADER_CHECKSUM: u8 = 0x73;
    /// Set in a block's size: the block is stored, not compressed.
    pub const STORED: u32 = 0x8000_0000;
}

/// LZ4's acceleration: each step up trades a little ratio for speed. On
/// office-50's compressible channels (odometry, twists, tf; the scans are
/// stored), lz4 compressed 2.5 GB/s to 0.114 at 1, 3.4 GB/s to 0.120 at 4
/// and 4.2 GB/s to 0.132 at 8; beyond 8 the ratio falls faster than the
/// speed rises (0.165 at 16 for 4.1 GB/s).
const LZ4_ACCELERATION: i32 = 8;

/// `bytes` as one lz4 frame, written at the start of `out`, which only
/// ever grows (zeroed once, not at every chunk); returns its length.
/// Written block by block with lz4's block compressor: the frame
/// compressor's state is set up for every frame.
pub(crate) fn lz4_frame(bytes: &[u8], out: &mut Vec<u8>) -> io::Result<usize> {
    use lz4_format::*;
    let blocks = bytes.len().div_ceil(BLOCK_MAX_BYTES).max(1);
    let bound = 4 + 3 + blocks * (4 + lz4::block::compress_bound(BLOCK_MAX_BYTES.min(bytes.len()))?) + 4;
    if out.len() < bound {
        out.resize(bound, 0);
    }
    out[..4].copy_from_slice(&MAGIC.to_le_bytes());
    out[4..7].copy_from_slice(&[FLG, BD, HEADER_CHECKSUM]);
    let mut at = 7;
    for block in bytes.chunks(BLOCK_MAX_BYTES) {
        let mode = Some(lz4::block::CompressionMode::FAST(LZ4_ACCELERATION));
        let size = lz4::block::compress_to_buffer(block, mode, false, &mut out[at + 4..])?;
        let size = if size < block.len() {
            size
        } else {
            // Incompressible: stored as it is.
            out[at + 4..at + 4 + block.len()].copy_from_slice(block);
            block.len() | STORED as usize
        };
        let stored = size & STORED as usize != 0;
        out[at..at + 4].copy_from_slice(&(size as u32).to_le_bytes());
        at += 4 + if stored { block.len() } else { size };
    }
    out[at..at + 4].copy_from_slice(&0u32.to_le_bytes());
    Ok(at + 4)
}

#[cfg(test)]
pub(crate) mod tests {
    /// `len` bytes lz4 cannot compress (xorshift noise from `state`).
    pub(crate) fn noise(state: &mut u64, len: usize) -> Vec<u8> {
        (0..len)
            .map(|_| {
                *state ^= *state << 13;
                *state ^= *state >> 7;
                *state ^= *state << 17;
                *state as u8
            })
            .collect()
    }

    #[test]
    fn lz4_frames_read_back_with_lz4_s_own_decoder() {
        let decode = |frame: &[u8]| {
            let mut decoded = Vec::new();
            std::io::Read::read_to_end(&mut lz4::Decoder::new(frame).unwrap(), &mut decoded).unwrap();
            decoded
        };
        let mut state = 0x2545_f491_4f6c_dd1du64;
        let repetitive: Vec<u8> = (0..700_000u32).flat_map(|i| (i % 97).to_le_bytes()).collect();
        let inputs = [
            Vec::new(),
            b"one short message".to_vec(),
            repetitive.clone(),
            noise(&mut state, 300_000),
            // Several blocks of 4 MiB, the last one short.
            [repetitive.clone(), noise(&mut state, 2_000_000), repetitive].concat(),
        ];
        let mut out = Vec::new();
        for input in inputs {
            let len = super::lz4_frame(&input, &mut out).unwrap();
            assert_eq!(decode(&out[..len]), input, "{} bytes", input.len());
        }
        let len = super::lz4_frame(&vec![7; 100_000], &mut out).unwrap();
        assert!(len < 1_000, "a repetitive chunk compresses: {len} bytes");
    }
}
