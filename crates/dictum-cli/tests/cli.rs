//! The `dictum` binary as a user runs it: output, exit codes, one-line errors, history rows.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

#[path = "../../dictum-engine/tests/common/mod.rs"]
mod common;
#[path = "support/dictum_cmd.rs"]
mod dictum_cmd;
use common::assets;
use dictum_cmd::Sandbox;

/// A sandbox: its own data dir, config file and models folder.
impl Sandbox {
    fn dictum(&self, args: &[&str]) -> Output {
        self.dictum_models(args, &assets().join("models"))
    }

    fn dictum_models(&self, args: &[&str], models: &Path) -> Output {
        self.dictum_env(args, models, &[])
    }

    fn dictum_env(&self, args: &[&str], models: &Path, env: &[(&str, &str)]) -> Output {
        self.command(args)
            .envs(env.iter().copied())
            .env("DICTUM_MODELS_DIR", models)
            .output()
            .expect("run dictum")
    }

    fn history(&self) -> Vec<Value> {
        let out = self.dictum(&["history", "--json", "--limit", "0"]);
        assert!(out.status.success(), "{}", stderr(&out));
        serde_json::from_slice(&out.stdout).expect("history json")
    }
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// One clear line, no panic, no backtrace.
fn assert_one_clean_error_line(o: &Output, must_contain: &str) {
    assert!(!o.status.success(), "should fail: {}", stdout(o));
    assert_eq!(o.status.code(), Some(1), "exit code");
    let err = stderr(o);
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "exactly one line expected:\n{err}");
    assert!(lines[0].starts_with("dictum: error: "), "{err}");
    assert!(lines[0].contains(must_contain), "{err}");
    assert!(
        !err.contains("panicked") && !err.contains("RUST_BACKTRACE"),
        "{err}"
    );
}

fn clip(name: &str) -> String {
    assets().join("audio/dev").join(name).display().to_string()
}

#[test]
fn transcribe_prints_text_and_json_and_stores_history() {
    let sb = Sandbox::new();
    let out = sb.dictum(&["transcribe", &clip("goforward.wav")]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out).trim().to_lowercase().trim_end_matches('.'),
        "go forward 10 meters"
    );

    let out = sb.dictum(&["transcribe", "--json", &clip("jfk.wav")]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["outcome"], "ok");
    assert!(v["text"]
        .as_str()
        .unwrap_or("")
        .contains("ask not what your country"));
    assert!(!v["raw_text"].as_str().unwrap_or("").is_empty());
    assert_eq!(v["language"], "en");
    assert_eq!(v["device"], "cpu");
    assert_eq!(v["audio_ms"], 11000);
    assert!(v["model"].as_str().unwrap_or("").contains("tiny.en"));
    for stage in ["decode", "resample", "vad", "stt", "total"] {
        assert!(v["timings_ms"][stage].as_f64().is_some(), "{stage} in {v}");
    }
    let id = v["id"].as_i64().expect("id");

    let rows = sb.history();
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0]["id"].as_i64(), Some(id), "newest first");
    assert!(rows[0]["stt_ms"].as_f64().expect("stt ms") > 0.0);
    assert!(rows[0]["created_at"].as_str().expect("time").ends_with('Z'));

    let out = sb.dictum(&["history", "--search", "meters"]);
    assert!(out.status.success());
    let text = stdout(&out);
    assert_eq!(text.lines().count(), 1, "{text}");
    assert!(text.contains("10 meters"), "{text}");
}

