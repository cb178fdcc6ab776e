//! `dictum doctor`: what this machine has, what Dictum will do with it, and for every problem
//! the fix. Exit 0 when nothing is broken (warnings allowed).

use dictum_engine::config::Config;
use dictum_engine::gpu::{GpuProbe, GpuStatus, NvmlProbe};
use dictum_engine::inject::session::{hotkey_path, HotkeyPath, SessionKind};
use dictum_engine::inject::Injector;
use dictum_engine::pipeline::Engine;
use dictum_engine::store::{History, Query};
use dictum_engine::stt::check_model_file;
use dictum_engine::{models, paths};
use serde::Serialize;
use serde_json::json;
use sha2::{Digest, Sha256};
use std::io::Read;
use std::path::Path;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// Print one JSON object.
    #[arg(long)]
    json: bool,
    #[command(flatten)]
    stt: crate::stt_args::SttArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
enum Status {
    Ok,
    Info,
    Warn,
    Fail,
}

#[derive(Debug, Serialize)]
struct Check {
    name: &'static str,
    status: Status,
    detail: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    fix: Option<String>,
}

fn check(
    name: &'static str,
    status: Status,
    detail: impl Into<String>,
    fix: Option<String>,
) -> Check {
    Check {
        name,
        status,
        detail: detail.into(),
        fix,
    }
}

fn sha256_file(path: &Path) -> std::io::Result<String> {
    let mut file = std::fs::File::open(path)?;
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hasher.update(&buf[..n]);
    }
    Ok(hex::encode(hasher.finalize()))
}

pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    let mut checks = Vec::new();
    checks.push(check(
        "build",
        Status::Info,
        format!(
            "dictum {} ({} build, CUDA {}, Vulkan {})",
            env!("CARGO_PKG_VERSION"),
            if cfg!(debug_assertions) {
                "debug"
            } else {
                "release"
            },
            if cfg!(feature = "cuda") {
                "compiled in"
            } else {
                "not compiled in"
            },
            if cfg!(feature = "vulkan") {
                "compiled in"
            } else {
                "not compiled in"
            }
        ),
        None,
    ));

    // Config.
    let config = match Config::load() {
        Ok(loaded) => {
            let where_ = loaded
                .path
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_else(|| "none (defaults in use)".into());
            if loaded.warnings.is_empty() {
                checks.push(check(
                    "config",
                    Status::Ok,
                    format!("config file: {where_}"),
                    None,
                ));
            } else {
                checks.push(check(
                    "config",
                    Status::Warn,
                    loaded.warnings.join("; "),
                    Some("remove or correct the unknown keys (`dictum config --print-default` lists every key)".into()),
                ));
            }
            loaded.config
        }
        Err(e) => {
            checks.push(check(
                "config",
                Status::Fail,
                e.to_string(),
                Some("fix the file at the position shown".into()),
            ));
            Config::default()
        }
    };

    let mut config = config;
    if let Err(e) = args.stt.apply(&mut config) {
        checks.push(check(
            "stt server",
            Status::Fail,
            e.to_string(),
            Some("fix the --stt-* flags".into()),
        ));
    }
    let remote = config.stt.backend == dictum_engine::config::SttBackend::Openai;
    if remote {
        checks.push(server_check(&config));
    }

    // Model.
    let model_dirs = paths::model_dirs()?;
    let mut model_bytes = None;
    match models::resolve(&config.stt.model, &model_dirs) {
        Ok(path) => match check_model_file(&path) {
            Ok(info) => {
                model_bytes = Some(info.file_bytes);
                let sha = sha256_file(&path).unwrap_or_else(|e| format!("unreadable: {e}"));
                let file_name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
                let published = match models::find(file_name) {
                    Some(m) if m.published.sha256 == sha => ", the published file",
                    Some(_) => {
                        ", not the published file of that name (a local conversion, or damaged)"
                    }
                    None => "",
                };
                checks.push(check(
                    "model",
                    Status::Ok,
                    format!(
                        "{} ({} {}, {} MiB, {} tensors, sha256 {sha}{published})",
                        path.display(),
                        info.size_name(),
                        if info.is_english_only() {
                            "English-only"
                        } else {
                            "multilingual"
                        },
                        info.file_bytes / (1024 * 1024),
                        info.tensors
                    ),
                    None,
                ));
            }
            Err(e) => checks.push(check(
                "model",
                Status::Fail,
                e.to_string(),
                Some("download the model again".into()),
            )),
        },
        Err(e) if remote => checks.push(check(
            "model",
            Status::Warn,
            format!("{e} (the local fallback: without it a dictation fails while the speech server is down)"),
            Some("install the model as the message says, or set stt.model".into()),
        )),
        Err(e) => checks.push(check(
            "model",
            Status::Fail,
            e.to_string(),
            Some("install the model as the message says, or set stt.model".into()),
        )),
    }
    let installed: Vec<String> = model_dirs
        .iter()
        .filter_map(|d| std::fs::read_dir(d).ok())
        .flatten()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".bin"))
        .collect();
    checks.push(check(
        "models installed",
        Status::Info,
        if installed.is_empty() {
            "none".to_string()
        } else {
            installed.join(", ")
        },
        None,
    ));

    // LLM: reachable, resident, context as configured, fast enough.
    let mut llm_resident_bytes = 0;
    if config.llm.enabled {
        let llm = &config.llm;
        let mut engine = Engine::new(config.clone(), vec![]);
        match engine.enable_llm() {
            Ok(Some(warm)) if warm.ok => {
                checks.push(check(
                    "llm",
                    Status::Ok,
                    format!(
                        "{:?} backend at {} with {}: warm-up {:.0} ms (load {:.0} ms)",
                        llm.backend,
                        llm.url,
                        llm.model,
                        warm.total_ms,
                        warm.load_ms.unwrap_or(0.0)
                    ),
                    None,
                ));
                if let Some(r) = &warm.residency {
                    llm_resident_bytes = r.size_vram.unwrap_or(0);
                    let ctx_ok = r.context_length.is_none_or(|c| c == u64::from(llm.num_ctx));
                    checks.push(check(
                        "llm resident",
                        if ctx_ok { Status::Ok } else { Status::Warn },
                        format!(
                            "{}: {} MiB in VRAM, loaded context {} (config num_ctx {})",
                            r.model,
                            r.size_vram.unwrap_or(0) / (1024 * 1024),
                            r.context_length.map_or("unknown".into(), |c| c.to_string()),
                            llm.num_ctx
                        ),
                        (!ctx_ok).then(|| {
                            "another program loaded the model with a different num_ctx; every switch reloads it (~2-3 s): use the same num_ctx everywhere".to_string()
                        }),
                    ));
                }
                if let Some(report) = engine.clean_text("um this is a quick speed test of the cleanup") {
                    match report.tokens_per_sec {
                        Some(tps) if tps < 20.0 => checks.push(check(
                            "llm speed",
                            Status::Warn,
                            format!("{tps:.1} tokens/s"),
                            Some("the LLM is probably running on the CPU: check `ollama ps`, VRAM (`dictum doctor` gpu line) or use a smaller model".into()),
                        )),
                        Some(tps) => checks.push(check("llm speed", Status::Ok, format!("{tps:.1} tokens/s"), None)),
                        None => checks.push(check(
                            "llm speed",
                            Status::Info,
                            format!("no token timing in the answer ({:?})", report.outcome),
                            None,
                        )),
                    }
                }
            }
            Ok(Some(warm)) => checks.push(check(
                "llm",
                Status::Warn,
                warm.warnings.join("; "),
                Some(format!(
                    "start the server or fix [llm] url/model ({}); until then dictations keep the raw transcript",
                    llm.url
                )),
            )),
            Ok(None) => {}
            Err(e) => checks.push(check("llm", Status::Fail, e.to_string(), Some("fix the [llm] section".into()))),
        }
    } else {
        checks.push(check(
            "llm",
            Status::Info,
            "LLM cleanup is off ([llm] enabled = false)",
            None,
        ));
    }

    // GPU and plan.
    let status = NvmlProbe.probe();
    // Where speech will run, as the engine plans it (NVML in a CUDA build, the Vulkan devices
    // in a Vulkan build, the CPU otherwise).
    let plan = dictum_engine::gpu::speech_plan::plan(
        config.stt.use_gpu,
        &config.stt.model,
        model_bytes.unwrap_or(0),
        llm_resident_bytes,
    );
    match &status {
        GpuStatus::NoGpu { reason } => checks.push(check("gpu", Status::Info, reason.clone(), None)),
        GpuStatus::Gpus { gpus } => {
            for g in gpus {
                checks.push(check("gpu", Status::Ok, g.describe(), None));
            }
        }
        GpuStatus::Error { message } => checks.push(check(
            "gpu",
            Status::Warn,
            message.clone(),
            Some("check `nvidia-smi`; a driver/library version mismatch needs a reboot after a driver update".into()),
        )),
    }
    checks.push(check(
        "plan",
        Status::Ok,
        format!(
            "speech on {} with {}: {}",
            plan.device, plan.model, plan.reason
        ),
        None,
    ));

    // Vulkan devices (the loader is opened at run time) and the device a Vulkan build would use.
    let vulkan = dictum_engine::gpu::vulkan::probe();
    let vulkan_plan = dictum_engine::gpu::vulkan_planner::plan(
        &dictum_engine::gpu::vulkan_planner::VulkanPlanSettings::from_env(config.stt.use_gpu),
        &vulkan,
        model_bytes.unwrap_or(0),
    );
    match &vulkan {
        dictum_engine::gpu::vulkan::VulkanStatus::NoVulkan { reason } => {
            checks.push(check("vulkan", Status::Info, reason.clone(), None))
        }
        dictum_engine::gpu::vulkan::VulkanStatus::Devices { devices } => {
            for d in devices {
                checks.push(check("vulkan", Status::Info, d.describe(), None));
            }
        }
    }
    checks.push(check(
        "vulkan plan",
        Status::Info,
        format!("{}: {}", vulkan_plan.device, vulkan_plan.reason),
        None,
    ));

    // History.
    match paths::history_db().and_then(|p| History::open(&p)) {
        Ok(h) => {
            let n = h.list(&Query::default()).map(|v| v.len()).unwrap_or(0);
            checks.push(check(
                "history",
                Status::Ok,
                format!(
                    "{} (schema v{}, {n} entries)",
                    h.path().display(),
                    h.schema_version().unwrap_or(0)
                ),
                None,
            ));
        }
        Err(e) => checks.push(check(
            "history",
            Status::Fail,
            e.to_string(),
            Some("make the data dir writable or set DICTUM_DATA_DIR".into()),
        )),
    }

    // Session, typing path and hotkey path, as the daemon would choose them.
    checks.extend(session_checks(&config));
    let inputs = dictum_engine::audio::Capture::input_devices();
    checks.push(if inputs.is_empty() {
        check(
            "audio input",
            Status::Warn,
            "no audio input device found",
            Some("plug in a microphone, or check that PulseAudio/PipeWire is running (`pactl list short sources`)".into()),
        )
    } else {
        check("audio input", Status::Info, format!("inputs cpal sees: {}", inputs.join(", ")), None)
    });
    checks.push(microphone_check(&config.dictation));
    let caret_text = dictum_engine::context::atspi::probe();
    checks.push(text_around_cursor_check(&caret_text));
    let broken = checks.iter().any(|c| c.status == Status::Fail);
    if args.json {
        println!(
            "{}",
            serde_json::to_string_pretty(&json!({
                "ok": !broken,
                "checks": checks,
                "gpu": status,
                "plan": plan,
                "vulkan": vulkan,
                "vulkan_plan": vulkan_plan,
                "text_around_cursor": caret_text,
            }))?
        );
    } else {
        for c in &checks {
            let tag = match c.status {
                Status::Ok => "ok  ",
                Status::Info => "info",
                Status::Warn => "warn",
                Status::Fail => "FAIL",
            };
            println!("[{tag}] {:<16} {}", c.name, c.detail);
            if let Some(fix) = &c.fix {
                println!("       {:<16} fix: {fix}", "");
            }
        }
    }
    Ok(if broken {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    })
}

