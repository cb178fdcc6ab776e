//! Fuzzing of everything Dictum reads from outside (issue 12): the WAV reader and resampler,
//! the model-file check, the config parser, the control-socket command parser and line
//! reader, and the speech server's answer parser. Property
//! tests (proptest) with a bounded budget so they run in every `cargo test`; set
//! `DICTUM_FUZZ_CASES` (cases per harness) for a longer run. Plus the crafted-file corpus in
//! `tests/data/crafted/` (written by its `make.py`), each file through the real reader.
//!
//! The property everywhere: an answer (a value or a clear error), at once, never a panic, a
//! hang or a huge allocation. Memory is bounded for real: this test binary (and only it: the
//! limit is per process) runs under RLIMIT_AS = 512 MiB, so an allocation the input talks us
//! into fails and aborts the run instead of passing quietly.

use dictum_engine::audio::{decode_16k, read_wav_capped};
use dictum_engine::config::Config;
use dictum_engine::dictation::control::{parse_command, read_request, Request, MAX_LINE};
use dictum_engine::stt::check_model_file;
use dictum_engine::Error;
use proptest::prelude::*;
use proptest::test_runner::Config as ProptestConfig;
use std::path::{Path, PathBuf};
use std::sync::Once;
use std::time::{Duration, Instant};

/// Address space this binary may use.
const MEMORY_LIMIT: u64 = 512 << 20;

/// Limits this process to [`MEMORY_LIMIT`] of address space (once; every test calls it).
fn limit_memory() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        // glibc reserves 64 MiB of address space per thread arena; one arena keeps the limit
        // about the heap, not about how many test threads there are.
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        // SAFETY: mallopt only tunes the allocator; called before the tests allocate much.
        unsafe {
            libc::mallopt(libc::M_ARENA_MAX, 1);
        }
        let limit = libc::rlimit {
            rlim_cur: MEMORY_LIMIT as libc::rlim_t,
            rlim_max: MEMORY_LIMIT as libc::rlim_t,
        };
        // SAFETY: setrlimit reads the struct we pass; it only lowers this process's limit.
        let rc = unsafe { libc::setrlimit(libc::RLIMIT_AS, &limit) };
        assert_eq!(
            rc,
            0,
            "setrlimit(RLIMIT_AS): {}",
            std::io::Error::last_os_error()
        );
    });
}

