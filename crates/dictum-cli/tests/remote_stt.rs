//! Shared speech servers (issue 15), against the real whisper.cpp `whisper-server`:
//! - `dictum transcribe --stt-backend openai` gives the same words as the local model, with the
//!   audio sent as FLAC (the default) and as WAV;
//! - a server that refuses FLAC (a declared stand-in in front of whisper-server) gets the same
//!   dictation again as WAV at once, and WAV from then on; the FLAC files pass libFLAC's own
//!   `flac -t` and decode to the very samples;
//! - the server killed → the next dictation is transcribed locally, the row says so, the
//!   circuit breaker then skips the server (engine level, one process, with the costs measured);
//! - a server that hangs is cut off at `stt.timeout_ms`;
//! - a wrong API key (behind a declared stand-in gateway that checks bearer keys the way
//!   OpenAI does) is one line, and no key ever reaches the config, the output, the logs,
//!   `doctor` or the history database.
//!
//! - speech that repeats itself (a 50 s reading of "It was the best of times, it was the worst
//!   of times, …") is the server's transcript, not a "loop"; an answer that is a loop (the
//!   declared stand-in `answer`) is redone locally and kept in the row;
//! - a thin client (speech server, no local model installed): `dictum transcribe` and
//!   `dictum run` work, say once that nothing redoes what the server fails, and keep what
//!   it failed (the answer in the row, the audio on disk).
//!
//! Live dictation through the virtual microphone with the server backend: `live_dictation_*`
//! below (the PulseAudio virtual-mic harness of `live_x11.rs`).

#[path = "../../dictum-engine/tests/common/mod.rs"]
mod common;
#[path = "support/speech.rs"]
mod speech;
#[path = "support/stt_servers.rs"]
mod stt_servers;

use dictum_engine::config::{Config, SttBackend, SttUpload};
use dictum_engine::eval::normalize;
use dictum_engine::pipeline::Engine;
use dictum_engine::store::{Entry, History, Query};
use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};
use stt_servers::{whisper_server_bin, Standin, WhisperServer};

const CLIPS: &[&str] = &["jfk.wav", "goforward.wav", "sns-0880.wav", "cards-001.wav"];

fn dictum(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_dictum"));
    cmd.args(args)
        .env("DICTUM_DATA_DIR", dir.join("data"))
        .env("DICTUM_CONFIG", dir.join("config.toml"))
        .env(
            "DICTUM_MODELS_DIR",
            common::tiny_model().parent().expect("dir"),
        )
        .env("DICTUM_LOG", "debug,pulseaudio=off")
        .env_remove("DBUS_SESSION_BUS_ADDRESS");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("run dictum")
}

/// `dictum transcribe CLIP --json` through the OpenAI-compatible speech server at `url`, with
/// `extra` arguments and `env` variables.
fn transcribe_remote(
    dir: &Path,
    clip: &str,
    url: &str,
    extra: &[&str],
    env: &[(&str, &str)],
) -> Output {
    let mut args = vec![
        "transcribe",
        clip,
        "--json",
        "--stt-backend",
        "openai",
        "--stt-url",
        url,
    ];
    args.extend_from_slice(extra);
    dictum(dir, &args, env)
}

fn json_of(o: &Output) -> Value {
    serde_json::from_slice(&o.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}\n{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        )
    })
}

fn write_config(dir: &Path, stt: &str) {
    std::fs::write(
        dir.join("config.toml"),
        format!(
            "[stt]\nmodel = \"tiny.en-q8_0\"\nthreads = 2\n{stt}\n[history]\nkeep_audio = false\n"
        ),
    )
    .expect("config");
}