/// The speech server (`stt.backend = "openai"`): the built-in clip's round trip and text.
/// `[dictation] microphone` and, from the audio server, whether a Dictum process holds a
/// capture stream now (`pactl list source-outputs`: cpal names its client
/// `cpal-pulseaudio-<pid>`).
fn microphone_check(d: &dictum_engine::config::dictation::DictationConfig) -> Check {
    use dictum_engine::audio::mic_policy::bluetooth_tradeoff;
    use dictum_engine::config::dictation::MicrophoneMode;
    use dictum_engine::dictation::microphone::mic_mode;
    let rule = match d.microphone {
        MicrophoneMode::Always => {
            "open from start to quit (a pre-roll before every press; the desktop shows the \
             microphone in use all along, a Bluetooth headset stays in its call profile)"
                .to_string()
        }
        MicrophoneMode::OnDemand => "open only while dictating (no pre-roll: the press opens it \
             and the recording starts with its first buffer)"
            .to_string(),
        MicrophoneMode::Auto => format!(
            "open while dictating and {} s after the last dictation, for the next one's \
             pre-roll; a Bluetooth microphone is closed right after each dictation, so the \
             headset goes back to music quality (the press then opens it: no pre-roll)",
            d.microphone_keep_s
        ),
    };
    let now = match dictum_streams() {
        Ok(pids) if pids.is_empty() => {
            "now closed: no Dictum capture stream at the audio server".to_string()
        }
        Ok(pids) => format!(
            "now open: Dictum (process {}) records",
            pids.iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", ")
        ),
        Err(why) => format!("whether it is open now is unknown ({why})"),
    };
    // The input the stream opens, and what a Bluetooth headset's costs (issue 42).
    let (status, input, fix) = match dictum_engine::audio::capture::dictation_input(&d.input_device)
    {
        Ok(i) if i.bluetooth => {
            let (name, description) = (i.name, i.description);
            let always = matches!(d.microphone, MicrophoneMode::Always);
            (
                if always { Status::Warn } else { Status::Info },
                format!(
                    "; input {name}: {}",
                    bluetooth_tradeoff(mic_mode(d), &description)
                ),
                always.then(|| {
                    "set [dictation] microphone = \"auto\" (Settings → Microphone) to give the \
                     headset its music quality back between dictations"
                        .to_string()
                }),
            )
        }
        Ok(i) if i.name == i.description => (Status::Info, format!("; input {}", i.name), None),
        Ok(i) => (
            Status::Info,
            format!("; input {} ({})", i.name, i.description),
            None,
        ),
        Err(why) => (
            Status::Info,
            format!("; which input is the default is unknown ({why})"),
            None,
        ),
    };
    check(
        "microphone",
        status,
        format!(
            "microphone = \"{}\": {rule}; {now}{input}",
            d.microphone.as_str()
        ),
        fix,
    )
}