/// Cases per harness: `DICTUM_FUZZ_CASES`, else `default` (a few seconds each).
fn cases(default: u32) -> ProptestConfig {
    let n = std::env::var("DICTUM_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default);
    ProptestConfig {
        cases: n,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Longest any one input may take (debug build, shared CPU).
const PER_CASE: Duration = Duration::from_secs(3);

fn crafted_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/data/crafted")
}

fn scratch(name: &str, bytes: &[u8]) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join(name);
    std::fs::write(&path, bytes).expect("write");
    (dir, path)
}

// ---------------------------------------------------------------------------------------
// WAV reader + resampler

/// A RIFF/WAVE file from (mostly hostile) header fields and a payload.
#[derive(Debug, Clone)]
struct WavParts {
    format: u16,
    channels: u16,
    rate: u32,
    bits: u16,
    consistent_rates: bool,
    byte_rate: u32,
    block_align: u16,
    fmt_size: u32,
    extra_chunk: Option<Vec<u8>>,
    data_size: Option<u32>,
    payload: Vec<u8>,
    truncate: Option<usize>,
}

impl WavParts {
    fn bytes(&self) -> Vec<u8> {
        let block = if self.consistent_rates {
            (u32::from(self.channels) * u32::from(self.bits).div_ceil(8)) as u16
        } else {
            self.block_align
        };
        let byte_rate = if self.consistent_rates {
            self.rate.wrapping_mul(u32::from(block))
        } else {
            self.byte_rate
        };
        let mut fmt = Vec::new();
        fmt.extend_from_slice(&self.format.to_le_bytes());
        fmt.extend_from_slice(&self.channels.to_le_bytes());
        fmt.extend_from_slice(&self.rate.to_le_bytes());
        fmt.extend_from_slice(&byte_rate.to_le_bytes());
        fmt.extend_from_slice(&block.to_le_bytes());
        fmt.extend_from_slice(&self.bits.to_le_bytes());
        if self.format == 0xFFFE {
            // WAVE_FORMAT_EXTENSIBLE: cbSize, valid bits, channel mask, PCM sub-format GUID.
            fmt.extend_from_slice(&22u16.to_le_bytes());
            fmt.extend_from_slice(&self.bits.to_le_bytes());
            fmt.extend_from_slice(&0u32.to_le_bytes());
            fmt.extend_from_slice(&[
                1, 0, 0, 0, 0, 0, 0x10, 0, 0x80, 0, 0, 0xAA, 0, 0x38, 0x9B, 0x71,
            ]);
        }
        fmt.resize(fmt.len().max(self.fmt_size as usize).min(4096), 0);
        let mut body = b"WAVE".to_vec();
        body.extend_from_slice(b"fmt ");
        body.extend_from_slice(&self.fmt_size.max(fmt.len() as u32).to_le_bytes());
        body.extend_from_slice(&fmt);
        if let Some(extra) = &self.extra_chunk {
            body.extend_from_slice(b"LIST");
            body.extend_from_slice(&(extra.len() as u32).to_le_bytes());
            body.extend_from_slice(extra);
        }
        body.extend_from_slice(b"data");
        let size = self.data_size.unwrap_or(self.payload.len() as u32);
        body.extend_from_slice(&size.to_le_bytes());
        body.extend_from_slice(&self.payload);
        let mut out = b"RIFF".to_vec();
        out.extend_from_slice(&(body.len() as u32).to_le_bytes());
        out.extend_from_slice(&body);
        if let Some(n) = self.truncate {
            out.truncate(n);
        }
        out
    }
}

fn edge_u32(edges: &'static [u32]) -> impl Strategy<Value = u32> {
    prop_oneof![3 => proptest::sample::select(edges), 1 => any::<u32>()]
}

fn wav_parts() -> impl Strategy<Value = WavParts> {
    (
        (
            proptest::sample::select(&[1u16, 3, 0xFFFE, 0, 2, 0x55][..]),
            prop_oneof![4 => 1u16..=8, 1 => any::<u16>()],
            edge_u32(&[
                0,
                1,
                7_999,
                8_000,
                11_025,
                16_000,
                22_050,
                44_100,
                48_000,
                96_000,
                383_983,
                384_000,
                384_001,
                1 << 31,
                u32::MAX,
            ]),
            proptest::sample::select(&[0u16, 1, 4, 8, 12, 16, 20, 24, 32, 33, 64, u16::MAX][..]),
            prop::bool::weighted(0.8),
            any::<u32>(),
            any::<u16>(),
        ),
        (
            prop_oneof![4 => Just(16u32), 1 => 0u32..64],
            prop::option::weighted(0.2, prop::collection::vec(any::<u8>(), 0..64)),
            prop::option::weighted(
                0.4,
                edge_u32(&[0, 1, 2, 3, 4095, 4096, 0x7FFF_FFFF, u32::MAX - 1, u32::MAX]),
            ),
            prop::collection::vec(any::<u8>(), 0..4096),
            prop::option::weighted(0.15, 0usize..200),
        ),
    )
        .prop_map(
            |(
                (format, channels, rate, bits, consistent_rates, byte_rate, block_align),
                (fmt_size, extra_chunk, data_size, payload, truncate),
            )| WavParts {
                format,
                channels,
                rate,
                bits,
                consistent_rates,
                byte_rate,
                block_align,
                fmt_size,
                extra_chunk,
                data_size,
                payload,
                truncate,
            },
        )
}

/// Both readers on one file: an answer at once, and an Ok result that is what the header
/// allowed (no more samples than the file can hold, the duration within the cap).
fn check_wav(bytes: &[u8]) -> Result<(), TestCaseError> {
    let (_dir, path) = scratch("f.wav", bytes);
    let t = Instant::now();
    let cap = 60;
    match decode_16k(&path, cap) {
        Ok(d) => {
            prop_assert!(d.duration_ms() <= u64::from(cap) * 1000);
            prop_assert!(d.samples.len() as u64 <= (u64::from(cap) + 1) * 16_000);
            prop_assert!(d.samples.iter().all(|s| s.is_finite()));
        }
        Err(e) => prop_assert!(!e.to_string().is_empty()),
    }
    match read_wav_capped(&path, cap) {
        Ok(d) => prop_assert!(d.samples.len() <= bytes.len()),
        Err(e) => prop_assert!(!e.to_string().is_empty()),
    }
    prop_assert!(t.elapsed() < PER_CASE, "took {:?}", t.elapsed());
    Ok(())
}

proptest! {
    #![proptest_config(cases(1000))]

    #[test]
    fn wav_headers_never_panic_hang_or_overallocate(parts in wav_parts()) {
        limit_memory();
        check_wav(&parts.bytes())?;
    }

    #[test]
    fn mutated_wavs_never_panic_hang_or_overallocate(
        flips in prop::collection::vec((0usize..1200, any::<u8>()), 1..12),
        cut in prop::option::of(0usize..1200),
    ) {
        limit_memory();
        // A valid 44.1 kHz stereo file, then bytes overwritten (headers included) and cut.
        let mut bytes = WavParts {
            format: 1,
            channels: 2,
            rate: 44_100,
            bits: 16,
            consistent_rates: true,
            byte_rate: 0,
            block_align: 0,
            fmt_size: 16,
            extra_chunk: None,
            data_size: None,
            payload: (0..1100u32).map(|i| (i * 31 % 256) as u8).collect(),
            truncate: None,
        }
        .bytes();
        for (at, b) in flips {
            if let Some(x) = bytes.get_mut(at) {
                *x = b;
            }
        }
        if let Some(n) = cut {
            bytes.truncate(n);
        }
        check_wav(&bytes)?;
    }
}

// ---------------------------------------------------------------------------------------
// Model-file check

fn edge_i32() -> impl Strategy<Value = i32> {
    prop_oneof![
        3 => proptest::sample::select(
            &[0i32, 1, 2, 3, 4, 5, 32, 64, 65, 256, 257, 1024, 4096, 51_864, 200_001, -1,
              i32::MIN, i32::MAX][..]
        ),
        1 => any::<i32>(),
    ]
}

#[derive(Debug, Clone)]
struct Tensor {
    dims: Vec<i32>,
    name_len: i32,
    ttype: i32,
    data: usize,
}

fn tensor() -> impl Strategy<Value = Tensor> {
    (
        prop::collection::vec(edge_i32(), 0..6),
        prop_oneof![3 => 1i32..8, 1 => edge_i32()],
        prop_oneof![3 => proptest::sample::select(&[0i32, 1, 2, 8, 14, 30][..]), 1 => edge_i32()],
        0usize..64,
    )
        .prop_map(|(dims, name_len, ttype, data)| Tensor {
            dims,
            name_len,
            ttype,
            data,
        })
}

fn model_bytes() -> impl Strategy<Value = Vec<u8>> {
    (
        prop::bool::weighted(0.95),
        prop::collection::vec(edge_i32(), 11),
        (
            prop_oneof![3 => 0i32..4, 1 => edge_i32()],
            prop_oneof![3 => 0i32..4, 1 => edge_i32()],
        ),
        prop_oneof![3 => 0i32..4, 1 => edge_i32()],
        prop::collection::vec(edge_i32(), 0..4),
        prop::collection::vec(tensor(), 0..6),
        prop::option::weighted(0.2, 0usize..400),
    )
        .prop_map(
            |(magic_ok, mut hp, (n_mel, n_fft), words, tokens, tensors, cut)| {
                // Mostly plausible layer counts, so the walk gets past the header.
                if hp[4] > 64 || hp[4] < 1 {
                    hp[4] = 4;
                }
                if hp[8] > 64 || hp[8] < 1 {
                    hp[8] = 4;
                }
                let mut v = Vec::new();
                let magic: u32 = if magic_ok { 0x6767_6d6c } else { 0x6767_6d6d };
                v.extend_from_slice(&magic.to_le_bytes());
                for x in hp {
                    v.extend_from_slice(&x.to_le_bytes());
                }
                v.extend_from_slice(&n_mel.to_le_bytes());
                v.extend_from_slice(&n_fft.to_le_bytes());
                if (0..=4).contains(&n_mel) && (0..=4).contains(&n_fft) {
                    v.extend(std::iter::repeat_n(0u8, 4 * (n_mel * n_fft) as usize));
                }
                v.extend_from_slice(&words.to_le_bytes());
                for t in tokens {
                    v.extend_from_slice(&t.to_le_bytes());
                    if (0..16).contains(&t) {
                        v.extend(std::iter::repeat_n(b'x', t as usize));
                    }
                }
                for t in tensors {
                    v.extend_from_slice(&(t.dims.len() as i32).to_le_bytes());
                    v.extend_from_slice(&t.name_len.to_le_bytes());
                    v.extend_from_slice(&t.ttype.to_le_bytes());
                    for d in &t.dims {
                        v.extend_from_slice(&d.to_le_bytes());
                    }
                    if (0..16).contains(&t.name_len) {
                        v.extend(std::iter::repeat_n(b'n', t.name_len as usize));
                    }
                    v.extend(std::iter::repeat_n(0u8, t.data));
                }
                if let Some(n) = cut {
                    v.truncate(n);
                }
                v
            },
        )
}

proptest! {
    #![proptest_config(cases(2000))]

    #[test]
    fn model_check_always_answers_at_once(bytes in model_bytes()) {
        limit_memory();
        let (_dir, path) = scratch("m.bin", &bytes);
        let t = Instant::now();
        match check_model_file(&path) {
            Ok(info) => prop_assert!(info.file_bytes == bytes.len() as u64),
            Err(e) => prop_assert!(matches!(e, Error::ModelCorrupt { .. }), "{e}"),
        }
        prop_assert!(t.elapsed() < PER_CASE, "took {:?}", t.elapsed());
    }

    #[test]
    fn mutated_crafted_models_always_answer_at_once(
        seed in proptest::sample::select(&[
            "model-seek-loop.bin", "model-elements-overflow.bin", "model-negative-dim.bin",
            "model-vocab-lie.bin", "model-mel-lie.bin",
        ][..]),
        flips in prop::collection::vec((0usize..96, any::<u8>()), 0..8),
    ) {
        limit_memory();
        let mut bytes = std::fs::read(crafted_dir().join(seed)).expect("seed");
        for (at, b) in flips {
            if let Some(x) = bytes.get_mut(at) {
                *x = b;
            }
        }
        let (_dir, path) = scratch("m.bin", &bytes);
        let t = Instant::now();
        let _ = check_model_file(&path);
        prop_assert!(t.elapsed() < PER_CASE, "took {:?}", t.elapsed());
    }
}

// ---------------------------------------------------------------------------------------
// Config parser

const SECTIONS: &[&str] = &[
    "stt",
    "vad",
    "history",
    "llm",
    "dictation",
    "inject",
    "models",
    "x",
];
const KEYS: &[&str] = &[
    "model",
    "language",
    "threads",
    "audio_ctx",
    "audio_ctx_margin",
    "audio_ctx_min",
    "use_gpu",
    "vocabulary",
    "max_file_s",
    "threshold",
    "min_speech_ms",
    "pad_ms",
    "keep_audio",
    "retention_days",
    "enabled",
    "backend",
    "url",
    "ollama_endpoint",
    "timeout_ms",
    "num_ctx",
    "keep_alive",
    "temperature",
    "top_p",
    "seed",
    "num_predict",
    "reload_threshold_ms",
    "system_prompt",
    "user_template",
    "examples",
    "hotkey",
    "mode",
    "cancel_key",
    "input_device",
    "preroll_ms",
    "post_roll_ms",
    "type_before_post_roll_ms",
    "max_utterance_s",
    "streaming",
    "pause_ms",
    "speculate_after_ms",
    "commit_min_ms",
    "chunk_max_ms",
    "queue_max",
    "idle_unload_min",
    "hands_free_pause_ms",
    "hands_free_idle_s",
    "method",
    "terminal_classes",
    "paste_restore_delay_ms",
    "trailing_space",
    "modifier_release_timeout_ms",
    "notify_on_failure",
    "base_url",
    "nope",
];
const VALUES: &[&str] = &[
    "0",
    "1",
    "-1",
    "2",
    "64",
    "65",
    "300",
    "1500",
    "1501",
    "3600",
    "3601",
    "86400",
    "86401",
    "600000",
    "600001",
    "4000000000",
    "4294967296",
    "9223372036854775807",
    "-9223372036854775808",
    "0.5",
    "-0.5",
    "1e308",
    "nan",
    "inf",
    "-inf",
    "true",
    "false",
    "\"\"",
    "\"inf\"",
    "\"-1\"",
    "\"30m\"",
    "\"168h\"",
    "\"169h\"",
    "\"1e9\"",
    "\"auto\"",
    "\"full\"",
    "\"en\"",
    "\"ollama\"",
    "\"openai\"",
    "\"http://127.0.0.1:1\"",
    "\"ctrl+alt+space\"",
    "\"toggle\"",
    "\"paste\"",
    "\"{text}\"",
    "[]",
    "[\"a\", \"b\"]",
    "{ a = 1 }",
    "[1, 2]",
];

fn config_text() -> impl Strategy<Value = String> {
    let line = prop_oneof![
        1 => proptest::sample::select(SECTIONS).prop_map(|s| format!("[{s}]")),
        4 => (proptest::sample::select(KEYS), proptest::sample::select(VALUES))
            .prop_map(|(k, v)| format!("{k} = {v}")),
        1 => "\\PC{0,40}",
    ];
    prop::collection::vec(line, 0..12).prop_map(|lines| lines.join("\n"))
}

fn check_config(text: &str) -> Result<(), TestCaseError> {
    let path = Path::new("fuzz.toml");
    if let Ok((config, _warnings)) = Config::parse(text, path) {
        // Whatever parses is within bounds and survives a save/load cycle unchanged.
        prop_assert!(config.check().is_ok());
        prop_assert!((1..=3600).contains(&config.dictation.max_utterance_s));
        prop_assert!(config.stt.threads <= 64);
        prop_assert!(config.llm.timeout_ms <= 600_000);
        let rendered = dictum_engine::config::render_documented(&config)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let (back, _) =
            Config::parse(&rendered, path).map_err(|e| TestCaseError::fail(e.to_string()))?;
        prop_assert_eq!(back, config);
    }
    Ok(())
}

proptest! {
    #![proptest_config(cases(2000))]

    #[test]
    fn config_parser_never_panics_and_keeps_its_bounds(text in config_text()) {
        limit_memory();
        check_config(&text)?;
    }

    #[test]
    fn config_parser_takes_any_text(text in "\\PC{0,300}") {
        limit_memory();
        check_config(&text)?;
    }
}

// ---------------------------------------------------------------------------------------
// Control-socket command parser

const COMMANDS: &[&str] = &[
    "press",
    "release",
    "toggle",
    "cancel",
    "pause",
    "resume",
    "quit",
    "exit",
    "hands-free",
    "hands-free on",
    "hands-free off",
    "hands-free toggle",
];

proptest! {
    #![proptest_config(cases(5000))]

    #[test]
    fn control_lines_are_commands_or_errors(
        line in prop_oneof![
            2 => "\\PC{0,300}",
            1 => ("[ \t\r\n]{0,3}", proptest::sample::select(COMMANDS), "[ \t\r\n]{0,3}")
                .prop_map(|(a, c, b)| format!("{a}{c}{b}")),
            1 => proptest::sample::select(COMMANDS).prop_map(|c| c.to_uppercase()),
        ],
    ) {
        limit_memory();
        let known = COMMANDS.contains(&line.trim());
        match parse_command(&line) {
            Ok(_) => prop_assert!(known, "{line:?} accepted"),
            Err(e) => {
                prop_assert!(!known, "{line:?} refused");
                prop_assert!(e.starts_with("unknown command"), "{e}");
            }
        }
    }
}

/// A reader that counts what was taken from it (the socket's bytes).
struct Counting<'a> {
    data: &'a [u8],
    taken: usize,
}

