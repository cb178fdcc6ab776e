//! A small FLAC encoder (RFC 9639) for what the speech server is sent: 16 kHz mono 16-bit PCM.
//!
//! Lossless: the server decodes exactly the samples the WAV would carry, in about half the
//! bytes on speech (docs/REMOTE.md has the figures). Each block of [`BLOCK_SIZE`] samples
//! becomes one frame whose subframe is the cheapest of CONSTANT (digital silence), VERBATIM
//! (noise that does not compress), or a FIXED predictor of order 0–4 with its residual
//! Rice-coded in 2^p equal partitions (p = 0–8), each with its own Rice parameter. No LPC: the
//! fixed predictors get most of the gain on speech for a fraction of the code and time.
//! STREAMINFO carries the MD5 of the samples, so `flac -t` verifies a stream end to end.

use md5::{Digest, Md5};

/// Samples per frame (256 ms at 16 kHz; libFLAC's default).
pub const BLOCK_SIZE: usize = 4096;
const MAX_PARTITION_ORDER: u32 = 8;
/// Rice parameters 0–14 (4-bit parameters; 15 is the escape code, not used).
const MAX_RICE_PARAM: u32 = 14;
const BITS_PER_SAMPLE: u32 = 16;

/// The FLAC file of `samples` (16 kHz, mono, 16-bit).
pub fn encode(samples: &[i16]) -> Vec<u8> {
    encode_counting(samples).0
}

/// Subframe kinds, as counted by [`encode_counting`]: CONSTANT, VERBATIM, FIXED order 0–4.
const KINDS: usize = 7;

/// [`encode`], and how many frames used each subframe kind (tests: every kind is exercised).
fn encode_counting(samples: &[i16]) -> (Vec<u8>, [usize; KINDS]) {
    let mut kinds = [0; KINDS];
    let mut w = BitWriter::with_capacity(samples.len() + 64);
    w.out.extend_from_slice(b"fLaC");
    // STREAMINFO, the only (so the last) metadata block; filled in below.
    w.out.push(0x80);
    w.out.extend_from_slice(&[0, 0, 34]);
    let info_at = w.out.len();
    w.out.extend_from_slice(&[0; 34]);

    let mut min_frame = u32::MAX;
    let mut max_frame = 0u32;
    let mut residual = Vec::with_capacity(BLOCK_SIZE);
    for (number, block) in samples.chunks(BLOCK_SIZE).enumerate() {
        let start = w.out.len();
        kinds[write_frame(&mut w, number as u64, block, &mut residual)] += 1;
        let len = (w.out.len() - start) as u32;
        min_frame = min_frame.min(len);
        max_frame = max_frame.max(len);
    }
    if samples.is_empty() {
        min_frame = 0;
    }

    let mut md5 = Md5::new();
    for s in samples {
        md5.update(s.to_le_bytes());
    }
    let mut info = BitWriter::with_capacity(34);
    info.put(BLOCK_SIZE as u64, 16); // minimum block size (the last block may be shorter)
    info.put(BLOCK_SIZE as u64, 16); // maximum block size
    info.put(u64::from(min_frame), 24);
    info.put(u64::from(max_frame), 24);
    info.put(u64::from(crate::SAMPLE_RATE), 20);
    info.put(0, 3); // channels − 1
    info.put(u64::from(BITS_PER_SAMPLE - 1), 5);
    info.put(samples.len() as u64 >> 32, 4); // total samples: 36 bits
    info.put(samples.len() as u64 & 0xffff_ffff, 32);
    info.out.extend_from_slice(&md5.finalize());
    w.out[info_at..info_at + 34].copy_from_slice(&info.out);
    (w.out, kinds)
}