#[test]
fn remote_transcription_gives_the_local_words_and_falls_back_when_the_server_dies() {
    let Some(bin) = whisper_server_bin() else {
        return;
    };
    let mut server = WhisperServer::start(&bin, &common::tiny_model());
    let dir = tempfile::tempdir().expect("tempdir");
    write_config(dir.path(), "");
    let url = server.url();
    for clip in CLIPS {
        let path = common::clip(clip);
        let path = path.to_str().expect("path");
        let local = json_of(&dictum(dir.path(), &["transcribe", path, "--json"], &[]));
        let server_run = |upload: &str| {
            transcribe_remote(
                dir.path(),
                path,
                &url,
                &["--stt-timeout-ms", "120000", "--stt-upload", upload],
                &[],
            )
        };
        // The default (auto) sends FLAC, which whisper-server decodes (miniaudio's dr_flac).
        let o = server_run("auto");
        let remote = json_of(&o);
        let log = String::from_utf8_lossy(&o.stderr);
        assert!(log.contains("speech server upload: flac,"), "{log}");
        assert!(!log.contains("refused FLAC"), "{log}");
        let wav = json_of(&server_run("wav"));
        assert_eq!(wav["stt_backend"], "openai", "{wav}");
        assert_eq!(
            normalize(wav["text"].as_str().unwrap_or_default()),
            normalize(remote["text"].as_str().unwrap_or_default()),
            "{clip}: FLAC and WAV uploads differ"
        );
        assert_eq!(local["stt_backend"], "local", "{local}");
        assert_eq!(remote["stt_backend"], "openai", "{remote}");
        assert!(remote["stt_fallback"].is_null(), "{remote}");
        assert_eq!(
            remote["device"],
            format!("server 127.0.0.1:{}", server.port),
            "{remote}"
        );
        let (l, r) = (
            local["text"].as_str().unwrap_or_default(),
            remote["text"].as_str().unwrap_or_default(),
        );
        assert!(!r.is_empty(), "{remote}");
        assert_eq!(
            normalize(l),
            normalize(r),
            "{clip}: local {l:?} vs server {r:?}"
        );
        eprintln!(
            "{clip}: local stt {:.0} ms, server round trip {:.0} ms: {r:?}",
            local["timings_ms"]["stt"].as_f64().unwrap_or(f64::NAN),
            remote["timings_ms"]["stt"].as_f64().unwrap_or(f64::NAN)
        );
    }

    // The server dies: the next dictation is transcribed locally, nothing lost, the row says why.
    server.kill();
    let o = transcribe_remote(
        dir.path(),
        common::clip("goforward.wav").to_str().expect("path"),
        &url,
        &[],
        &[],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v = json_of(&o);
    assert_eq!(v["stt_backend"], "local", "{v}");
    assert_eq!(
        normalize(v["text"].as_str().unwrap_or_default()),
        normalize("go forward 10 meters")
    );
    let why = v["stt_fallback"].as_str().unwrap_or_default();
    assert!(
        why.contains("cannot be reached") && why.contains("transcribed locally"),
        "{v}"
    );
    let history = History::open(&dir.path().join("data/history.sqlite3")).expect("history");
    let row = history
        .get(v["id"].as_i64().expect("id"))
        .expect("row")
        .expect("row");
    assert_eq!(row.stt_backend.as_deref(), Some("local"));
    assert_eq!(row.stt_fallback.as_deref(), Some(why));
    assert_eq!(row.outcome, dictum_engine::store::Outcome::Ok);
}

#[test]
fn a_hanging_server_is_cut_off_at_the_timeout() {
    let hang = Standin::start(&["hang", "0"], &[]);
    let dir = tempfile::tempdir().expect("tempdir");
    write_config(dir.path(), "");
    let t = Instant::now();
    let o = transcribe_remote(
        dir.path(),
        common::clip("goforward.wav").to_str().expect("path"),
        &hang.url(),
        &["--stt-timeout-ms", "1500"],
        &[],
    );
    let took = t.elapsed();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v = json_of(&o);
    assert_eq!(v["stt_backend"], "local", "{v}");
    assert!(
        v["stt_fallback"]
            .as_str()
            .unwrap_or_default()
            .contains("did not answer within 1500 ms"),
        "{v}"
    );
    assert_eq!(
        normalize(v["text"].as_str().unwrap_or_default()),
        normalize("go forward 10 meters")
    );
    // Cut at 1.5 s, not hung: the whole run (model load included) well under a minute.
    assert!(took < Duration::from_secs(60), "{took:?}");
    assert!(
        v["timings_ms"]["stt"].as_f64().unwrap_or(0.0) >= 1500.0,
        "{v}"
    );
}

/// One process, one engine: the breaker. Server up → server; killed → local (first dictation
/// pays the failed attempt and the model load), then the breaker skips the server; a hanging
/// server costs one timeout, then nothing. Prints the costs (docs/PERFORMANCE.md).
#[test]
fn the_breaker_spares_the_timeout_while_the_server_is_down() {
    let Some(bin) = whisper_server_bin() else {
        return;
    };
    let mut server = WhisperServer::start(&bin, &common::tiny_model());
    let dir = tempfile::tempdir().expect("tempdir");
    let history = History::open(&dir.path().join("h.sqlite3")).expect("history");
    let mut config = Config::default();
    config.stt.model = common::tiny_model().display().to_string();
    config.stt.threads = 2;
    config.stt.backend = SttBackend::Openai;
    config.stt.url = server.url();
    config.stt.retry_after_ms = 600_000;
    // A CPU whisper-server on a busy 2-core box takes seconds; the hang below gets 1.5 s.
    config.stt.timeout_ms = 60_000;
    let mut engine = Engine::new(config.clone(), Vec::new());
    let clip = common::clip("goforward.wav");
    let run = |engine: &mut Engine, label: &str| -> (Entry, f64) {
        let t = Instant::now();
        let u = engine.transcribe_file(&history, &clip).expect("transcribe");
        let ms = t.elapsed().as_secs_f64() * 1000.0;
        assert!(u.error.is_none(), "{label}: {:?}", u.error);
        assert_eq!(
            normalize(u.entry.text.as_deref().unwrap_or_default()),
            normalize("go forward 10 meters"),
            "{label}"
        );
        eprintln!(
            "{label}: {ms:.0} ms wall, stt {:.0} ms, backend {:?}, fallback {:?}",
            u.entry.stt_ms.unwrap_or(0.0),
            u.entry.stt_backend,
            u.entry.stt_fallback
        );
        (u.entry, ms)
    };
    let (e, _) = run(&mut engine, "server up");
    assert_eq!(e.stt_backend.as_deref(), Some("openai"));
    assert!(
        !engine.model_loaded(),
        "the local model loads only when needed"
    );
    // Start-up waits for one "model loaded" report: the server backend gives it (0 ms) once.
    assert_eq!(engine.ensure_model().expect("ready"), Some((0.0, 0.0)));
    assert_eq!(engine.ensure_model().expect("ready"), None);
    assert!(
        !engine.model_loaded(),
        "ensure_model loads nothing for the server"
    );
    // whisper-server closes a kept-alive connection after 5 s idle: the next dictation must
    // not take that for a dead server.
    std::thread::sleep(Duration::from_secs(6));
    let (e, _) = run(&mut engine, "server up, after 6 s idle");
    assert_eq!(
        e.stt_backend.as_deref(),
        Some("openai"),
        "{:?}",
        e.stt_fallback
    );

    server.kill();
    let (e, _) = run(&mut engine, "server killed, first dictation");
    assert_eq!(e.stt_backend.as_deref(), Some("local"));
    assert!(e
        .stt_fallback
        .as_deref()
        .unwrap_or_default()
        .contains("cannot be reached"));
    assert!(e.model_load_ms.is_some(), "loaded on demand");
    let (e, _) = run(&mut engine, "server killed, breaker open");
    assert!(
        e.stt_fallback
            .as_deref()
            .unwrap_or_default()
            .contains("skipped for"),
        "{e:?}"
    );
    assert!(
        e.model_load_ms.is_none(),
        "kept warm while the server is down"
    );

    let accepted = dir.path().join("accepted.log");
    let hang = Standin::start(
        &["hang", "0"],
        &[("STANDIN_LOG", accepted.to_str().expect("path"))],
    );
    let connections = || {
        std::fs::read_to_string(&accepted)
            .unwrap_or_default()
            .lines()
            .count()
    };
    config.stt.url = hang.url();
    config.stt.timeout_ms = 1500;
    engine.reconfigure(config).expect("reconfigure");
    let (e, first) = run(&mut engine, "server hangs, first dictation");
    assert!(e
        .stt_fallback
        .as_deref()
        .unwrap_or_default()
        .contains("did not answer within 1500 ms"));
    assert!(first >= 1500.0, "{first:.0} ms");
    assert_eq!(connections(), 1);
    let (e, _) = run(&mut engine, "server hangs, breaker open");
    assert!(
        e.stt_fallback
            .as_deref()
            .unwrap_or_default()
            .contains("skipped for"),
        "{e:?}"
    );
    assert_eq!(
        connections(),
        1,
        "the breaker was open: the server must not be asked"
    );
}

/// A wrong key is one line; and no key (right or wrong) ever lands in the config file, the
/// output and logs (debug level), `doctor`'s report or the history database.
#[test]
fn a_wrong_key_is_one_line_and_keys_never_leak() {
    let Some(bin) = whisper_server_bin() else {
        return;
    };
    const KEY: &str = "sk-dictum-test-RIGHT-4f9a1c77e2";
    const WRONG: &str = "sk-dictum-test-WRONG-0b3d5e91aa";
    let server = WhisperServer::start(&bin, &common::tiny_model());
    let dir = tempfile::tempdir().expect("tempdir");
    let verdicts = dir.path().join("gateway.log");
    let gateway = Standin::start(
        &["auth", "0", &server.url()],
        &[
            ("STANDIN_KEY", KEY),
            ("STANDIN_LOG", verdicts.to_str().expect("path")),
        ],
    );
    let server_keys = format!(
        "backend = \"openai\"\nurl = \"{}\"\napi_key_env = \"DICTUM_TEST_STT_KEY\"\ntimeout_ms = 60000\n",
        gateway.url()
    );
    write_config(dir.path(), &server_keys);
    let clip = common::clip("goforward.wav");
    let clip = clip.to_str().expect("path");
    let mut everything = String::new();
    let mut keep = |o: &Output| {
        everything.push_str(&String::from_utf8_lossy(&o.stdout));
        everything.push_str(&String::from_utf8_lossy(&o.stderr));
    };

    // The right key: the server's answer, with the gateway's processing time split out.
    let o = dictum(
        dir.path(),
        &["transcribe", clip, "--json"],
        &[("DICTUM_TEST_STT_KEY", KEY)],
    );
    keep(&o);
    let v = json_of(&o);
    assert_eq!(v["stt_backend"], "openai", "{v}");
    let server_ms = v["stt_server_ms"].as_f64().expect("x-processing-ms read");
    let upload_ms = v["stt_upload_ms"].as_f64().expect("upload split");
    assert!(server_ms > 0.0 && upload_ms >= 0.0, "{v}");

    // The wrong key: transcribed locally (nothing lost), and the reason is one line.
    let o = dictum(
        dir.path(),
        &["transcribe", clip, "--json"],
        &[("DICTUM_TEST_STT_KEY", WRONG)],
    );
    keep(&o);
    let v = json_of(&o);
    assert_eq!(v["stt_backend"], "local", "{v}");
    let stderr = String::from_utf8_lossy(&o.stderr);
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("dictum: warning"))
        .collect();
    assert_eq!(warnings.len(), 1, "{stderr}");
    assert!(
        warnings[0].contains("refused the API key (HTTP 401)")
            && warnings[0].contains("dictum key set stt"),
        "{stderr}"
    );

    // With the fallback off, the same wrong key is the error: one line, exit status 1.
    write_config(dir.path(), &format!("{server_keys}fallback = false\n"));
    let o = dictum(
        dir.path(),
        &["transcribe", clip],
        &[("DICTUM_TEST_STT_KEY", WRONG), ("DICTUM_LOG", "off")],
    );
    keep(&o);
    assert!(!o.status.success());
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(stderr.trim().lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("dictum: error:") && stderr.contains("refused the API key"),
        "{stderr}"
    );

    // doctor, both keys.
    for key in [KEY, WRONG] {
        let o = dictum(
            dir.path(),
            &["doctor", "--json"],
            &[("DICTUM_TEST_STT_KEY", key)],
        );
        keep(&o);
        let v = json_of(&o);
        let check = v["checks"]
            .as_array()
            .and_then(|c| c.iter().find(|c| c["name"] == "stt server"))
            .cloned()
            .expect("stt server check");
        let want = if key == KEY { "ok" } else { "fail" };
        assert_eq!(check["status"], want, "{check}");
        if key == KEY {
            let d = check["detail"].as_str().unwrap_or_default();
            assert!(
                d.contains("of clubs") && d.contains("$DICTUM_TEST_STT_KEY"),
                "{d}"
            );
        }
    }

    // The gateway really got the right key and really refused the wrong one.
    let seen = std::fs::read_to_string(&verdicts).expect("gateway log");
    assert!(
        seen.lines().any(|l| l == "ok") && seen.lines().any(|l| l == "refused"),
        "{seen}"
    );

    // Nowhere: output and logs, the config file, any file of the data folder (DB, WAL, audio).
    for key in [KEY, WRONG] {
        assert!(
            !everything.contains(key),
            "a key appeared in the output or logs"
        );
        let mut files = vec![dir.path().join("config.toml")];
        for e in walk(&dir.path().join("data")) {
            files.push(e);
        }
        assert!(files.len() > 1, "no history files to check");
        for f in files {
            let bytes = std::fs::read(&f).expect("read");
            assert!(
                !bytes.windows(key.len()).any(|w| w == key.as_bytes()),
                "the key is in {}",
                f.display()
            );
        }
    }
    // The history rows are there (the check looked at real data).
    let history = History::open(&dir.path().join("data/history.sqlite3")).expect("history");
    let rows = history
        .list(&Query {
            limit: 0,
            search: None,
        })
        .expect("rows");
    assert!(rows.len() >= 2, "{}", rows.len());
}