impl std::io::Read for Counting<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = buf.len().min(self.data.len() - self.taken);
        buf[..n].copy_from_slice(&self.data[self.taken..self.taken + n]);
        self.taken += n;
        Ok(n)
    }
}

proptest! {
    #![proptest_config(cases(5000))]

    /// The socket's line reader: whatever arrives, at most MAX_LINE bytes are read, and the
    /// answer is a request exactly when the first line (within the limit) is a known word.
    #[test]
    fn control_socket_lines_are_bounded_and_parsed(
        bytes in prop_oneof![
            2 => proptest::collection::vec(any::<u8>(), 0..1200),
            2 => ("[ \t]{0,3}", proptest::sample::select(COMMANDS), "[ \t\r]{0,3}", "(\n[a-z]{0,20})?")
                .prop_map(|(a, c, b, rest)| format!("{a}{c}{b}{rest}").into_bytes()),
            1 => (proptest::sample::select(COMMANDS), 200usize..300)
                .prop_map(|(c, pad)| format!("{c}{}\n", " ".repeat(pad)).into_bytes()),
            1 => Just(b"status\n".to_vec()),
        ],
    ) {
        limit_memory();
        let mut input = Counting { data: &bytes, taken: 0 };
        let result = read_request(&mut input);
        prop_assert!(input.taken <= MAX_LINE, "read {} bytes", input.taken);
        let line_end = bytes.iter().position(|&b| b == b'\n');
        let within = match line_end {
            Some(i) => i < MAX_LINE,
            None => bytes.len() < MAX_LINE,
        };
        let first = &bytes[..line_end.unwrap_or(bytes.len()).min(MAX_LINE)];
        let known = within
            && std::str::from_utf8(first).is_ok_and(|t| {
                t.trim() == "status" || COMMANDS.contains(&t.trim())
            });
        match result {
            Ok(request) => {
                prop_assert!(known, "{bytes:?} accepted as {request:?}");
                if let Request::Status = request {
                    prop_assert_eq!(std::str::from_utf8(first).map(str::trim), Ok("status"));
                }
            }
            Err(e) => {
                prop_assert!(!known, "{bytes:?} refused: {e}");
                prop_assert!(!e.contains('\n'), "{e}");
                if !within {
                    prop_assert!(e.starts_with("command too long"), "{e}");
                }
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// The speech server's answer (`stt::remote::parse_answer`): whatever a server sends

/// Characters a server's text may carry that must never reach the keyboard or the row as
/// they are: line breaks, escapes, NUL, DEL, C1 controls, separators, direction overrides.
const NASTY: &[char] = &[
    '\n', '\r', '\t', '\u{0}', '\u{7}', '\u{8}', '\u{1b}', '\u{7f}', '\u{85}', '\u{9b}',
    '\u{2028}', '\u{2029}', '\u{202a}', '\u{202e}', '\u{2066}', '\u{2069}', '\u{3000}', '\u{a0}',
    '\u{feff}', ' ', ' ', 'a', 'é', '日', '😀', '"', '\\', '-', '.',
];

/// Numbers as a server may write them, valid JSON or not.
const NUMBERS: &[&str] = &[
    "0",
    "-0",
    "0.4",
    "1",
    "1.5",
    "7",
    "-3",
    "1e308",
    "1e400",
    "-1e400",
    "1E+999",
    "NaN",
    "Infinity",
    "null",
    "\"2.5\"",
    "true",
    "[]",
    "{}",
    "18446744073709551616",
    "3.4e38",
    "-1e-320",
    "1e-400",
];

fn server_text(max: usize) -> impl Strategy<Value = String> {
    prop::collection::vec(
        prop_oneof![3 => proptest::sample::select(NASTY), 1 => any::<char>()],
        0..max,
    )
    .prop_map(|cs| cs.into_iter().collect())
}

fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        2 => proptest::sample::select(NUMBERS).prop_map(String::from),
        1 => any::<f64>().prop_map(|f| format!("{f:?}")),
    ]
}

/// An answer shaped like verbose_json: text, language and segments with any values, the
/// strings escaped as JSON (control characters as `\u001b`), numbers anything.
fn jsonish_answer() -> impl Strategy<Value = Vec<u8>> {
    (
        server_text(200),
        prop::option::of(server_text(80)),
        prop::collection::vec((number(), number()), 0..6),
        any::<bool>(),
    )
        .prop_map(|(text, language, segments, text_first)| {
            let quote = |s: &str| serde_json::to_string(s).expect("a string");
            let mut fields = Vec::new();
            if let Some(l) = language {
                fields.push(format!("\"language\":{}", quote(&l)));
            }
            let segments: Vec<String> = segments
                .iter()
                .map(|(end, p)| format!("{{\"end\":{end},\"no_speech_prob\":{p}}}"))
                .collect();
            fields.push(format!("\"segments\":[{}]", segments.join(",")));
            let text = format!("\"text\":{}", quote(&text));
            if text_first {
                fields.insert(0, text);
            } else {
                fields.push(text);
            }
            format!("{{{}}}", fields.join(",")).into_bytes()
        })
}

fn answer_body() -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        1 => prop::collection::vec(any::<u8>(), 0..600),
        1 => server_text(300).prop_map(String::into_bytes),
        3 => jsonish_answer(),
        2 => (
            jsonish_answer(),
            prop::collection::vec((0usize..400, any::<u8>()), 1..8),
            prop::option::of(0usize..400),
        )
            .prop_map(|(mut bytes, flips, cut)| {
                for (at, b) in flips {
                    if let Some(x) = bytes.get_mut(at) {
                        *x = b;
                    }
                }
                if let Some(n) = cut {
                    bytes.truncate(n);
                }
                bytes
            }),
    ]
}