#[test]
fn noise_and_silence_print_nothing_and_say_no_speech() {
    let sb = Sandbox::new();
    let silence = sb.path("silence.wav");
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: 16_000,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    let mut w = hound::WavWriter::create(&silence, spec).expect("create");
    for _ in 0..48_000 {
        w.write_sample(0i16).expect("write");
    }
    w.finalize().expect("finalize");
    for file in [clip("alsa-Noise.wav"), silence.display().to_string()] {
        let out = sb.dictum(&["transcribe", "--json", &file]);
        assert!(out.status.success(), "{}", stderr(&out));
        let v: Value = serde_json::from_slice(&out.stdout).expect("json");
        assert_eq!(v["text"], "", "{file}: {v}");
        assert_eq!(v["outcome"], "no_speech", "{file}");
        let out = sb.dictum(&["transcribe", &file]);
        assert!(out.status.success());
        assert_eq!(stdout(&out), "", "nothing typed for {file}");
    }
    let rows = sb.history();
    assert_eq!(rows.len(), 4);
    assert!(rows.iter().all(|r| r["outcome"] == "no_speech"));
}

#[test]
fn missing_model_says_how_to_get_it_and_is_stored() {
    let sb = Sandbox::new();
    let empty = sb.path("no-models");
    std::fs::create_dir_all(&empty).expect("mkdir");
    let out = sb.dictum_models(&["transcribe", &clip("jfk.wav")], &empty);
    assert_one_clean_error_line(&out, "--model");
    assert!(
        stderr(&out).contains("ggml-tiny.en-q8_0.bin"),
        "{}",
        stderr(&out)
    );
    let rows = sb.history();
    assert_eq!(rows[0]["outcome"], "error");
    assert_eq!(rows[0]["error_kind"], "model_not_found");
    assert!(
        rows[0]["decode_ms"].as_f64().is_some(),
        "audio was read before the model"
    );
}

#[test]
fn truncated_and_garbage_models_give_a_clear_error() {
    let sb = Sandbox::new();
    let model = std::fs::read(assets().join("models/ggml-tiny.en-q8_0.bin")).expect("model");
    let cases = [
        ("half.bin", model[..model.len() / 2].to_vec()),
        ("header-only.bin", model[..64].to_vec()),
        ("minus-one-byte.bin", model[..model.len() - 1].to_vec()),
        ("garbage.bin", vec![0x42; 4096]),
        ("empty.bin", Vec::new()),
    ];
    for (name, bytes) in cases {
        let path = sb.path(name);
        std::fs::write(&path, bytes).expect("write");
        let out = sb.dictum(&[
            "transcribe",
            "--model",
            &path.display().to_string(),
            &clip("goforward.wav"),
        ]);
        assert_one_clean_error_line(&out, "damaged");
    }
    let rows = sb.history();
    assert_eq!(rows.len(), 5);
    assert!(
        rows.iter().all(|r| r["error_kind"] == "model_corrupt"),
        "{rows:?}"
    );
}

#[test]
fn unreadable_empty_and_non_wav_audio_are_reported() {
    let sb = Sandbox::new();
    let empty_wav = sb.path("empty.wav");
    let spec = hound::WavSpec {
        channels: 1,
        sample_rate: 16_000,
        bits_per_sample: 16,
        sample_format: hound::SampleFormat::Int,
    };
    hound::WavWriter::create(&empty_wav, spec)
        .expect("create")
        .finalize()
        .expect("finalize");
    let text_file = sb.path("notes.wav");
    std::fs::write(&text_file, "this is not audio").expect("write");
    let zero_bytes = sb.path("zero.wav");
    std::fs::write(&zero_bytes, b"").expect("write");
    let cases = [
        (sb.path("missing.wav"), "cannot read audio file"),
        (empty_wav, "contains no samples"),
        (text_file, "not a supported WAV file"),
        (zero_bytes, "audio file"),
    ];
    for (path, message) in &cases {
        let out = sb.dictum(&["transcribe", &path.display().to_string()]);
        assert_one_clean_error_line(&out, message);
    }
    let rows = sb.history();
    assert_eq!(rows.len(), cases.len());
    assert!(rows
        .iter()
        .all(|r| r["outcome"] == "error" && r["error"].is_string()));
}

/// The crafted files of issue 12 (tests/data/crafted/make.py) answer at once with one line.
fn crafted(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/data/crafted")
        .join(name)
        .display()
        .to_string()
}