/// `stt.upload = "auto"` against a server that takes WAV only (the declared stand-in in front
/// of the real whisper-server, refusing FLAC with 415, or answering it with an HTML page): the
/// first dictation is sent again as WAV at once (no local fallback, no timeout), the second
/// goes straight to WAV (the stand-in counts the requests); `upload = "flac"` makes the
/// refusal a failure, transcribed locally with the row saying why.
#[test]
fn a_server_that_refuses_flac_gets_wav_on_the_same_dictation_and_after() {
    let Some(bin) = whisper_server_bin() else {
        return;
    };
    let server = WhisperServer::start(&bin, &common::tiny_model());
    let dir = tempfile::tempdir().expect("tempdir");
    let history = History::open(&dir.path().join("h.sqlite3")).expect("history");
    let clip = common::clip("goforward.wav");
    for (answer, refusal, why) in [
        (
            "415",
            "flac 415",
            "HTTP 415: Unsupported audio format: flac",
        ),
        ("garbage", "flac 200-garbage", "not a transcript"),
    ] {
        let log = dir.path().join(format!("noflac-{answer}.log"));
        let standin = Standin::start(
            &["noflac", "0", &server.url()],
            &[
                ("STANDIN_LOG", log.to_str().expect("path")),
                ("STANDIN_FLAC_ANSWER", answer),
            ],
        );
        let requests = || -> Vec<String> {
            std::fs::read_to_string(&log)
                .unwrap_or_default()
                .lines()
                .map(String::from)
                .collect()
        };
        let mut config = Config::default();
        config.stt.model = common::tiny_model().display().to_string();
        config.stt.threads = 2;
        config.stt.backend = SttBackend::Openai;
        config.stt.url = standin.url();
        config.stt.timeout_ms = 60_000;
        config.stt.retry_after_ms = 600_000;
        assert_eq!(config.stt.upload, SttUpload::Auto, "auto is the default");
        let mut engine = Engine::new(config.clone(), Vec::new());
        let run = |engine: &mut Engine| -> Entry {
            let t = Instant::now();
            let u = engine.transcribe_file(&history, &clip).expect("transcribe");
            assert!(u.error.is_none(), "{:?}", u.error);
            eprintln!(
                "{answer}: {:.0} ms, stt {:?} ms, backend {:?}, fallback {:?}, requests {:?}",
                t.elapsed().as_secs_f64() * 1000.0,
                u.entry.stt_ms,
                u.entry.stt_backend,
                u.entry.stt_fallback,
                requests()
            );
            assert_eq!(
                normalize(u.entry.text.as_deref().unwrap_or_default()),
                normalize("go forward 10 meters")
            );
            u.entry
        };
        let e = run(&mut engine);
        assert_eq!(e.stt_backend.as_deref(), Some("openai"), "{e:?}");
        assert!(e.stt_fallback.is_none(), "{e:?}");
        assert_eq!(
            requests(),
            [refusal, "wav 200"],
            "refused, then WAV at once"
        );
        assert!(!engine.model_loaded(), "no local fallback was needed");
        let e = run(&mut engine);
        assert_eq!(e.stt_backend.as_deref(), Some("openai"), "{e:?}");
        assert_eq!(
            requests(),
            [refusal, "wav 200", "wav 200"],
            "the second dictation goes straight to WAV"
        );

        // FLAC only: the refusal is a failure like any other, and the row says which.
        config.stt.upload = SttUpload::Flac;
        engine.reconfigure(config).expect("reconfigure");
        let e = run(&mut engine);
        assert_eq!(e.stt_backend.as_deref(), Some("local"), "{e:?}");
        let fallback = e.stt_fallback.unwrap_or_default();
        assert!(fallback.contains(why), "{fallback}");
        assert_eq!(requests(), [refusal, "wav 200", "wav 200", refusal]);
    }
}