/// What the engine takes from a server's answer: bounded, one line of single-spaced words
/// with nothing that presses a key or turns text around, and an error that is one short
/// line. `degenerate` then judges the text at once, whatever it is.
fn check_answer(body: &[u8]) -> Result<(), TestCaseError> {
    use dictum_engine::stt::remote::{parse_answer, MAX_END_MS, MAX_LANGUAGE_CHARS};
    use dictum_engine::text_safety::{is_control_like, strip_control};
    let t = Instant::now();
    match parse_answer(body) {
        Ok(out) => {
            let text = &out.text;
            prop_assert!(!text.chars().any(is_control_like), "{text:?}");
            prop_assert!(
                !text.chars().any(|c| c.is_whitespace() && c != ' '),
                "{text:?}"
            );
            prop_assert!(!text.contains("  ") && text.trim() == text, "{text:?}");
            prop_assert_eq!(&strip_control(text, false), text);
            prop_assert!(text.len() <= body.len());
            if let Some(l) = &out.language {
                prop_assert!(!l.trim().is_empty(), "{l:?}");
                prop_assert!(l.chars().count() <= MAX_LANGUAGE_CHARS, "{l:?}");
                prop_assert!(!l.chars().any(is_control_like), "{l:?}");
            }
            prop_assert!(
                (0.0..=1.0).contains(&out.no_speech_prob),
                "no_speech_prob {}",
                out.no_speech_prob
            );
            prop_assert!(
                out.end_ms.is_none_or(|e| e <= MAX_END_MS),
                "{:?}",
                out.end_ms
            );
            prop_assert!(out.segments <= body.len());
            let _ = dictum_engine::stt::degenerate(text, 16_000 * 600);
        }
        Err(e) => {
            let m = e.to_string();
            prop_assert!(!m.is_empty());
            prop_assert!(m.chars().count() <= 200, "{m}");
            prop_assert!(!m.chars().any(is_control_like), "{m:?}");
        }
    }
    prop_assert!(t.elapsed() < PER_CASE, "took {:?}", t.elapsed());
    Ok(())
}