#[test]
fn hostile_wav_headers_and_long_files_are_refused_before_decoding() {
    let sb = Sandbox::new();
    let cases = [
        (
            "wav-rate-1hz.wav",
            "its sample rate is 1 Hz; accepted rates are 8000 to 384000 Hz",
        ),
        ("wav-rate-2ghz.wav", "2000000000 Hz"),
        ("wav-size-lie.wav", "truncated or damaged"),
    ];
    for (name, message) in cases {
        let t = std::time::Instant::now();
        let out = sb.dictum(&["transcribe", &crafted(name)]);
        assert_one_clean_error_line(&out, message);
        assert!(stderr(&out).contains("sox"), "{}", stderr(&out));
        assert!(t.elapsed().as_secs() < 10, "{name} took {:?}", t.elapsed());
    }
    // goforward.wav is 2.8 s: over a 2 s cap, the header alone refuses it.
    std::fs::write(sb.path("config.toml"), "[stt]\nmax_file_s = 2\n").expect("write");
    let out = sb.dictum(&["transcribe", &clip("goforward.wav")]);
    assert_one_clean_error_line(&out, "the longest accepted is 2 s (stt.max_file_s)");
    let rows = sb.history();
    assert_eq!(rows.len(), 4);
    assert_eq!(rows[0]["error_kind"], "audio_too_long", "{rows:?}");
    assert!(rows.iter().all(|r| r["outcome"] == "error"), "{rows:?}");
}

#[test]
fn a_model_file_in_the_current_folder_does_not_replace_the_installed_one() {
    let sb = Sandbox::new();
    let cwd = sb.path("cwd");
    std::fs::create_dir_all(&cwd).expect("mkdir");
    // A planted (here: crafted, looping) file named like the catalog entry.
    std::fs::copy(
        crafted("model-seek-loop.bin"),
        cwd.join("ggml-tiny.en-q8_0.bin"),
    )
    .expect("copy");
    let run = |args: &[&str]| {
        Command::new(env!("CARGO_BIN_EXE_dictum"))
            .args(args)
            .current_dir(&cwd)
            .env("DICTUM_DATA_DIR", sb.path("data"))
            .env("DICTUM_CONFIG", sb.path("config.toml"))
            .env("DICTUM_MODELS_DIR", assets().join("models"))
            .env_remove("DICTUM_LOG")
            .output()
            .expect("run dictum")
    };
    for name in ["tiny.en-q8_0", "ggml-tiny.en-q8_0.bin"] {
        let out = run(&["transcribe", "--model", name, &clip("goforward.wav")]);
        assert!(out.status.success(), "{name}: {}", stderr(&out));
        assert!(
            stdout(&out).to_lowercase().contains("forward"),
            "{}",
            stdout(&out)
        );
    }
    // Asked for explicitly, with a path, the local file is used (and refused as damaged).
    let out = run(&[
        "transcribe",
        "--model",
        "./ggml-tiny.en-q8_0.bin",
        &clip("goforward.wav"),
    ]);
    assert_one_clean_error_line(&out, "damaged");
    // Not installed: the error points at the local file instead of loading it.
    let out = Command::new(env!("CARGO_BIN_EXE_dictum"))
        .args([
            "transcribe",
            "--model",
            "tiny.en-q8_0",
            &clip("goforward.wav"),
        ])
        .current_dir(&cwd)
        .env("DICTUM_DATA_DIR", sb.path("data"))
        .env("DICTUM_CONFIG", sb.path("config.toml"))
        .env("DICTUM_MODELS_DIR", sb.path("no-models"))
        .env_remove("DICTUM_LOG")
        .output()
        .expect("run dictum");
    assert_one_clean_error_line(&out, "pass --model ./ggml-tiny.en-q8_0.bin to use it");
}

/// Every folder and file under `root`, with its permission bits.
fn modes_under(root: &Path) -> Vec<(PathBuf, bool, u32)> {
    use std::os::unix::fs::PermissionsExt;
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(p) = stack.pop() {
        let meta = std::fs::symlink_metadata(&p).expect("stat");
        out.push((p.clone(), meta.is_dir(), meta.permissions().mode() & 0o7777));
        if meta.is_dir() {
            for e in std::fs::read_dir(&p).expect("read_dir") {
                stack.push(e.expect("entry").path());
            }
        }
    }
    out
}