/// One frame: header, one subframe, padding, CRC-16. Returns the subframe's kind.
fn write_frame(w: &mut BitWriter, number: u64, block: &[i16], residual: &mut Vec<u32>) -> usize {
    let start = w.out.len();
    let n = block.len();
    w.put(0b11_1111_1111_1110, 14); // sync
    w.put(0, 1); // reserved
    w.put(0, 1); // fixed block size: the header carries the frame number
    let (size_code, size_extra) = match n {
        BLOCK_SIZE => (0b1100, None), // 256 · 2^4
        1..=256 => (0b0110, Some(((n - 1) as u64, 8))),
        _ => (0b0111, Some(((n - 1) as u64, 16))),
    };
    w.put(size_code, 4);
    w.put(0b0101, 4); // 16 kHz
    w.put(0b0000, 4); // mono
    w.put(0b100, 3); // 16 bits per sample
    w.put(0, 1); // reserved
    w.put_utf8(number);
    if let Some((v, bits)) = size_extra {
        w.put(v, bits);
    }
    let crc = crc8(&w.out[start..]);
    w.out.push(crc);
    let kind = write_subframe(w, block, residual);
    w.align();
    let crc = crc16(&w.out[start..]);
    w.out.extend_from_slice(&crc.to_be_bytes());
    kind
}

/// The cheapest subframe for `block`; returns its kind (0 CONSTANT, 1 VERBATIM, 2 + order FIXED).
fn write_subframe(w: &mut BitWriter, block: &[i16], residual: &mut Vec<u32>) -> usize {
    let n = block.len();
    if block.iter().all(|&s| s == block[0]) {
        w.put(0, 1);
        w.put(0b000000, 6); // CONSTANT
        w.put(0, 1); // no wasted bits
        w.put_signed(i64::from(block[0]), BITS_PER_SAMPLE);
        return 0;
    }
    let verbatim = n as u64 * u64::from(BITS_PER_SAMPLE);
    let mut best: Option<(u64, usize, Partitioning)> = None;
    for order in 0..=4usize.min(n - 1) {
        fixed_residual(block, order, residual);
        let Some(p) = best_partitioning(residual, n, order) else {
            continue;
        };
        let cost = order as u64 * u64::from(BITS_PER_SAMPLE) + p.bits;
        if best.as_ref().is_none_or(|(c, _, _)| cost < *c) {
            best = Some((cost, order, p));
        }
    }
    match best {
        Some((cost, order, p)) if cost < verbatim => {
            w.put(0, 1);
            w.put(0b001000 | order as u64, 6); // FIXED, order
            w.put(0, 1);
            for &s in &block[..order] {
                w.put_signed(i64::from(s), BITS_PER_SAMPLE);
            }
            fixed_residual(block, order, residual);
            w.put(0b00, 2); // Rice, 4-bit parameters
            w.put(u64::from(p.order), 4);
            let len = n >> p.order;
            let mut from = 0;
            for (i, &k) in p.params.iter().enumerate() {
                let count = if i == 0 { len - order } else { len };
                w.put(u64::from(k), 4);
                for &u in &residual[from..from + count] {
                    w.put_unary(u >> k);
                    w.put(u64::from(u), k);
                }
                from += count;
            }
            2 + order
        }
        _ => {
            w.put(0, 1);
            w.put(0b000001, 6); // VERBATIM
            w.put(0, 1);
            for &s in block {
                w.put_signed(i64::from(s), BITS_PER_SAMPLE);
            }
            1
        }
    }
}

/// The residual of the fixed predictor of `order` (0–4) over `block[order..]`, zigzag-folded
/// to unsigned (0, −1, 1, −2… → 0, 1, 2, 3…) as Rice coding wants it.
fn fixed_residual(block: &[i16], order: usize, out: &mut Vec<u32>) {
    out.clear();
    let x = |i: usize| i64::from(block[i]);
    for i in order..block.len() {
        let r = match order {
            0 => x(i),
            1 => x(i) - x(i - 1),
            2 => x(i) - 2 * x(i - 1) + x(i - 2),
            3 => x(i) - 3 * x(i - 1) + 3 * x(i - 2) - x(i - 3),
            _ => x(i) - 4 * x(i - 1) + 6 * x(i - 2) - 4 * x(i - 3) + x(i - 4),
        };
        // |r| < 2^20 for 16-bit input: the fold fits in u32.
        out.push(((r << 1) ^ (r >> 63)) as u32);
    }
}

struct Partitioning {
    order: u32,
    params: Vec<u32>,
    /// Upper bound of the residual's coded size in bits (method and order fields included).
    bits: u64,
}

