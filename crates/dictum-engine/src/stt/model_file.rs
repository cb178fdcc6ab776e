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

struct Reader<R> {
    inner: R,
}

impl<R: Read + Seek> Reader<R> {
    fn i32(&mut self) -> std::io::Result<i32> {
        let mut b = [0u8; 4];
        self.inner.read_exact(&mut b)?;
        Ok(i32::from_le_bytes(b))
    }

    fn skip(&mut self, n: u64) -> std::io::Result<()> {
        self.inner.seek(SeekFrom::Current(n as i64)).map(|_| ())
    }

    fn pos(&mut self) -> std::io::Result<u64> {
        self.inner.stream_position()
    }
}

/// Checks `path` is a complete whisper.cpp ggml model.
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
    if r.pos().unwrap_or(u64::MAX) > file_bytes {
        return Err(truncated("vocabulary"));
    }
    // Tensors until end of file.
    let mut tensors = 0usize;
    loop {
        let pos = r.pos().map_err(|e| corrupt(e.to_string()))?;
        if pos == file_bytes {
            break;
        }
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
            elements = elements.saturating_mul(ne as u64);
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
        let data = elements.div_ceil(block_elems) * block_bytes;
        let end = r.pos().map_err(|e| corrupt(e.to_string()))? + data;
        if end > file_bytes {
            return Err(corrupt(format!(
                "tensor #{tensors} needs {data} bytes but the file ends {} bytes early (truncated download?)",
                end - file_bytes
            )));
        }
        r.skip(data).map_err(|_| truncated("tensor data"))?;
        tensors += 1;
    }
    // Encoder: 2 conv (w,b) + positional + 15 per layer + ln_post (w,b);
    // decoder: positional + token embedding + 24 per layer + ln (w,b).
    let expected = (5 + 15 * n_audio_layer as usize + 2) + (2 + 24 * n_text_layer as usize + 2);
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