#[test]
fn everything_dictum_creates_is_private_under_a_permissive_umask() {
    let sb = Sandbox::new();
    let config = sb.path("cfg/dictum/config.toml");
    // umask 022, as most login sessions have: without Dictum's own care, 0755 and 0644.
    let run = |args: &[&str]| {
        let out = Command::new("sh")
            .arg("-c")
            .arg("umask 022; exec \"$0\" \"$@\"")
            .arg(env!("CARGO_BIN_EXE_dictum"))
            .args(args)
            .env("DICTUM_DATA_DIR", sb.path("data"))
            .env("DICTUM_CONFIG", &config)
            .env("DICTUM_MODELS_DIR", assets().join("models"))
            .env_remove("DICTUM_LOG")
            .output()
            .expect("run dictum");
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
    };
    run(&["models", "default", "tiny.en-q8_0"]);
    let text = std::fs::read_to_string(&config).expect("config saved");
    std::fs::write(
        &config,
        text.replace("keep_audio = false", "keep_audio = true"),
    )
    .expect("write");
    run(&["transcribe", &clip("goforward.wav")]);
    run(&["history", "--json"]);

    let mut seen: Vec<String> = Vec::new();
    for root in [sb.path("data"), sb.path("cfg")] {
        for (path, is_dir, mode) in modes_under(&root) {
            let want = if is_dir { 0o700 } else { 0o600 };
            assert_eq!(mode, want, "{} is {mode:o}", path.display());
            seen.push(
                path.strip_prefix(sb.dir.path())
                    .expect("inside")
                    .display()
                    .to_string(),
            );
        }
    }
    seen.sort();
    for must in [
        "cfg",
        "cfg/dictum",
        "cfg/dictum/config.toml",
        "data",
        "data/audio",
        "data/audio/1.wav",
        "data/history.sqlite3",
    ] {
        assert!(
            seen.iter().any(|s| s == must),
            "{must} not created: {seen:?}"
        );
    }
}