/// The encoder against libFLAC, the reference: every dev clip's FLAC passes `flac -t` (frame
/// CRCs and the STREAMINFO MD5 of the decoded samples) and `flac -d` gives back exactly the
/// clip's samples. Prints the sizes (WAV, Dictum's FLAC, libFLAC -5 with LPC, no padding) and the encode
/// time for docs/REMOTE.md (this test binary is a debug build unless run with --release).
#[test]
fn flac_uploads_pass_libflac_and_are_smaller() {
    if !common::tools_ready(&["flac"], " (apt install flac)") {
        return;
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let assets = common::clip("jfk.wav")
        .parent()
        .expect("dev clips")
        .to_path_buf();
    let mut clips: Vec<_> = std::fs::read_dir(&assets)
        .expect("dev clips")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|e| e == "wav"))
        .collect();
    clips.sort();
    assert!(clips.len() >= 4, "{clips:?}");
    let (mut wav_total, mut flac_total, mut ref_total, mut secs, mut encode_s) =
        (0usize, 0usize, 0usize, 0.0f64, 0.0f64);
    println!("clip\ts\twav_bytes\tflac_bytes\tratio\tlibflac5_bytes\tencode_ms");
    for clip in &clips {
        let samples: Vec<i16> = hound::WavReader::open(clip)
            .expect("wav")
            .into_samples::<i16>()
            .map(|s| s.expect("sample"))
            .collect();
        let t = Instant::now();
        let flac = dictum_engine::stt::flac::encode(&samples);
        let took = t.elapsed().as_secs_f64();
        let name = clip.file_name().and_then(|n| n.to_str()).expect("name");
        let file = dir.path().join(format!("{name}.flac"));
        std::fs::write(&file, &flac).expect("write");
        let test = Command::new("flac")
            .args(["-t", "-s", "-w"])
            .arg(&file)
            .output()
            .expect("flac -t");
        assert!(
            test.status.success(),
            "{name}: flac -t: {}",
            String::from_utf8_lossy(&test.stderr)
        );
        let back = dir.path().join(format!("{name}.back.wav"));
        let decode = Command::new("flac")
            .args(["-d", "-s", "-f", "-o"])
            .arg(&back)
            .arg(&file)
            .output()
            .expect("flac -d");
        assert!(decode.status.success(), "{name}: flac -d");
        let decoded: Vec<i16> = hound::WavReader::open(&back)
            .expect("decoded wav")
            .into_samples::<i16>()
            .map(|s| s.expect("sample"))
            .collect();
        assert!(decoded == samples, "{name}: libFLAC decoded other samples");
        let reference = dir.path().join(format!("{name}.ref.flac"));
        let r = Command::new("flac")
            .args(["-5", "--no-padding", "--no-seektable", "-s", "-f", "-o"])
            .arg(&reference)
            .arg(clip)
            .output()
            .expect("flac -5");
        assert!(r.status.success(), "{name}: flac -5");
        let ref_len = std::fs::metadata(&reference).expect("ref").len() as usize;
        let wav_len = 44 + 2 * samples.len();
        let s = samples.len() as f64 / 16_000.0;
        println!(
            "{name}\t{s:.2}\t{wav_len}\t{}\t{:.3}\t{ref_len}\t{:.1}",
            flac.len(),
            flac.len() as f64 / wav_len as f64,
            took * 1000.0
        );
        wav_total += wav_len;
        flac_total += flac.len();
        ref_total += ref_len;
        secs += s;
        encode_s += took;
    }
    println!(
        "total\t{secs:.1}\t{wav_total}\t{flac_total}\t{:.3}\t{ref_total} ({:.3})\t{:.2} ms per s of audio",
        flac_total as f64 / wav_total as f64,
        ref_total as f64 / wav_total as f64,
        encode_s * 1000.0 / secs
    );
    assert!(
        flac_total * 10 < wav_total * 8,
        "FLAC should save at least 20% on speech: {flac_total} vs {wav_total}"
    );
}

