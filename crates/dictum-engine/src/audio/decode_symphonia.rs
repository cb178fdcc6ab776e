//! Compressed audio decoded with symphonia (pure Rust): FLAC, MP3, AAC and ALAC in MP4/M4A,
//! Ogg Vorbis, Matroska/WebM, and the WAV variants hound does not read; downmixed and
//! resampled to 16 kHz mono ([`To16k`]) as the packets come.
//!
//! Runs inside the decode worker (`decode.rs`), a child process with a bound on its memory:
//! symphonia sizes some buffers from the file's headers (a Matroska element's length, an MP4
//! sample table's count), so a hostile header could otherwise ask for gigabytes. What can be
//! checked here is checked before a decoder is made: a rate in 8–384 kHz, 1–32 channels, at
//! most 2^20 frames a packet, the duration the header announces against `stt.max_file_s`;
//! metadata and cover art are capped at 1 MiB. AAC's priming in MP4 is dropped as the
//! file's edit list says (`mp4_priming.rs`).

use super::resample::To16k;
use super::wav::{MAX_RATE, MIN_RATE};
use crate::Error;
use serde::{Deserialize, Serialize};
use std::path::Path;
use symphonia::core::audio::SampleBuffer;
use symphonia::core::codecs::{DecoderOptions, CODEC_TYPE_AAC, CODEC_TYPE_NULL};
use symphonia::core::errors::Error as SymError;
use symphonia::core::formats::FormatOptions;
use symphonia::core::io::MediaSourceStream;
use symphonia::core::meta::{Limit, MetadataOptions};
use symphonia::core::probe::Hint;

/// Most channels accepted (7.1.4 and beyond, with room; a header claiming thousands is lying).
const MAX_CHANNELS: usize = 32;
/// Most frames one packet may decode to (FLAC's largest block is 65 535).
const MAX_PACKET_FRAMES: u64 = 1 << 20;
/// Decode errors in a row after which the rest of the file is taken as damaged.
const MAX_BAD_PACKETS: u32 = 64;

/// What the stream is, known before the first sample.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Header {
    pub rate: u32,
    pub channels: u16,
    /// The codec's short name (`mp3`, `aac`, `flac`, ...).
    pub codec: String,
    /// 16 kHz samples the header announces, when it does (for progress).
    pub total_16k: Option<u64>,
}

/// How the stream ended.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct End {
    /// Frames decoded, at the source rate.
    pub frames: u64,
    /// Why the file was not decoded to its end (cut short, damaged part), when it was not.
    pub truncated: Option<String>,
    pub resample_ms: f64,
}

/// Why a file was not decoded.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub enum Fail {
    /// Not a format or codec symphonia reads (ffmpeg may).
    Unsupported(String),
    /// Damaged or refused.
    Format(String),
    /// Not one audio sample.
    Empty,
    /// A container without an audio track (a video alone).
    NoAudio(String),
    /// Longer than the cap: (the duration in seconds).
    TooLong(u64),
    /// The sink refused a block (the parent went away).
    Sink(String),
}

impl Fail {
    /// The error the user sees.
    pub fn into_error(self, path: &Path, max_seconds: u32) -> Error {
        let path = path.to_path_buf();
        match self {
            Fail::Empty => Error::AudioEmpty { path },
            Fail::TooLong(secs) => Error::AudioTooLong {
                path,
                duration: super::wav::human_duration(secs),
                max_seconds,
            },
            Fail::NoAudio(why) => Error::AudioNoTrack { path, reason: why },
            Fail::Unsupported(why) | Fail::Format(why) | Fail::Sink(why) => {
                Error::AudioDecode { path, reason: why }
            }
        }
    }
}