/// Whether the text around the cursor can be read through accessibility (AT-SPI, issue 41):
/// the accessibility bus, and whether toolkits are asked to expose their text.
fn text_around_cursor_check(p: &dictum_engine::context::atspi::Probe) -> Check {
    if !p.bus {
        return check(
            "text at cursor",
            Status::Info,
            format!(
                "not readable: {}",
                p.error.as_deref().unwrap_or("no accessibility bus")
            ),
            Some("install at-spi2-core and log in again; until then dictations are typed as transcribed".into()),
        );
    }
    let apps = p.apps.unwrap_or(0);
    if p.toolkit_accessibility == Some(true) {
        return check(
            "text at cursor",
            Status::Ok,
            format!(
                "accessibility bus reachable ({apps} apps registered), toolkit accessibility on: GTK, Qt and Chromium/Electron apps expose the text around the cursor"
            ),
            None,
        );
    }
    check(
        "text at cursor",
        Status::Info,
        format!(
            "accessibility bus reachable ({apps} apps registered): GTK apps expose the text around the cursor; Qt and Chromium/Electron apps only with accessibility switched on"
        ),
        Some(
            "for Qt and Chromium/Electron apps: set `[context] switch_on_accessibility = true` (or `busctl --user set-property org.a11y.Bus /org/a11y/bus org.a11y.Status IsEnabled b true`; GNOME: `gsettings set org.gnome.desktop.interface toolkit-accessibility true`), then restart those apps; Chromium/Electron may also need --force-renderer-accessibility".into(),
        ),
    )
}