fn walk(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(walk(&p));
        } else {
            out.push(p);
        }
    }
    out
}

/// Live dictation (`dictum run`: microphone → streaming segmenter → speech server) through the
/// PulseAudio virtual microphone: the speculative passes and the tail go to the server; the
/// server is then killed mid-run and the next dictations are transcribed locally, the rows
/// saying so, nothing lost; the breaker keeps the dead server out of the third.
/// The live cases through the virtual microphone, in order: the private PulseAudio daemon is
/// one per test binary (its address is in the process environment).
#[test]
fn live_dictation_with_a_speech_server() {
    if !common::tools_ready(&["pulseaudio", "pactl", "paplay"], "") {
        return;
    }
    let _pulse = common::pulse::Pulse::start();
    a_thin_client_runs_and_keeps_the_audio_the_server_failed();
    live_dictation_through_the_virtual_mic_uses_the_server_and_survives_its_death();
}

fn live_dictation_through_the_virtual_mic_uses_the_server_and_survives_its_death() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::Stdio;
    let Some(bin) = whisper_server_bin() else {
        return;
    };
    let mut server = WhisperServer::start(&bin, &common::tiny_model());
    let dir = tempfile::tempdir().expect("tempdir");
    std::fs::write(
        dir.path().join("config.toml"),
        format!(
            "[stt]\nmodel = \"{}\"\nthreads = 2\nbackend = \"openai\"\nurl = \"{}\"\ntimeout_ms = 60000\nretry_after_ms = 600000\n\n[inject]\nnotify_on_failure = false\n",
            common::tiny_model().display(),
            server.url()
        ),
    )
    .expect("config");
    let mut child = Command::new(env!("CARGO_BIN_EXE_dictum"))
        .args(["run", "--json", "--stdin-commands", "--no-hotkey"])
        .env("DICTUM_DATA_DIR", dir.path())
        .env("DICTUM_CONFIG", dir.path().join("config.toml"))
        .env(
            "DICTUM_LOG",
            "warn,pulseaudio=off,enigo=error,arboard=error",
        )
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("start dictum run");
    let mut stdin = child.stdin.take().expect("stdin");
    let stdout = child.stdout.take().expect("stdout");
    let (tx, rx) = std::sync::mpsc::channel::<Value>();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Ok(v) = serde_json::from_str::<Value>(&line) {
                if tx.send(v).is_err() {
                    break;
                }
            }
        }
    });
    let next = |kind: &str, within: Duration| -> Value {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let ev = rx
                .recv_timeout(left)
                .unwrap_or_else(|e| panic!("no `{kind}` event within {within:?}: {e}"));
            if ev["event"] == kind {
                return ev;
            }
        }
    };
    next("ready", Duration::from_secs(90));
    let history = History::open(&dir.path().join("history.sqlite3")).expect("history");
    let mut dictate = |clip: &str| -> (Value, Entry) {
        writeln!(stdin, "press").expect("press");
        std::thread::sleep(Duration::from_millis(100));
        common::pulse::play_and_wait(clip);
        std::thread::sleep(Duration::from_millis(500));
        writeln!(stdin, "release").expect("release");
        let ev = next("dictation", Duration::from_secs(120));
        let row = history
            .get(ev["id"].as_i64().expect("id"))
            .expect("row")
            .expect("row");
        eprintln!(
            "{clip}: {:?}, release→text {:?} ms, backend {:?}, fallback {:?}",
            ev["text"], ev["release_to_text_ms"], row.stt_backend, row.stt_fallback
        );
        assert_eq!(ev["outcome"], "ok", "{ev}");
        let wer = dictum_engine::eval::WerCount::of(
            &common::pulse::reference(clip),
            ev["text"].as_str().unwrap_or_default(),
        );
        assert!(wer.rate() <= 0.25, "{clip}: {ev} ({wer:?})");
        (ev, row)
    };

    let (_, row) = dictate("jfk.wav");
    assert_eq!(row.stt_backend.as_deref(), Some("openai"), "{row:?}");
    assert!(row.stt_fallback.is_none(), "{row:?}");
    assert!(
        row.device
            .as_deref()
            .unwrap_or_default()
            .starts_with("server "),
        "{row:?}"
    );

    server.kill();
    let (_, row) = dictate("sns-0880.wav");
    assert!(
        row.stt_backend
            .as_deref()
            .unwrap_or_default()
            .contains("local"),
        "{row:?}"
    );
    let why = row.stt_fallback.clone().unwrap_or_default();
    assert!(why.contains("cannot be reached"), "{row:?}");

    let (_, row) = dictate("goforward.wav");
    assert_eq!(row.stt_backend.as_deref(), Some("local"), "{row:?}");
    assert!(
        row.stt_fallback
            .as_deref()
            .unwrap_or_default()
            .contains("skipped for"),
        "{row:?}"
    );
    let _ = writeln!(stdin, "quit");
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
}

