//! Where a 2-core whisper pass goes (issue 13): encoder vs decoder, window size, timestamps,
//! flash attention; corpus WER of each configuration on the dev clips.
//!
//!     cargo run --release -p dictum-engine --example pass_cost -- MODEL ASSETS/audio/dev [RUNS]
use dictum_engine::eval::WerCount;
use std::time::Instant;
use whisper_rs::{WhisperContext, WhisperContextParameters};

#[path = "support/greedy.rs"]
mod greedy;
use greedy::greedy;

struct Cfg {
    name: &'static str,
    /// Encoder frames: None = full; Some((margin, min)).
    window: Option<(i32, i32)>,
    timestamps: bool,
    enc_only: bool,
}

fn cpu_ms() -> f64 {
    let mut u = std::mem::MaybeUninit::<libc::rusage>::zeroed();
    // SAFETY: getrusage fills the struct it is given.
    let u = unsafe {
        libc::getrusage(libc::RUSAGE_SELF, u.as_mut_ptr());
        u.assume_init()
    };
    let tv = |t: libc::timeval| t.tv_sec as f64 * 1000.0 + t.tv_usec as f64 / 1000.0;
    tv(u.ru_utime) + tv(u.ru_stime)
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [model, dir, rest @ ..] = &args[..] else {
        return Err("usage: pass_cost MODEL DEV_DIR [RUNS] [FLASH(0/1/both)]".into());
    };
    let runs: usize = rest.first().and_then(|r| r.parse().ok()).unwrap_or(2);
    let flashes: Vec<bool> = match rest.get(1).map(String::as_str) {
        Some("1") => vec![true],
        Some("0") => vec![false],
        _ => vec![false, true],
    };
    let refs = std::fs::read_to_string(format!("{dir}/refs.tsv"))?;
    let clips: Vec<(String, String, Vec<f32>)> = refs
        .lines()
        .filter_map(|l| l.split_once('\t'))
        .filter(|(_, r)| !r.trim().is_empty())
        .map(|(f, r)| {
            let pcm =
                dictum_engine::audio::decode_16k(std::path::Path::new(&format!("{dir}/{f}")), 60)
                    .map(|d| d.samples)
                    .unwrap_or_default();
            (f.to_string(), r.to_string(), pcm)
        })
        .collect();
    whisper_rs::install_logging_hooks();
    let only: Option<String> = rest.get(2).cloned();
    let all = [
        Cfg {
            name: "full 1500, timestamps",
            window: None,
            timestamps: true,
            enc_only: false,
        },
        Cfg {
            name: "full 1500, encoder+1 token",
            window: None,
            timestamps: false,
            enc_only: true,
        },
        Cfg {
            name: "sized m64 min768, no ts (today)",
            window: Some((64, 768)),
            timestamps: false,
            enc_only: false,
        },
        Cfg {
            name: "sized m64 min768, encoder+1 token",
            window: Some((64, 768)),
            timestamps: false,
            enc_only: true,
        },
        Cfg {
            name: "sized m64 min768, timestamps",
            window: Some((64, 768)),
            timestamps: true,
            enc_only: false,
        },
        Cfg {
            name: "sized m64 min384, timestamps",
            window: Some((64, 384)),
            timestamps: true,
            enc_only: false,
        },
        Cfg {
            name: "sized m64 min384, encoder+1 token",
            window: Some((64, 384)),
            timestamps: false,
            enc_only: true,
        },
        Cfg {
            name: "sized m64 min256, timestamps",
            window: Some((64, 256)),
            timestamps: true,
            enc_only: false,
        },
        Cfg {
            name: "sized m64 min256, encoder+1 token",
            window: Some((64, 256)),
            timestamps: false,
            enc_only: true,
        },
        Cfg {
            name: "sized m128 min256, timestamps",
            window: Some((128, 256)),
            timestamps: true,
            enc_only: false,
        },
    ];
    let cfgs: Vec<&Cfg> = all
        .iter()
        .filter(|c| only.as_deref().is_none_or(|o| c.name.contains(o)))
        .collect();
    for &flash in &flashes {
        let mut cp = WhisperContextParameters::default();
        cp.flash_attn(flash);
        let ctx = WhisperContext::new_with_params(model, cp)?;
        let mut state = ctx.create_state()?;
        for cfg in cfgs.iter().copied() {
            let mut total = 0.0;
            let mut wer = WerCount::default();
            let mut cells = Vec::new();
            for (name, reference, pcm) in &clips {
                let secs = pcm.len() as f64 / 16000.0;
                let ctxf = cfg.window.map_or(0, |(m, min)| {
                    let f = ((secs * 50.0).ceil() as i32 + m).max(min);
                    if f >= 1500 {
                        0
                    } else {
                        f
                    }
                });
                let mut best = f64::MAX;
                let mut text = String::new();
                for _ in 0..runs {
                    let mut p = greedy(2, ctxf);
                    if !cfg.timestamps {
                        p.set_single_segment(true);
                        p.set_no_timestamps(true);
                        p.set_temperature_inc(0.0);
                    }
                    p.set_max_tokens(if cfg.enc_only {
                        1
                    } else {
                        (24.0 + secs * 10.0).ceil() as i32
                    });
                    // CPU time of the process (user + system): the machine is shared, wall
                    // time is not comparable between configurations.
                    let c0 = cpu_ms();
                    let t = Instant::now();
                    state.full(p, pcm)?;
                    let _wall = t.elapsed();
                    best = best.min(cpu_ms() - c0);
                    text = state
                        .as_iter()
                        .map(|s| s.to_str_lossy().map(|c| c.into_owned()).unwrap_or_default())
                        .collect();
                }
                total += best;
                if !cfg.enc_only {
                    wer = wer.plus(WerCount::of(reference, &text));
                }
                cells.push(format!(
                    "{name}={best:.0}ms{}",
                    if cfg.enc_only {
                        String::new()
                    } else {
                        format!(" [{}]", text.trim())
                    }
                ));
            }
            println!(
                "flash={flash} | {} | total {total:.0} ms | WER {:.1}% ({}/{})",
                cfg.name,
                wer.rate() * 100.0,
                wer.errors,
                wer.words
            );
            for c in cells {
                println!("    {c}");
            }
        }
    }
    Ok(())
}
