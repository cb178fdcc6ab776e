//! Structural check of a whisper.cpp ggml model file before whisper.cpp sees it. A truncated
//! or corrupt file must give a clear error, never a crash inside C code: this walks the header,
//! vocabulary and every tensor record (seeking over the data), and checks the file holds
//! exactly the tensors a whisper model of its shape has.

use crate::{Error, Result};
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

const GGML_MAGIC: u32 = 0x6767_6d6c;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelInfo {
    pub n_audio_layer: i32,
    pub n_text_layer: i32,
    pub n_audio_state: i32,
    pub n_vocab: i32,
    pub ftype: i32,
    pub tensors: usize,
    pub file_bytes: u64,
}

impl ModelInfo {
    pub fn is_english_only(&self) -> bool {
        self.n_vocab < 51865
    }

    /// Whisper's size name, from the encoder width.
    pub fn size_name(&self) -> &'static str {
        match self.n_audio_state {
            384 => "tiny",
            512 => "base",
            768 => "small",
            1024 => "medium",
            1280 => "large",
            _ => "unknown",
        }
    }
}

/// Bytes per block and elements per block for ggml tensor types whisper files use.
fn type_size(ttype: i32) -> Option<(u64, u64)> {
    Some(match ttype {
        0 => (4, 1),     // F32
        1 => (2, 1),     // F16
        2 => (18, 32),   // Q4_0
        3 => (20, 32),   // Q4_1
        6 => (22, 32),   // Q5_0
        7 => (24, 32),   // Q5_1
        8 => (34, 32),   // Q8_0
        9 => (36, 32),   // Q8_1
        10 => (84, 256), // Q2_K
        11 => (110, 256),
        12 => (144, 256),
        13 => (176, 256),
        14 => (210, 256),
        30 => (2, 1), // BF16
        _ => return None,
    })
}

/// Reads little-endian fields and seeks forward, never past the end of the file: every offset
/// is checked arithmetic on a position this reader tracks itself, so a crafted size cannot
/// wrap around and send the walk backwards (which used to loop forever).
struct Reader<R> {
    inner: R,
    pos: u64,
    len: u64,
}

impl<R: Read + Seek> Reader<R> {
    fn i32(&mut self) -> std::io::Result<i32> {
        let mut b = [0u8; 4];
        self.inner.read_exact(&mut b)?;
        self.pos += 4;
        Ok(i32::from_le_bytes(b))
    }

    /// Skips `n` bytes; an error if that would go past the end of the file.
    fn skip(&mut self, n: u64) -> std::io::Result<()> {
        let to = self
            .pos
            .checked_add(n)
            .filter(|&to| to <= self.len)
            .ok_or_else(|| std::io::Error::from(std::io::ErrorKind::UnexpectedEof))?;
        self.inner.seek(SeekFrom::Start(to))?;
        self.pos = to;
        Ok(())
    }
}