/// The partition order and Rice parameters with the fewest bits for `residual` (the
/// predictor of `order` over a block of `n` samples). Sizes come from each partition's sum:
/// Σ⌊u/2^k⌋ ≤ ⌊Σu/2^k⌋, so `bits` never under-counts what is written.
fn best_partitioning(residual: &[u32], n: usize, order: usize) -> Option<Partitioning> {
    // The finest order allowed: n divisible by 2^p, and a first partition longer than the
    // warm-up.
    if n <= order {
        return None;
    }
    let mut finest = 0;
    while finest < MAX_PARTITION_ORDER
        && n.is_multiple_of(1 << (finest + 1))
        && (n >> (finest + 1)) > order
    {
        finest += 1;
    }
    let len = n >> finest;
    let mut sums: Vec<(u64, u64)> = Vec::with_capacity(1 << finest);
    let mut from = 0;
    for i in 0..(1usize << finest) {
        let count = if i == 0 { len - order } else { len };
        let sum = residual[from..from + count]
            .iter()
            .map(|&u| u64::from(u))
            .sum();
        sums.push((sum, count as u64));
        from += count;
    }
    let mut best: Option<Partitioning> = None;
    let mut p = finest;
    loop {
        let mut params = Vec::with_capacity(sums.len());
        let mut bits = 2 + 4;
        for &(sum, count) in &sums {
            let (k, b) = (0..=MAX_RICE_PARAM)
                .map(|k| (k, 4 + count * u64::from(k + 1) + (sum >> k)))
                .min_by_key(|&(_, b)| b)
                .unwrap_or((0, u64::MAX / 4));
            params.push(k);
            bits += b;
        }
        if best.as_ref().is_none_or(|b| bits < b.bits) {
            best = Some(Partitioning {
                order: p,
                params,
                bits,
            });
        }
        if p == 0 {
            break;
        }
        p -= 1;
        sums = sums
            .chunks(2)
            .map(|c| c.iter().fold((0, 0), |a, s| (a.0 + s.0, a.1 + s.1)))
            .collect();
    }
    best
}

/// MSB-first bit packing.
struct BitWriter {
    out: Vec<u8>,
    acc: u64,
    /// Bits waiting in `acc` (always < 8 between calls).
    n: u32,
}

impl BitWriter {
    fn with_capacity(bytes: usize) -> BitWriter {
        BitWriter {
            out: Vec::with_capacity(bytes),
            acc: 0,
            n: 0,
        }
    }

    /// The low `bits` (≤ 32) bits of `value`.
    fn put(&mut self, value: u64, bits: u32) {
        debug_assert!(bits <= 32);
        if bits == 0 {
            return;
        }
        self.acc = (self.acc << bits) | (value & ((1u64 << bits) - 1));
        self.n += bits;
        while self.n >= 8 {
            self.n -= 8;
            self.out.push((self.acc >> self.n) as u8);
        }
    }

    /// Two's complement in `bits` bits.
    fn put_signed(&mut self, value: i64, bits: u32) {
        self.put(value as u64, bits);
    }

    /// `q` zeros, then a one.
    fn put_unary(&mut self, mut q: u32) {
        while q >= 32 {
            self.put(0, 32);
            q -= 32;
        }
        self.put(1, q + 1);
    }

    /// The frame number, coded like UTF-8 (extended to 36 bits by FLAC).
    fn put_utf8(&mut self, v: u64) {
        if v < 0x80 {
            self.put(v, 8);
            return;
        }
        // Continuation bytes carry 6 bits each; the lead byte what is left.
        let tail = match v {
            0..0x800 => 1,
            0x800..0x1_0000 => 2,
            0x1_0000..0x20_0000 => 3,
            0x20_0000..0x400_0000 => 4,
            0x400_0000..0x8000_0000 => 5,
            _ => 6,
        };
        let lead_mark = (0xff00u64 >> (tail + 1)) & 0xff;
        self.put(lead_mark | (v >> (6 * tail)), 8);
        for i in (0..tail).rev() {
            self.put(0x80 | ((v >> (6 * i)) & 0x3f), 8);
        }
    }

    fn align(&mut self) {
        if self.n > 0 {
            self.put(0, 8 - self.n);
        }
    }
}