proptest! {
    #![proptest_config(cases(3000))]

    #[test]
    fn speech_server_answers_are_bounded_one_line_text_or_one_line_errors(
        body in answer_body(),
    ) {
        limit_memory();
        check_answer(&body)?;
    }
}

/// Answers as big as the network layer lets through (1 MiB): a text of loops and control
/// characters, a language name of a megabyte, a million segments, bytes that are not JSON.
#[test]
fn huge_speech_server_answers_are_bounded_at_once() {
    limit_memory();
    let mib = 1 << 20;
    let loop_text = "Thank you.\u{202e}\n\u{1b}[2J ".repeat(mib / 20);
    let bodies: Vec<Vec<u8>> = vec![
        serde_json::json!({ "text": loop_text })
            .to_string()
            .into_bytes(),
        serde_json::json!({ "text": "hi", "language": "x\u{7}".repeat(mib / 8) })
            .to_string()
            .into_bytes(),
        format!(
            "{{\"text\":\"a\",\"segments\":[{}]}}",
            vec!["{\"end\":1e300,\"no_speech_prob\":9}"; mib / 40].join(",")
        )
        .into_bytes(),
        "\u{202e}<html>".repeat(mib / 9).into_bytes(),
    ];
    for body in bodies {
        check_answer(&body).unwrap_or_else(|e| panic!("{} bytes: {e}", body.len()));
    }
}