/// The keyring path with a real Secret Service (gnome-keyring under a private D-Bus session):
/// `dictum key set stt` stores the key (from stdin), `stt.api_key_env` empty makes Dictum take
/// it from there, the gateway accepts it, doctor says where it came from, and the key is in
/// none of the outputs or files.
#[test]
fn the_keyring_key_reaches_the_server_and_nothing_else() {
    if !common::tools_ready(
        &["dbus-run-session", "gnome-keyring-daemon", "python3"],
        " (apt install dbus gnome-keyring)",
    ) {
        return;
    }
    let Some(bin) = whisper_server_bin() else {
        return;
    };
    const KEY: &str = "sk-dictum-keyring-7c1e55d0b2";
    let server = WhisperServer::start(&bin, &common::tiny_model());
    let dir = tempfile::tempdir().expect("tempdir");
    let verdicts = dir.path().join("gateway.log");
    let gateway = Standin::start(
        &["auth", "0", &server.url()],
        &[
            ("STANDIN_KEY", KEY),
            ("STANDIN_LOG", verdicts.to_str().expect("path")),
        ],
    );
    write_config(
        dir.path(),
        &format!(
            "backend = \"openai\"\nurl = \"{}\"\ntimeout_ms = 60000\nfallback = false\n",
            gateway.url()
        ),
    );
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).expect("home");
    let key_file = dir.path().join("key.txt");
    std::fs::write(&key_file, format!("{KEY}\n")).expect("key file");
    let script = r#"
        set -e
        echo -n test-password | gnome-keyring-daemon --unlock --components=secrets >/dev/null
        "$DICTUM" key set stt < "$KEY_FILE"
        rm -f "$KEY_FILE"
        "$DICTUM" key status stt
        echo "== transcribe"
        "$DICTUM" transcribe "$CLIP" --json
        echo "== doctor"
        "$DICTUM" doctor --json || true
    "#;
    let o = Command::new("dbus-run-session")
        .args(["--", "sh", "-c", script])
        .env("HOME", &home)
        .env("XDG_DATA_HOME", home.join("share"))
        .env("XDG_RUNTIME_DIR", &home)
        .env("DICTUM", env!("CARGO_BIN_EXE_dictum"))
        .env("KEY_FILE", &key_file)
        .env("CLIP", common::clip("goforward.wav"))
        .env("DICTUM_DATA_DIR", dir.path().join("data"))
        .env("DICTUM_CONFIG", dir.path().join("config.toml"))
        .env(
            "DICTUM_MODELS_DIR",
            common::tiny_model().parent().expect("dir"),
        )
        .env("DICTUM_LOG", "debug,pulseaudio=off")
        .output()
        .expect("dbus-run-session");
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    let err = String::from_utf8_lossy(&o.stderr).into_owned();
    assert!(o.status.success(), "{out}\n{err}");
    assert!(out.contains("the keyring holds a stt key"), "{out}\n{err}");
    let (_, rest) = out.split_once("== transcribe").expect("transcribe ran");
    let (transcribed, doctor) = rest.split_once("== doctor").expect("doctor ran");
    let v: Value = serde_json::from_str(transcribed.trim()).expect("transcribe json");
    assert_eq!(v["stt_backend"], "openai", "{v}\n{err}");
    let d: Value = serde_json::from_str(doctor.trim()).expect("doctor json");
    let check = d["checks"]
        .as_array()
        .and_then(|c| c.iter().find(|c| c["name"] == "stt server"))
        .cloned()
        .expect("stt server check");
    assert_eq!(check["status"], "ok", "{check}");
    assert!(
        check["detail"]
            .as_str()
            .unwrap_or_default()
            .contains("API key from the keyring (dictum/stt)"),
        "{check}"
    );
    let seen = std::fs::read_to_string(&verdicts).expect("gateway log");
    assert!(
        seen.lines().all(|l| l == "ok") && !seen.is_empty(),
        "{seen}"
    );
    assert!(
        !out.contains(KEY) && !err.contains(KEY),
        "the key was printed"
    );
    let mut files = vec![dir.path().join("config.toml")];
    files.extend(walk(&dir.path().join("data")));
    for f in files {
        let bytes = std::fs::read(&f).expect("read");
        assert!(
            !bytes.windows(KEY.len()).any(|w| w == KEY.as_bytes()),
            "the key is in {}",
            f.display()
        );
    }
}