/// Checks `path` is a complete whisper.cpp ggml model. Bounded work whatever the file says:
/// every count is range-checked before it is used, every size is checked arithmetic, the walk
/// only moves forward, and it stops after the number of tensors a model of the header's shape
/// has.
pub fn check_model_file(path: &Path) -> Result<ModelInfo> {
    let corrupt = |reason: String| Error::ModelCorrupt {
        path: path.to_path_buf(),
        reason,
    };
    let file = std::fs::File::open(path).map_err(|e| Error::ModelLoad {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })?;
    let file_bytes = file.metadata().map(|m| m.len()).unwrap_or(0);
    let mut r = Reader {
        inner: std::io::BufReader::new(file),
        pos: 0,
        len: file_bytes,
    };
    let truncated = |what: &str| corrupt(format!("file ends inside the {what} (truncated?)"));

    let magic = r.i32().map_err(|_| truncated("header"))? as u32;
    if magic != GGML_MAGIC {
        return Err(corrupt(format!(
            "not a whisper.cpp ggml model (magic {magic:#010x}, expected {GGML_MAGIC:#010x})"
        )));
    }
    let mut hp = [0i32; 11];
    for v in hp.iter_mut() {
        *v = r.i32().map_err(|_| truncated("header"))?;
    }
    let [n_vocab, _n_audio_ctx, n_audio_state, _, n_audio_layer, _n_text_ctx, _, _, n_text_layer, _n_mels, ftype] =
        hp;
    if !(1..=200_000).contains(&n_vocab)
        || !(1..=64).contains(&n_audio_layer)
        || !(1..=64).contains(&n_text_layer)
    {
        return Err(corrupt(format!(
            "implausible header (vocab {n_vocab}, layers {n_audio_layer}/{n_text_layer})"
        )));
    }
    // Encoder: 2 conv (w,b) + positional + 15 per layer + ln_post (w,b);
    // decoder: positional + token embedding + 24 per layer + ln (w,b). Both layer counts are
    // at most 64 here, so this is at most 2547.
    let expected = (5 + 15 * n_audio_layer as usize + 2) + (2 + 24 * n_text_layer as usize + 2);
    // Mel filters.
    let n_mel = r.i32().map_err(|_| truncated("mel filters"))?;
    let n_fft = r.i32().map_err(|_| truncated("mel filters"))?;
    if !(0..=1024).contains(&n_mel) || !(0..=4096).contains(&n_fft) {
        return Err(corrupt(format!(
            "implausible mel filter shape {n_mel}x{n_fft}"
        )));
    }
    r.skip(4 * n_mel as u64 * n_fft as u64)
        .map_err(|_| truncated("mel filters"))?;
    // Vocabulary.
    let words = r.i32().map_err(|_| truncated("vocabulary"))?;
    if !(0..=200_000).contains(&words) {
        return Err(corrupt(format!("implausible vocabulary size {words}")));
    }
    for _ in 0..words {
        let len = r.i32().map_err(|_| truncated("vocabulary"))?;
        if !(0..=1024).contains(&len) {
            return Err(corrupt(format!("implausible token length {len}")));
        }
        r.skip(len as u64).map_err(|_| truncated("vocabulary"))?;
    }
    // Tensors until end of file; each record moves the walk forward by at least 16 bytes.
    let mut tensors = 0usize;
    while r.pos < file_bytes {
        if tensors == expected {
            return Err(corrupt(format!(
                "holds more than the {expected} tensors a whisper model of this shape has \
                 (extra data from byte {})",
                r.pos
            )));
        }
        let pos = r.pos;
        let header =
            (|| -> std::io::Result<(i32, i32, i32)> { Ok((r.i32()?, r.i32()?, r.i32()?)) })()
                .map_err(|_| truncated("tensor table"))?;
        let (n_dims, name_len, ttype) = header;
        if !(1..=4).contains(&n_dims) || !(1..=256).contains(&name_len) {
            return Err(corrupt(format!(
                "bad tensor record #{tensors} at byte {pos} (dims {n_dims}, name length {name_len})"
            )));
        }
        let mut elements: u64 = 1;
        for _ in 0..n_dims {
            let ne = r.i32().map_err(|_| truncated("tensor table"))?;
            if ne <= 0 {
                return Err(corrupt(format!("tensor #{tensors} has dimension {ne}")));
            }
            elements = elements.checked_mul(ne as u64).ok_or_else(|| {
                corrupt(format!(
                    "tensor #{tensors} at byte {pos} claims more elements than any file can hold"
                ))
            })?;
        }
        r.skip(name_len as u64)
            .map_err(|_| truncated("tensor table"))?;
        let Some((block_bytes, block_elems)) = type_size(ttype) else {
            // A type this check does not know: leave the rest to whisper.cpp.
            tracing::debug!("unknown ggml tensor type {ttype}; stopping structural check");
            return Ok(ModelInfo {
                n_audio_layer,
                n_text_layer,
                n_audio_state,
                n_vocab,
                ftype,
                tensors,
                file_bytes,
            });
        };
        let data = elements.div_ceil(block_elems).checked_mul(block_bytes);
        let left = file_bytes.saturating_sub(r.pos);
        match data {
            Some(data) if data <= left => r.skip(data).map_err(|_| truncated("tensor data"))?,
            Some(data) => {
                return Err(corrupt(format!(
                    "tensor #{tensors} needs {data} bytes but the file ends {} bytes early (truncated download?)",
                    data - left
                )))
            }
            None => {
                return Err(corrupt(format!(
                    "tensor #{tensors} at byte {pos} claims more data than any file can hold"
                )))
            }
        }
        tensors += 1;
    }
    if tensors != expected {
        return Err(corrupt(format!(
            "holds {tensors} tensors, a whisper model of this shape has {expected} (truncated?)"
        )));
    }
    Ok(ModelInfo {
        n_audio_layer,
        n_text_layer,
        n_audio_state,
        n_vocab,
        ftype,
        tensors,
        file_bytes,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::{Duration, Instant};

    fn crafted(name: &str) -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/data/crafted")
            .join(name)
    }

    #[test]
    fn crafted_structures_give_a_clear_error_at_once() {
        // model-seek-loop.bin is the 96-byte file whose tensor size wrapped to "32 bytes
        // back": the old walk never ended.
        let cases = [
            (
                "model-seek-loop.bin",
                "claims more data than any file can hold",
            ),
            ("model-elements-overflow.bin", "claims more elements"),
            ("model-tensor-flood.bin", "holds more than the 167 tensors"),
            ("model-negative-dim.bin", "has dimension -5"),
            ("model-vocab-lie.bin", "file ends inside the vocabulary"),
            ("model-mel-lie.bin", "file ends inside the mel filters"),
        ];
        for (name, message) in cases {
            let t = Instant::now();
            let err = check_model_file(&crafted(name)).expect_err(name);
            assert!(
                matches!(err, Error::ModelCorrupt { .. }) && err.to_string().contains(message),
                "{name}: {err}"
            );
            assert!(
                t.elapsed() < Duration::from_secs(1),
                "{name}: {:?}",
                t.elapsed()
            );
        }
    }

    #[test]
    fn a_size_that_wraps_is_caught_not_skipped_backwards() {
        // Same shape as the crafted file, but each dimension small enough that only the
        // data size (elements x 4 bytes) overflows: 2^62 + 1 elements of f32.
        let dir = tempfile::tempdir().expect("tempdir");
        let mut bytes = std::fs::read(crafted("model-seek-loop.bin")).expect("read");
        let dims_at = 64 + 12;
        for (i, d) in [1i32 << 30, 1 << 30, 4, 1].iter().enumerate() {
            bytes[dims_at + 4 * i..dims_at + 4 * i + 4].copy_from_slice(&d.to_le_bytes());
        }
        let p = dir.path().join("wrap.bin");
        std::fs::write(&p, &bytes).expect("write");
        let err = check_model_file(&p).expect_err("refused");
        assert!(
            err.to_string()
                .contains("claims more data than any file can hold"),
            "{err}"
        );
    }
}