#[test]
fn invalid_config_is_reported_with_position_and_left_alone() {
    let sb = Sandbox::new();
    let bad = "[stt]\nmodel = \"tiny.en-q8_0\"\nthreads = \"four\"\n";
    std::fs::write(sb.path("config.toml"), bad).expect("write");
    let out = sb.dictum(&["transcribe", &clip("goforward.wav")]);
    assert_one_clean_error_line(&out, "config.toml:3:");
    assert_eq!(
        std::fs::read_to_string(sb.path("config.toml")).expect("read"),
        bad
    );

    std::fs::write(sb.path("config.toml"), "[stt]\nthreds = 2\n").expect("write");
    let out = sb.dictum(&["config", "--check"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("unknown key `stt.threds`"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn print_default_is_the_documented_default_config() {
    let sb = Sandbox::new();
    let out = sb.dictum(&["config", "--print-default"]);
    assert!(out.status.success());
    let text = stdout(&out);
    assert!(text.contains("[stt]") && text.contains("# "), "{text}");
    // The printed text is itself a valid config that changes nothing.
    std::fs::write(sb.path("config.toml"), &text).expect("write");
    let out = sb.dictum(&["config", "--check"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stderr(&out), "", "no warnings for the default file");
}

/// A local port nothing listens on: the LLM server is "down".
fn dead_llm_url() -> String {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("free port");
    format!("http://127.0.0.1:{port}")
}

#[test]
fn clean_and_transcribe_clean_fall_back_to_raw_text_when_the_llm_is_down() {
    let sb = Sandbox::new();
    let url = dead_llm_url();
    let out = sb.dictum(&[
        "clean",
        "--json",
        "--llm-backend",
        "openai",
        "--llm-url",
        &url,
        "--llm-model",
        "m",
        "um",
        "hello",
        "world",
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["text"], "um hello world", "raw text kept");
    let llm = &v["llm"];
    for key in [
        "backend",
        "model",
        "outcome",
        "load_ms",
        "prompt_eval_ms",
        "eval_ms",
        "tokens_per_sec",
        "reloaded",
    ] {
        assert!(llm.get(key).is_some(), "llm.{key} missing: {llm}");
    }
    assert_eq!(llm["backend"], "openai");
    assert_eq!(llm["model"], "m");
    assert_eq!(llm["outcome"], "failed");
    assert!(
        llm["error"]
            .as_str()
            .is_some_and(|e| e.contains("cannot reach")),
        "{llm}"
    );

    let out = sb.dictum(&[
        "transcribe",
        &clip("jfk.wav"),
        "--clean",
        "--json",
        "--llm-url",
        &url,
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: Value = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(v["outcome"], "ok");
    assert_eq!(v["llm"]["outcome"], "failed");
    assert_eq!(v["llm"]["backend"], "ollama");
    assert!(v["text"].as_str().is_some_and(|t| t.contains("country")));
    let rows = sb.history();
    assert_eq!(
        rows.len(),
        1,
        "clean stores nothing; transcribe stores its row"
    );
    assert_eq!(rows[0]["llm_outcome"], "failed");
    assert_eq!(rows[0]["text"], v["text"]);

    let out = sb.dictum(&["clean", "--llm-backend", "gpt", "x"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("use ollama or openai"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn models_list_default_delete_and_a_download_that_is_not_the_published_file() {
    let sb = Sandbox::new();
    let out = sb.dictum(&["models", "list", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let all: Vec<Value> = serde_json::from_slice(&out.stdout).expect("json");
    assert_eq!(all.len(), 27);
    let tiny = all
        .iter()
        .find(|m| m["name"] == "tiny.en-q8_0")
        .expect("tiny.en-q8_0");
    assert_eq!(tiny["exact_bytes"], 43_550_795);
    assert_eq!(tiny["sha1"], "802d6668e7d411123e672abe4cb6c18f12306abb");
    assert_eq!(tiny["is_default"], true);
    assert!(all.iter().all(|m| m["installed"] == false));

    // The test asset is a locally converted file under the public name: refused, not installed.
    let assets_models = assets().join("models");
    let out = sb.dictum(&[
        "models",
        "download",
        "tiny.en-q8_0",
        "--base-url",
        &assets_models.display().to_string(),
    ]);
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("is 43550778 bytes, expected 43550795"),
        "{err}"
    );
    assert!(!sb.path("data/models/ggml-tiny.en-q8_0.bin").exists());
    assert!(!sb.path("data/models/ggml-tiny.en-q8_0.bin.part").exists());

    let out = sb.dictum(&["models", "default", "ggml-base-q8_0.bin"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let config = std::fs::read_to_string(sb.path("config.toml")).expect("config written");
    assert!(config.contains("model = \"base-q8_0\""), "{config}");
    let out = sb.dictum(&["models", "delete", "base-q8_0"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("is the default model"),
        "{}",
        stderr(&out)
    );

    std::fs::create_dir_all(sb.path("data/models")).expect("mkdir");
    std::fs::write(sb.path("data/models/ggml-small.bin"), b"x").expect("write");
    let out = sb.dictum(&["models"]);
    let table = String::from_utf8_lossy(&out.stdout).into_owned();
    let row = |name: &str| {
        table
            .lines()
            .find(|l| l.starts_with(&format!("{name} ")))
            .unwrap_or_else(|| panic!("{name} in {table}"))
            .to_string()
    };
    assert!(row("small").contains("yes"), "{table}");
    assert!(row("base-q8_0").contains("default"), "{table}");
    let out = sb.dictum(&["models", "delete", "small"]);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!sb.path("data/models/ggml-small.bin").exists());
    let out = sb.dictum(&["models", "download", "huge"]);
    assert!(
        stderr(&out).contains("dictum models list"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_speech_worker_that_aborts_costs_a_cpu_redo_not_the_dictation() {
    // On the GPU whisper runs in a worker process because ggml aborts the process when VRAM
    // runs out (seen on an H100). The same worker runs on the CPU here (DICTUM_STT_ISOLATE) and
    // aborts on cue (DICTUM_STT_WORKER_ABORT_AT): request 1 is the warm-up, 2 the utterance,
    // 0 while loading.
    let sb = Sandbox::new();
    let models = assets().join("models");
    let jfk = clip("jfk.wav");
    let run = |abort_at: Option<&str>| {
        // Not a test of the stall deadline (fault_matrix.rs has that): a loaded machine must
        // not turn a slow answer into a CPU redo here.
        let mut env = vec![
            ("DICTUM_STT_ISOLATE", "1"),
            ("DICTUM_STT_WORKER_TIMEOUT_MS", "300000"),
        ];
        if let Some(n) = abort_at {
            env.push(("DICTUM_STT_WORKER_ABORT_AT", n));
        }
        let out = sb.dictum_env(&["transcribe", "--json", &jfk], &models, &env);
        assert!(out.status.success(), "{}", stderr(&out));
        let v: Value = serde_json::from_slice(&out.stdout).expect("json");
        let text = v["text"].as_str().unwrap_or("").to_lowercase();
        assert!(text.contains("ask not what your country"), "{v}");
        (v["device"].as_str().unwrap_or("").to_string(), stderr(&out))
    };
    let (device, _) = run(None);
    assert_eq!(device, "cpu-worker", "the worker transcribed");
    let (device, err) = run(Some("2"));
    assert_eq!(device, "cpu", "redone in this process");
    assert!(
        err.contains("SIGABRT") || err.contains("signal: 6"),
        "{err}"
    );
    let (device, err) = run(Some("0"));
    assert_eq!(device, "cpu", "loaded in this process");
    assert!(err.contains("loading it on the CPU"), "{err}");
    let rows = sb.history();
    assert_eq!(rows.len(), 3);
    let redone = rows
        .iter()
        .find(|r| r["error_kind"] == "gpu_fallback")
        .unwrap_or_else(|| panic!("no gpu_fallback row in {rows:#?}"));
    assert!(
        redone["error"]
            .as_str()
            .unwrap_or("")
            .contains("the speech worker stopped"),
        "{redone}"
    );
}

#[test]
fn ctl_without_a_running_dictum_says_so() {
    let sb = Sandbox::new();
    let out = sb.dictum(&["ctl", "toggle"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("no Dictum is running"),
        "{}",
        stderr(&out)
    );
    let out = sb.dictum(&["ctl", "tgogle"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("unknown command `tgogle`"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn bench_llm_guard_table_reports_precision_recall_and_time_without_a_server() {
    let sb = Sandbox::new();
    let report = sb.path("guard.md");
    let out = sb.dictum(&[
        "bench",
        "llm",
        "--guard-table",
        "--runs",
        "1",
        "--out",
        report.to_str().expect("utf-8 path"),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = std::fs::read_to_string(&report).expect("report written");
    assert_eq!(text, stdout(&out));
    for needle in [
        "| category | rows | precision | recall |",
        "| negation |",
        "| shell_chars/terminal |",
        "| **all** |",
        "Guard time per call: median",
        "Every row gets its expected verdict.",
    ] {
        assert!(text.contains(needle), "{needle:?} missing from:\n{text}");
    }
    // Another table of the same format, with a row the guard gets wrong on purpose.
    let table = sb.path("cases.tsv");
    std::fs::write(
        &table,
        "we should not ship\tWe should ship.\taccept\tnegation\tother\n",
    )
    .expect("write table");
    let out = sb.dictum(&[
        "bench",
        "llm",
        "--guard-table",
        "--runs",
        "1",
        "--sentences",
        table.to_str().expect("utf-8 path"),
    ]);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("| negation | 1 | 1.000 | 0.000 | 0 | 1 |"),
        "{text}"
    );
    assert!(
        text.contains("negation: "),
        "the miss names its reason: {text}"
    );
}