/// The measurement behind docs/PERFORMANCE.md ("Shared speech servers"): one process, both
/// backends warm, alternating per clip (local, then the loopback whisper-server), `runs` times;
/// then the fallback's cost. `DICTUM_REMOTE_BENCH=N cargo test -p dictum-cli --test remote_stt
/// measure -- --ignored --nocapture`.
#[test]
#[ignore]
fn measure_remote_vs_local() {
    let Some(bin) = whisper_server_bin() else {
        return;
    };
    let runs: usize = std::env::var("DICTUM_REMOTE_BENCH")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(3);
    let mut server = WhisperServer::start(&bin, &common::tiny_model());
    let dir = tempfile::tempdir().expect("tempdir");
    let history = History::open(&dir.path().join("h.sqlite3")).expect("history");
    let mut config = Config::default();
    config.stt.model = common::tiny_model().display().to_string();
    config.stt.threads = 2;
    config.stt.timeout_ms = 120_000;
    config.stt.url = server.url();
    let mut local = Engine::new(config.clone(), Vec::new());
    config.stt.backend = SttBackend::Openai;
    let mut remote = Engine::new(config.clone(), Vec::new());
    let load = |p: &str| {
        std::fs::read_to_string("/proc/loadavg")
            .ok()
            .and_then(|l| l.split_whitespace().next().map(String::from))
            .unwrap_or_else(|| p.into())
    };
    let stt = |e: &mut Engine, clip: &str| -> (f64, Entry) {
        let u = e
            .transcribe_file(&history, &common::clip(clip))
            .expect("transcribe");
        (u.entry.stt_ms.unwrap_or(f64::NAN), u.entry)
    };
    // Warm both (model load, first request).
    stt(&mut local, "jfk.wav");
    stt(&mut remote, "jfk.wav");
    println!("clip\tbackend\trun\tstt_ms\tloadavg");
    for clip in [
        "jfk.wav",
        "goforward.wav",
        "sns-0870.wav",
        "sns-0880.wav",
        "cards-001.wav",
        "espeak-fox.wav",
    ] {
        for r in 1..=runs {
            let (ms, _) = stt(&mut local, clip);
            println!("{clip}\tlocal\t{r}\t{ms:.0}\t{}", load("?"));
            let (ms, e) = stt(&mut remote, clip);
            assert_eq!(
                e.stt_backend.as_deref(),
                Some("openai"),
                "{:?}",
                e.stt_fallback
            );
            println!("{clip}\topenai\t{r}\t{ms:.0}\t{}", load("?"));
        }
    }
    // Fallback: the server killed (connection refused), first dictation (the local model loads),
    // then with the breaker open; a hanging server (1.5 s timeout), first, then breaker open.
    server.kill();
    for label in ["down: first", "down: breaker open"] {
        let (ms, e) = stt(&mut remote, "goforward.wav");
        println!(
            "fallback {label}\tstt {ms:.0}\tmodel load {:?}\twarm-up {:?}\t{}",
            e.model_load_ms,
            e.warmup_ms,
            load("?")
        );
    }
    let hang = Standin::start(&["hang", "0"], &[]);
    config.stt.url = hang.url();
    config.stt.timeout_ms = 1500;
    remote.reconfigure(config).expect("reconfigure");
    for label in ["hang: first", "hang: breaker open"] {
        let (ms, _) = stt(&mut remote, "goforward.wav");
        println!("fallback {label}\tstt {ms:.0}\t{}", load("?"));
    }
    let (ms, _) = stt(&mut local, "goforward.wav");
    println!("local goforward\tstt {ms:.0}\t{}", load("?"));
}

const DICKENS: &str = "It was the best of times, it was the worst of times, it was the age of wisdom, it was the age of foolishness, it was the epoch of belief, it was the epoch of incredulity, it was the season of light, it was the season of darkness, it was the spring of hope, it was the winter of despair, we had everything before us, we had nothing before us, we were all going direct to heaven, we were all going direct the other way.";

/// What a looping server answers (whisper's "Thank you." loop), whatever the audio said.
const LOOP_ANSWER: &str = "Thank you. Thank you. Thank you. Thank you. Thank you. Thank you. Thank you. Thank you. Thank you. Thank you. Thank you. Thank you. Thank you. Thank you. Thank you. Thank you. Thank you. Thank you. Thank you. Thank you. Thank you. Thank you. Thank you. Thank you. Thank you. Thank you. Thank you. Thank you. Thank you. Thank you.";

/// The stand-in speech server that answers every request with `text`.
fn answering(dir: &Path, text: &str) -> Standin {
    let file = dir.join("answer.txt");
    std::fs::write(&file, text).expect("answer file");
    Standin::start(
        &["answer", "0"],
        &[("STANDIN_TEXT_FILE", file.to_str().expect("utf-8 path"))],
    )
}

/// The newest row of the history under `dir/data`.
fn last_row(dir: &Path) -> Entry {
    let history = History::open(&dir.join("data/history.sqlite3")).expect("history");
    let id = history.last_id().expect("last id").expect("a row");
    history.get(id).expect("row").expect("row")
}

/// Rhetoric repeats itself: the reading that was thrown away as "repetitive text" is the
/// server's transcript (before: `stt_backend` local, `stt_fallback` "… (repetitive text …)").
#[test]
fn a_reading_that_repeats_itself_is_the_servers_transcript() {
    if !speech::tools() {
        return;
    }
    let Some(bin) = whisper_server_bin() else {
        return;
    };
    let server = WhisperServer::start(&bin, &common::tiny_model());
    let dir = tempfile::tempdir().expect("tempdir");
    write_config(dir.path(), "");
    let clip = speech::speak(dir.path(), "dickens", DICKENS);
    let url = server.url();
    let o = transcribe_remote(
        dir.path(),
        clip.to_str().expect("path"),
        &url,
        &["--stt-timeout-ms", "120000"],
        &[],
    );
    let v = json_of(&o);
    let text = v["text"].as_str().unwrap_or_default();
    eprintln!("dickens ({} ms audio): {text:?}", v["audio_ms"]);
    assert_eq!(v["stt_backend"], "openai", "{v}");
    assert!(v["stt_fallback"].is_null(), "{v}");
    let wer = dictum_engine::eval::WerCount::of(DICKENS, text);
    assert!(wer.rate() <= 0.2, "{wer:?}: {v}");
}

/// A looping answer is not a transcript: the local model redoes it, and the answer is kept in
/// the row (`stt_fallback`), nothing the server said thrown away.
#[test]
fn a_looping_answer_is_redone_locally_and_kept_in_the_row() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_config(dir.path(), "");
    let server = answering(dir.path(), LOOP_ANSWER);
    let url = server.url();
    let o = transcribe_remote(
        dir.path(),
        common::clip("goforward.wav").to_str().expect("path"),
        &url,
        &[],
        &[],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v = json_of(&o);
    assert_eq!(v["stt_backend"], "local", "{v}");
    assert_eq!(
        normalize(v["text"].as_str().unwrap_or_default()),
        normalize("go forward 10 meters")
    );
    let row = last_row(dir.path());
    let why = row.stt_fallback.clone().unwrap_or_default();
    assert!(
        why.contains("not a transcript") && why.contains("transcribed locally"),
        "{row:?}"
    );
    assert!(why.contains(&format!("«{LOOP_ANSWER}»")), "{why}");
}