/// The Dictum processes that hold a capture stream, as the PulseAudio/PipeWire server says.
fn dictum_streams() -> Result<Vec<u32>, String> {
    let out = std::process::Command::new("pactl")
        .args(["list", "source-outputs"])
        .output()
        .map_err(|e| format!("pactl: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "pactl: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let mut pids: Vec<u32> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|l| l.split("cpal-pulseaudio-").nth(1))
        .filter_map(|rest| {
            rest.chars()
                .take_while(char::is_ascii_digit)
                .collect::<String>()
                .parse()
                .ok()
        })
        .filter(|pid: &u32| {
            std::fs::read_to_string(format!("/proc/{pid}/comm"))
                .is_ok_and(|c| c.trim_start().starts_with("dictum"))
        })
        .collect();
    pids.sort_unstable();
    pids.dedup();
    Ok(pids)
}

fn server_check(config: &Config) -> Check {
    let c = dictum_engine::stt::remote::check_server(&config.stt);
    if !c.ok {
        return check(
            "stt server",
            Status::Fail,
            c.detail,
            Some(format!(
                "start the server or fix [stt] url/remote_model/api_key_env ({}); until then dictations are transcribed locally{}",
                config.stt.url,
                if config.stt.fallback { "" } else { " — no: stt.fallback is off, so they fail" }
            )),
        );
    }
    let mut detail = c.detail;
    if !c.models.is_empty() {
        detail.push_str(&format!("; models served: {}", c.models.join(", ")));
    }
    check("stt server", Status::Ok, detail, None)
}

/// The session, the typing path and the hotkey path this session gets, each with the one
/// command or setting that fixes what is missing.
fn session_checks(config: &Config) -> Vec<Check> {
    let mut checks = Vec::new();
    let mut injector = match Injector::new(&config.inject) {
        Ok(i) => i,
        Err(e) => {
            checks.push(check(
                "typing",
                Status::Fail,
                e.to_string(),
                Some("fix the [inject] section (`dictum config --check`)".into()),
            ));
            return checks;
        }
    };
    let session = injector.session().clone();
    let ab = *injector.abilities();
    let found: Vec<&str> = [
        (ab.x11, "X display"),
        (ab.virtual_keyboard, "virtual-keyboard protocol"),
        (ab.data_control, "data-control clipboard"),
        (ab.remote_desktop, "RemoteDesktop portal"),
        (ab.global_shortcuts, "GlobalShortcuts portal"),
        (ab.wtype, "wtype"),
        (ab.uinput, "/dev/uinput"),
        (ab.ydotool, "ydotool"),
        (ab.wl_clipboard, "wl-clipboard"),
    ]
    .into_iter()
    .filter_map(|(has, name)| has.then_some(name))
    .collect();
    checks.push(check(
        "session",
        Status::Info,
        format!(
            "{}; found: {}",
            session.describe(),
            if found.is_empty() {
                "nothing to type with".to_string()
            } else {
                found.join(", ")
            }
        ),
        None,
    ));
    if session.kind == SessionKind::None {
        checks.push(check(
            "typing",
            Status::Info,
            "no display server (headless): live dictation needs one; file transcription works",
            None,
        ));
        checks.push(check(
            "hotkey",
            Status::Info,
            "no display server: no hotkey; `dictum ctl` drives `dictum run --no-hotkey`",
            None,
        ));
        return checks;
    }
    let method = config.inject.method.as_str();
    let (window, _) = injector.focused();
    checks.push(match injector.check() {
        Ok(route) => {
            let xwayland = (session.kind == SessionKind::Wayland && session.x_display)
                .then(|| {
                    injector
                        .route(dictum_engine::inject::Focus::XWayland)
                        .ok()
                        .filter(|r| r.typing != route.typing)
                        .map(|r| {
                            format!(
                                "; XWayland windows that the compositor names: {}",
                                r.describe()
                            )
                        })
                })
                .flatten()
                .unwrap_or_default();
            check(
                "typing",
                Status::Ok,
                format!(
                    "{method} through {}{xwayland}; focused window now: {}",
                    route.describe(),
                    window.describe()
                ),
                None,
            )
        }
        // A warning, like an unreachable LLM: transcription works, and each dictation is
        // kept in history and on the clipboard.
        Err(e) => check(
            "typing",
            Status::Warn,
            format!("{method}: {e}"),
            Some(match session.kind {
                SessionKind::X11 => {
                    "run Dictum inside your X session, or set DISPLAY to it (e.g. :0)".into()
                }
                _ => {
                    "see the fix above; `dictum history` and the tray menu keep the last dictation"
                        .into()
                }
            }),
        ),
    });
    // The gate's verdict on the focused window (`inject/gate.rs`): fail closed.
    if let Ok(profiles) = dictum_engine::profile::Profiles::compile(&config.profiles) {
        injector.set_profiles(profiles);
    }
    let (focused, verdict) = injector.verdict();
    let desktop_blind = focused.pid.is_none();
    checks.push(check(
        "terminal",
        if verdict.terminal && desktop_blind {
            Status::Info
        } else {
            Status::Ok
        },
        format!(
            "focused window {}: {} ({})",
            focused.describe(),
            if verdict.terminal {
                "treated as a terminal: key commands act only said alone, snippet line \
                 breaks are spaces, hands-free keys are off"
            } else {
                "not a terminal"
            },
            verdict.reason
        ),
        desktop_blind.then(|| {
            "this desktop does not tell which process owns the focused window, so every \
             window counts as a terminal (sway, Hyprland, KDE and X11 sessions tell it). For an app you trust that is no terminal, add a \
             [[profile]] with match_class and terminal = false"
                .to_string()
        }),
    ));
    let hotkey = &config.dictation.hotkey;
    checks.push(match dictum_engine::hotkey::parse_binding(hotkey) {
        Err(e) => check(
            "hotkey",
            Status::Fail,
            e,
            Some("set [dictation] hotkey to a combination like \"ctrl+alt+space\"".into()),
        ),
        // A mouse button is grabbed on X11 only.
        Ok(dictum_engine::hotkey::Binding::Button(_))
            if !matches!(hotkey_path(&session, &ab), HotkeyPath::X11Grab) =>
        {
            check(
                "hotkey",
                Status::Warn,
                format!(
                    "{hotkey} cannot be grabbed in {}; {}",
                    session.describe(),
                    dictum_engine::hotkey::MOUSE_ON_WAYLAND
                ),
                Some("set [dictation] hotkey to a key, and bind the mouse button in your compositor".into()),
            )
        }
        Ok(_) => match hotkey_path(&session, &ab) {
            // Grabbed and let go again, so a daemon that is already running and holds it
            // shows up as "taken".
            HotkeyPath::X11Grab => match dictum_engine::hotkey::check_registrable(hotkey) {
                Ok(()) => check(
                    "hotkey",
                    Status::Ok,
                    format!("X11 grab: {hotkey} can be registered ({:?} mode)", config.dictation.mode),
                    None,
                ),
                Err(e) => check(
                    "hotkey",
                    Status::Warn,
                    e,
                    Some("pick another [dictation] hotkey, or stop the program holding it (a running `dictum run` holds it too)".into()),
                ),
            },
            HotkeyPath::Portal => check(
                "hotkey",
                Status::Ok,
                format!("GlobalShortcuts portal: {hotkey} as push-to-talk; your desktop asks once to confirm it"),
                None,
            ),
            HotkeyPath::Compositor { release } => {
                let installed = binding_installed(&session.desktop);
                check(
                    "hotkey",
                    if installed { Status::Ok } else { Status::Warn },
                    format!(
                        "{} has no GlobalShortcuts portal: a compositor shortcut runs `dictum ctl` ({}){}",
                        session.describe(),
                        if release { "push-to-talk" } else { "toggle: no key release on this desktop" },
                        if installed { "; Dictum's binding is installed" } else { "" }
                    ),
                    (!installed).then(|| "dictum shortcut install".to_string()),
                )
            }
            HotkeyPath::None { reason } => check("hotkey", Status::Info, reason, None),
        },
    });
    checks
}

/// Whether `dictum shortcut install` has written Dictum's binding for this compositor.
fn binding_installed(desktop: &dictum_engine::inject::session::Desktop) -> bool {
    use dictum_engine::inject::session::Desktop;
    let config = std::env::var_os("XDG_CONFIG_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".config")));
    let Some(config) = config else {
        return false;
    };
    let file = match desktop {
        Desktop::Sway => config.join("sway/config.d/dictum.conf"),
        Desktop::Hyprland => config.join("hypr/dictum.conf"),
        _ => return false,
    };
    std::fs::read_to_string(file).is_ok_and(|t| t.contains("ctl press"))
}