/// What the decoder reports, in order: one header, samples, one end (or a fail instead).
pub enum Event<'a> {
    Header(&'a Header),
    Samples(&'a [f32]),
}

fn codec_name(codec: symphonia::core::codecs::CodecType) -> String {
    symphonia::default::get_codecs()
        .get_codec(codec)
        .map_or_else(|| format!("{codec}"), |d| d.short_name.to_string())
}

/// Decodes `path` to 16 kHz mono, calling `out` with the header and then blocks of samples.
pub fn decode(
    path: &Path,
    max_seconds: u32,
    out: &mut dyn FnMut(Event) -> Result<(), String>,
) -> Result<End, Fail> {
    let file = std::fs::File::open(path).map_err(|e| Fail::Format(e.to_string()))?;
    let mss = MediaSourceStream::new(Box::new(file), Default::default());
    let mut hint = Hint::new();
    if let Some(ext) = path.extension().and_then(|e| e.to_str()) {
        hint.with_extension(ext);
    }
    let meta = MetadataOptions {
        limit_metadata_bytes: Limit::Maximum(1 << 20),
        limit_visual_bytes: Limit::Maximum(1 << 20),
    };
    let probed = symphonia::default::get_probe()
        .format(
            &hint,
            mss,
            // The encoder's delay and padding (LAME's and iTunes' gapless tags) left out, so
            // times line up with the source.
            &FormatOptions {
                enable_gapless: true,
                ..FormatOptions::default()
            },
            &meta,
        )
        .map_err(|e| match e {
            SymError::Unsupported(_) => Fail::Unsupported("no audio header it recognises".into()),
            SymError::IoError(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
                Fail::Unsupported("no audio header it recognises".into())
            }
            other => Fail::Format(other.to_string()),
        })?;
    let mut format = probed.format;
    let tracks = format.tracks();
    let Some(track) = tracks
        .iter()
        .find(|t| t.codec_params.codec != CODEC_TYPE_NULL && t.codec_params.sample_rate.is_some())
        .or_else(|| {
            tracks
                .iter()
                .find(|t| t.codec_params.codec != CODEC_TYPE_NULL)
        })
    else {
        return Err(if tracks.is_empty() {
            Fail::NoAudio("the container holds no track".into())
        } else {
            Fail::NoAudio(format!(
                "{} track{}, none of them audio Dictum decodes; a video without sound?",
                tracks.len(),
                if tracks.len() == 1 { "" } else { "s" }
            ))
        });
    };
    let params = track.codec_params.clone();
    let track_id = track.id;
    let codec = codec_name(params.codec);
    let rate = params
        .sample_rate
        .ok_or_else(|| Fail::Format(format!("the {codec} track has no sample rate")))?;
    if !(MIN_RATE..=MAX_RATE).contains(&rate) {
        return Err(Fail::Format(format!(
            "sample rate {rate} Hz is outside the accepted {MIN_RATE} to {MAX_RATE} Hz"
        )));
    }
    let channels = params.channels.map_or(0, |c| c.count());
    if channels > MAX_CHANNELS {
        return Err(Fail::Format(format!(
            "the header claims {channels} channels (at most {MAX_CHANNELS} accepted)"
        )));
    }
    if params
        .max_frames_per_packet
        .is_some_and(|n| n > MAX_PACKET_FRAMES)
    {
        return Err(Fail::Format(
            "the header claims packets too large to be real".into(),
        ));
    }
    let max_frames = u64::from(max_seconds) * u64::from(rate);
    if let Some(n) = params.n_frames {
        if n > max_frames {
            return Err(Fail::TooLong(n.div_ceil(u64::from(rate))));
        }
    }
    let mut decoder = symphonia::default::get_codecs()
        .make(&params, &DecoderOptions::default())
        .map_err(|e| match e {
            SymError::Unsupported(_) => {
                Fail::Unsupported(format!("symphonia has no decoder for {codec}"))
            }
            other => Fail::Format(other.to_string()),
        })?;
    // AAC in MP4/M4A: the encoder's priming, which symphonia keeps, as its edit list says
    // (ffmpeg and players drop it; kept, every time came out 64 ms late at 16 kHz).
    let mut skip = if params.codec == CODEC_TYPE_AAC && params.delay.is_none() {
        std::fs::File::open(path)
            .ok()
            .and_then(|mut f| super::mp4_priming::priming_frames(&mut f, rate))
            .unwrap_or(0)
    } else {
        0
    };
    let header = Header {
        rate,
        channels: channels as u16,
        codec: codec.clone(),
        total_16k: params
            .n_frames
            .map(|n| n * u64::from(crate::SAMPLE_RATE) / u64::from(rate)),
    };
    out(Event::Header(&header)).map_err(Fail::Sink)?;

    // The output is 16 kHz whatever the input: nothing here is sized from the header.
    let mut resampler = To16k::new(rate, 0).map_err(|e| Fail::Format(e.to_string()))?;
    let mut resample = std::time::Duration::ZERO;
    let mut frames: u64 = 0;
    let mut truncated: Option<String> = None;
    let mut bad_in_a_row = 0u32;
    let mut mono: Vec<f32> = Vec::new();
    let mut buf: Option<SampleBuffer<f32>> = None;
    let secs = |frames: u64| frames as f64 / f64::from(rate);
    loop {
        let packet = match format.next_packet() {
            Ok(p) => p,
            Err(SymError::IoError(e)) if e.kind() == std::io::ErrorKind::UnexpectedEof => break,
            Err(SymError::ResetRequired) => break,
            Err(e) => {
                truncated = Some(format!(
                    "the file is damaged after {:.1} s ({e})",
                    secs(frames)
                ));
                break;
            }
        };
        if packet.track_id() != track_id {
            continue;
        }
        let decoded = match decoder.decode(&packet) {
            Ok(d) => d,
            Err(SymError::DecodeError(why)) => {
                bad_in_a_row += 1;
                if bad_in_a_row >= MAX_BAD_PACKETS {
                    truncated = Some(format!(
                        "the file is damaged after {:.1} s ({why})",
                        secs(frames)
                    ));
                    break;
                }
                continue;
            }
            Err(SymError::IoError(e)) if e.kind() == std::io::ErrorKind::UnexpectedEof => break,
            Err(e) => {
                truncated = Some(format!(
                    "the file is damaged after {:.1} s ({e})",
                    secs(frames)
                ));
                break;
            }
        };
        bad_in_a_row = 0;
        let spec = *decoded.spec();
        if spec.rate != rate {
            truncated = Some(format!(
                "the sample rate changes after {:.1} s (from {rate} to {} Hz); the rest was \
                 left out",
                secs(frames),
                spec.rate
            ));
            break;
        }
        let ch = spec.channels.count().max(1);
        if ch > MAX_CHANNELS {
            truncated = Some(format!("a packet claims {ch} channels"));
            break;
        }
        let needed = decoded.capacity() as u64;
        if needed > MAX_PACKET_FRAMES {
            truncated = Some(format!(
                "a packet after {:.1} s is too large to be real",
                secs(frames)
            ));
            break;
        }
        let sb = match &mut buf {
            Some(b) if b.capacity() >= decoded.capacity() * ch => b,
            _ => buf.insert(SampleBuffer::<f32>::new(needed, spec)),
        };
        sb.copy_interleaved_ref(decoded);
        let samples = sb.samples();
        mono.clear();
        let scale = 1.0 / ch as f32;
        mono.extend(
            samples
                .chunks_exact(ch)
                .map(|f| f.iter().sum::<f32>() * scale),
        );
        if skip > 0 {
            let n = usize::try_from(skip).unwrap_or(usize::MAX).min(mono.len());
            mono.drain(..n);
            skip -= n as u64;
        }
        frames += mono.len() as u64;
        if frames > max_frames {
            return Err(Fail::TooLong(frames.div_ceil(u64::from(rate))));
        }
        let t = std::time::Instant::now();
        let pushed = resampler.push(&mono);
        let ready = resampler.take_ready();
        resample += t.elapsed();
        pushed.map_err(|e| Fail::Format(e.to_string()))?;
        if !ready.is_empty() {
            out(Event::Samples(&ready)).map_err(Fail::Sink)?;
        }
    }
    if frames == 0 {
        return Err(match (truncated, params.n_frames) {
            (Some(why), _) => Fail::Format(why),
            (None, Some(n)) if n > 0 => Fail::Format(format!(
                "not one frame of the {:.1} s its header announces could be decoded (damaged?)",
                secs(n)
            )),
            (None, _) => Fail::Empty,
        });
    }
    let t = std::time::Instant::now();
    let rest = resampler
        .finish()
        .map_err(|e| Fail::Format(e.to_string()))?;
    resample += t.elapsed();
    if !rest.is_empty() {
        out(Event::Samples(&rest)).map_err(Fail::Sink)?;
    }
    if truncated.is_none() {
        // The header's length against what came: a file cut short ends early without an error.
        if let Some(n) = params.n_frames {
            if frames + u64::from(rate) / 2 < n {
                truncated = Some(format!(
                    "the file ends after {:.1} s of the {:.1} s its header announces (cut short?)",
                    secs(frames),
                    secs(n)
                ));
            }
        }
    }
    Ok(End {
        frames,
        truncated,
        resample_ms: resample.as_secs_f64() * 1000.0,
    })
}