/// A thin client: speech server, no local model. `dictum transcribe` fails what the server
/// fails, and the row keeps the server's answer and says there is no local fallback.
#[test]
fn a_thin_client_keeps_the_answer_the_server_failed() {
    let dir = tempfile::tempdir().expect("tempdir");
    write_config(dir.path(), "");
    let no_models = dir.path().join("no-models");
    std::fs::create_dir_all(&no_models).expect("dir");
    let server = answering(dir.path(), LOOP_ANSWER);
    let url = server.url();
    let o = transcribe_remote(
        dir.path(),
        common::clip("goforward.wav").to_str().expect("path"),
        &url,
        &[],
        &[("DICTUM_MODELS_DIR", no_models.to_str().expect("path"))],
    );
    eprintln!("{}", String::from_utf8_lossy(&o.stderr));
    let row = last_row(dir.path());
    assert_eq!(row.outcome, dictum_engine::store::Outcome::Error, "{row:?}");
    let error = row.error.clone().unwrap_or_default();
    assert!(
        error.contains("not a transcript")
            && error.contains(dictum_engine::pipeline::NO_LOCAL_FALLBACK),
        "{row:?}"
    );
    // The error quotes a snippet; the row keeps the whole answer.
    assert!(error.len() < LOOP_ANSWER.len() + 300, "{error}");
    assert_eq!(row.raw_text.as_deref(), Some(LOOP_ANSWER), "{row:?}");
}

/// `dictum run` as a thin client: it starts with no local model (before: "model
/// `tiny.en-q8_0` is not installed"), says once that nothing stands in for the server, and a
/// dictation the server fails ends as an error with its audio kept.
fn a_thin_client_runs_and_keeps_the_audio_the_server_failed() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::Stdio;
    let dir = tempfile::tempdir().expect("tempdir");
    let no_models = dir.path().join("no-models");
    std::fs::create_dir_all(&no_models).expect("dir");
    let server = answering(dir.path(), LOOP_ANSWER);
    std::fs::write(
        dir.path().join("config.toml"),
        format!(
            "[stt]\nmodel = \"tiny.en-q8_0\"\nbackend = \"openai\"\nurl = \"{}\"\ntimeout_ms = 10000\n\n[history]\nkeep_audio = false\n\n[inject]\nnotify_on_failure = false\n",
            server.url()
        ),
    )
    .expect("config");
    let mut child = Command::new(env!("CARGO_BIN_EXE_dictum"))
        .args(["run", "--json", "--stdin-commands", "--no-hotkey"])
        .env("DICTUM_DATA_DIR", dir.path())
        .env("DICTUM_CONFIG", dir.path().join("config.toml"))
        .env("DICTUM_MODELS_DIR", &no_models)
        .env(
            "DICTUM_LOG",
            "warn,pulseaudio=off,enigo=error,arboard=error",
        )
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start dictum run");
    let mut stdin = child.stdin.take().expect("stdin");
    let stdout = child.stdout.take().expect("stdout");
    let stderr = child.stderr.take().expect("stderr");
    let log = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let log_w = log.clone();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            eprintln!("{line}");
            if let Ok(mut l) = log_w.lock() {
                l.push_str(&line);
                l.push('\n');
            }
        }
    });
    let (tx, rx) = std::sync::mpsc::channel::<Value>();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Ok(v) = serde_json::from_str::<Value>(&line) {
                if tx.send(v).is_err() {
                    break;
                }
            }
        }
    });
    let next = |kind: &str, within: Duration| -> Value {
        let deadline = Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let ev = rx.recv_timeout(left).unwrap_or_else(|e| {
                panic!(
                    "no `{kind}` event within {within:?}: {e}\n{}",
                    log.lock().map(|l| l.clone()).unwrap_or_default()
                )
            });
            if ev["event"] == kind {
                return ev;
            }
        }
    };
    let ready = next("ready", Duration::from_secs(60));
    let note = dictum_engine::pipeline::NO_LOCAL_FALLBACK;
    assert_eq!(ready["stt_note"], note, "{ready}");
    let said = || log.lock().map(|l| l.matches(note).count()).unwrap_or(0);
    let deadline = Instant::now() + Duration::from_secs(5);
    while said() == 0 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(said(), 1, "the log says it once");

    writeln!(stdin, "press").expect("press");
    std::thread::sleep(Duration::from_millis(100));
    common::pulse::play_and_wait("goforward.wav");
    std::thread::sleep(Duration::from_millis(500));
    writeln!(stdin, "release").expect("release");
    let ev = next("dictation", Duration::from_secs(60));
    assert_eq!(ev["outcome"], "error", "{ev}");
    let history = History::open(&dir.path().join("history.sqlite3")).expect("history");
    let row = history
        .get(ev["id"].as_i64().expect("id"))
        .expect("row")
        .expect("row");
    eprintln!(
        "thin client row: error {:?}, audio {:?}",
        row.error, row.audio_path
    );
    assert!(
        row.error.as_deref().unwrap_or_default().contains(note),
        "{row:?}"
    );
    let audio = row
        .audio_path
        .clone()
        .expect("the failed dictation's audio is kept");
    let kept = dictum_engine::audio::read_wav_capped(Path::new(&audio), 60).expect("a WAV");
    assert!(
        kept.samples.len() > 16_000,
        "{audio}: {} samples",
        kept.samples.len()
    );

    let _ = writeln!(stdin, "quit");
    let deadline = Instant::now() + Duration::from_secs(10);
    while Instant::now() < deadline {
        if let Ok(Some(_)) = child.try_wait() {
            return;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    let _ = child.kill();
    let _ = child.wait();
}