const fn crc_table<const POLY: u16, const WIDTH: u32>() -> [u16; 256] {
    let mut table = [0u16; 256];
    let top = 1u32 << (WIDTH - 1);
    let mask = ((1u32 << WIDTH) - 1) as u16;
    let mut i = 0;
    while i < 256 {
        let mut c = (i as u32) << (WIDTH - 8);
        let mut b = 0;
        while b < 8 {
            c = if c & top != 0 {
                (c << 1) ^ POLY as u32
            } else {
                c << 1
            };
            b += 1;
        }
        table[i] = (c as u16) & mask;
        i += 1;
    }
    table
}

static CRC8: [u16; 256] = crc_table::<0x07, 8>();
static CRC16: [u16; 256] = crc_table::<0x8005, 16>();

/// CRC-8, polynomial x^8 + x^2 + x + 1, initial 0 (the frame header's).
fn crc8(bytes: &[u8]) -> u8 {
    bytes
        .iter()
        .fold(0u8, |c, &b| CRC8[usize::from(c ^ b)] as u8)
}

/// CRC-16, polynomial x^16 + x^15 + x^2 + 1, initial 0 (the whole frame's).
fn crc16(bytes: &[u8]) -> u16 {
    bytes.iter().fold(0u16, |c, &b| {
        (c << 8) ^ CRC16[usize::from((c >> 8) as u8 ^ b)]
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn decode(flac: &[u8]) -> (claxon::metadata::StreamInfo, Vec<i16>) {
        let mut r = claxon::FlacReader::new(std::io::Cursor::new(flac)).expect("a FLAC stream");
        let info = r.streaminfo();
        let samples = r
            .samples()
            .map(|s| i16::try_from(s.expect("a valid frame")).expect("16-bit"))
            .collect();
        (info, samples)
    }

    fn speech() -> Vec<i16> {
        let dir = std::env::var_os("DICTUM_TEST_ASSETS")
            .map(std::path::PathBuf::from)
            .unwrap_or_else(|| {
                std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../shared")
            });
        hound::WavReader::open(dir.join("audio/dev/jfk.wav"))
            .expect("jfk.wav (DICTUM_TEST_ASSETS)")
            .into_samples::<i16>()
            .map(|s| s.expect("sample"))
            .collect()
    }

    /// Deterministic full-scale white noise (xorshift), both extremes included.
    fn noise(n: usize) -> Vec<i16> {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut v: Vec<i16> = (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as i16
            })
            .collect();
        v[10] = i16::MIN;
        v[11] = i16::MAX;
        v[12] = i16::MIN;
        v
    }

    /// Real speech, digital silence, full-scale noise and a block-size remainder, in one
    /// stream: a real decoder (claxon: every frame's CRC-8 and CRC-16 checked) gives back
    /// exactly the samples, and STREAMINFO's count and MD5 match them.
    #[test]
    fn round_trip_is_exact() {
        let mut samples = speech();
        samples.extend(std::iter::repeat_n(0, 3 * BLOCK_SIZE + 17));
        samples.extend(noise(2 * BLOCK_SIZE + 1000));
        samples.extend(std::iter::repeat_n(-7, 300));
        samples.extend([1, -1, 5]); // a last block shorter than any predictor's warm-up + 2
        let flac = encode(&samples);
        let (info, decoded) = decode(&flac);
        assert_eq!(info.sample_rate, 16_000);
        assert_eq!(info.channels, 1);
        assert_eq!(info.bits_per_sample, 16);
        assert_eq!(info.samples, Some(samples.len() as u64));
        assert_eq!(decoded.len(), samples.len());
        let first_diff = decoded.iter().zip(&samples).position(|(a, b)| a != b);
        assert_eq!(first_diff, None, "decoded samples differ");
        // The MD5 of the samples as a WAV's data chunk holds them (16-bit little-endian).
        let pcm: Vec<u8> = samples.iter().flat_map(|s| s.to_le_bytes()).collect();
        assert_eq!(info.md5sum, <[u8; 16]>::from(Md5::digest(&pcm)));
        // The first frame's header: sync + fixed blocking, 4096 samples | 16 kHz, mono | 16 bit,
        // frame 0, then its CRC-8.
        assert_eq!(flac[42..47], [0xff, 0xf8, 0xc5, 0x08, 0x00]);
        assert_eq!(flac[47], crc8(&flac[42..47]));
        // Speech compresses, noise does not grow beyond verbatim (+ frame overhead).
        let speech_only = encode(&speech());
        assert!(
            speech_only.len() * 10 < speech().len() * 2 * 7,
            "{} bytes",
            speech_only.len()
        );
        let noisy = noise(BLOCK_SIZE * 4);
        assert!(encode(&noisy).len() <= noisy.len() * 2 + 4 * 32 + 42 + 4);
    }

    /// Signals each subframe kind is best for (a sine of angular step `w` has k-th differences
    /// of A·w^k, and added white noise grows with k): every kind is written and decodes
    /// exactly, so a broken predictor or residual coder cannot hide behind one never chosen.
    #[test]
    fn every_subframe_kind_round_trips() {
        let wave = |w: f64, noise_div: i32| -> Vec<i16> {
            noise(BLOCK_SIZE)
                .iter()
                .enumerate()
                .map(|(t, &e)| {
                    let v = (20_000.0 * (w * t as f64).sin()).round() as i32;
                    (v + i32::from(e) / noise_div) as i16
                })
                .collect()
        };
        let mut samples: Vec<i16> = vec![1234; BLOCK_SIZE]; // CONSTANT
        samples.extend(noise(BLOCK_SIZE)); // VERBATIM
        samples.extend(wave(0.0, 40)); // order 0: white noise, ±800
        samples.extend(wave(0.0005, 400)); // order 1
        samples.extend(wave(0.005, i32::MAX)); // order 2 (rounding noise only)
        samples.extend(wave(0.02, i32::MAX)); // order 3
        samples.extend(wave(0.08, i32::MAX)); // order 4
        let (flac, kinds) = encode_counting(&samples);
        assert_eq!(kinds, [1; KINDS], "frames per kind");
        assert_eq!(decode(&flac).1, samples);
    }

    #[test]
    fn short_and_empty_streams() {
        for n in [
            0usize,
            1,
            2,
            5,
            16,
            255,
            256,
            257,
            BLOCK_SIZE - 1,
            BLOCK_SIZE,
            BLOCK_SIZE + 1,
        ] {
            let samples: Vec<i16> = (0..n).map(|i| ((i * 37) % 2001) as i16 - 1000).collect();
            let (info, decoded) = decode(&encode(&samples));
            // A total of 0 reads as "unknown" (RFC 9639): fine for an empty stream.
            assert_eq!(info.samples.unwrap_or(0), n as u64, "{n}");
            assert_eq!(decoded, samples, "{n}");
        }
    }

    /// The round trip catches a broken encoder: one flipped bit of residual, a wrong Rice
    /// parameter or CRC is a decoding error or different samples.
    #[test]
    fn a_corrupted_stream_does_not_pass() {
        let samples = speech();
        let flac = encode(&samples);
        for at in [flac.len() / 3, flac.len() / 2, flac.len() - 1] {
            let mut bad = flac.clone();
            bad[at] ^= 0x10;
            let decoded: Result<Vec<i32>, _> = claxon::FlacReader::new(std::io::Cursor::new(bad))
                .expect("header intact")
                .samples()
                .collect();
            match decoded {
                Err(_) => {}
                Ok(d) => assert!(
                    d.len() != samples.len()
                        || d.iter().zip(&samples).any(|(a, b)| *a != i32::from(*b)),
                    "a flipped bit at {at} went unnoticed"
                ),
            }
        }
    }

    #[test]
    fn crcs_match_the_spec_check_values() {
        // The standard check values of CRC-8/SMBUS and CRC-16/UMTS (= FLAC's) over "123456789".
        assert_eq!(crc8(b"123456789"), 0xf4);
        assert_eq!(crc16(b"123456789"), 0xfee8);
    }

    #[test]
    fn frame_numbers_are_utf8_coded() {
        for (v, want) in [
            (0x00u64, vec![0x00u8]),
            (0x7f, vec![0x7f]),
            (0x80, vec![0xc2, 0x80]),
            (0x7ff, vec![0xdf, 0xbf]),
            (0x800, vec![0xe0, 0xa0, 0x80]),
            (0xffff, vec![0xef, 0xbf, 0xbf]),
            (0x10000, vec![0xf0, 0x90, 0x80, 0x80]),
        ] {
            let mut w = BitWriter::with_capacity(8);
            w.put_utf8(v);
            assert_eq!(w.out, want, "{v:#x}");
        }
    }
}