// ---------------------------------------------------------------------------------------
// The crafted corpus

#[test]
fn every_crafted_file_gets_a_clear_error_at_once() {
    limit_memory();
    let mut names: Vec<String> = std::fs::read_dir(crafted_dir())
        .expect("tests/data/crafted")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n != "make.py")
        .collect();
    names.sort();
    assert!(names.len() >= 20, "corpus incomplete: {names:?}");
    for name in &names {
        let path = crafted_dir().join(name);
        let t = Instant::now();
        if name.starts_with("ok-wav-") {
            // Valid files with hostile samples: decoded, to finite samples in [-1, 1].
            let d = decode_16k(&path, 4 * 3600).expect(name);
            assert!(!d.samples.is_empty(), "{name}");
            assert!(
                d.samples.iter().all(|v| v.is_finite() && v.abs() <= 1.0),
                "{name}"
            );
            continue;
        }
        let message = if name.starts_with("wav-") {
            let err = decode_16k(&path, 4 * 3600).expect_err(name);
            assert!(
                matches!(
                    err,
                    Error::AudioFormat { .. }
                        | Error::AudioEmpty { .. }
                        | Error::AudioTooLong { .. }
                ),
                "{name}: {err}"
            );
            let again = read_wav_capped(&path, 4 * 3600).expect_err(name);
            assert_eq!(again.to_string(), err.to_string(), "{name}");
            err.to_string()
        } else if name.starts_with("model-") {
            let err = check_model_file(&path).expect_err(name);
            assert!(matches!(err, Error::ModelCorrupt { .. }), "{name}: {err}");
            err.to_string()
        } else if name.starts_with("config-") {
            let text = std::fs::read_to_string(&path).expect("read");
            let err = Config::parse(&text, &path).expect_err(name);
            assert!(
                matches!(err, Error::ConfigValue { .. } | Error::ConfigSyntax { .. }),
                "{name}: {err}"
            );
            err.to_string()
        } else {
            panic!("{name}: unknown kind of crafted file (ok-wav-, wav-, model-, config-)");
        };
        assert!(!message.contains('\n'), "{name}: {message}");
        assert!(
            t.elapsed() < Duration::from_secs(1),
            "{name}: {:?}",
            t.elapsed()
        );
    }
}

#[test]
fn the_memory_limit_is_real() {
    limit_memory();
    // A test that cannot fail proves nothing: 1 GiB must be refused here. (try_reserve
    // reports the failure instead of aborting the process.)
    let mut v: Vec<u8> = Vec::new();
    assert!(
        v.try_reserve_exact(1 << 30).is_err(),
        "RLIMIT_AS is not in force"
    );
}
