//! What one live tail pass costs on this machine, phase by phase (issue 13): the release waits
//! for a whisper pass over the last stretch (the speech since the last commit, 1–4 s), and
//! this splits it into mel spectrogram, encoder + first token, and the rest of the decoder,
//! for each thread count and window floor given, on the last `SECS` of each dev clip.
//!
//!     cargo run --release -p dictum-engine --example tail_pass -- MODEL ASSETS/audio/dev \
//!         [RUNS (5)] [SECS (3)] [THREADS (1,2)] [FLOORS (384)] [FLASH (0)] [PROMPT_CHARS (0)]
//!
//! PROMPT_CHARS > 0 gives each pass that many characters of earlier text as its prompt, as a
//! live chunk gets the text committed before it (up to 200 characters).
//!
//! Each figure is the best of RUNS (wall time; run it on a quiet machine).
use std::time::Instant;
use whisper_rs::{WhisperContext, WhisperContextParameters};

#[path = "support/greedy.rs"]
mod greedy;
use greedy::greedy;

fn list(arg: Option<&String>, default: &str) -> Vec<i32> {
    arg.map_or(default, String::as_str)
        .split(',')
        .filter_map(|v| v.trim().parse().ok())
        .collect()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [model, dir, rest @ ..] = &args[..] else {
        return Err(
            "usage: tail_pass MODEL DEV_DIR [RUNS] [SECS] [THREADS] [FLOORS] [FLASH] [PROMPT_CHARS]"
                .into(),
        );
    };
    let runs: usize = rest.first().and_then(|r| r.parse().ok()).unwrap_or(5);
    let secs: f64 = rest.get(1).and_then(|r| r.parse().ok()).unwrap_or(3.0);
    let threads = list(rest.get(2), "1,2");
    let floors = list(rest.get(3), "384");
    let flash = rest.get(4).is_some_and(|f| f == "1");
    let prompt_chars: usize = rest.get(5).and_then(|p| p.parse().ok()).unwrap_or(0);
    let prompt: String =
        "And so, my fellow Americans, ask not what your country can do for you; ask what \
        you can do for your country. My fellow citizens of the world, ask not what America will \
        do for you, but what together we can do for the freedom of man."
            .chars()
            .rev()
            .take(prompt_chars)
            .collect::<Vec<_>>()
            .into_iter()
            .rev()
            .collect();
    let refs = std::fs::read_to_string(format!("{dir}/refs.tsv"))?;
    let clips: Vec<(String, Vec<f32>)> = refs
        .lines()
        .filter_map(|l| l.split_once('\t'))
        .filter(|(_, r)| !r.trim().is_empty())
        .filter_map(|(f, _)| {
            let pcm =
                dictum_engine::audio::decode_16k(std::path::Path::new(&format!("{dir}/{f}")), 60)
                    .ok()?
                    .samples;
            let keep = (secs * 16_000.0) as usize;
            let tail = pcm[pcm.len().saturating_sub(keep)..].to_vec();
            Some((f.to_string(), tail))
        })
        .collect();
    whisper_rs::install_logging_hooks();
    let mut cp = WhisperContextParameters::default();
    cp.flash_attn(flash);
    let ctx = WhisperContext::new_with_params(model, cp)?;
    let mut state = ctx.create_state()?;
    println!(
        "flash={flash}, last {secs} s of each clip, prompt {} chars, best of {runs}",
        prompt.len()
    );
    println!("| threads | floor | clip | mel | encoder + 1 token (incl. mel) | whole pass | decoder after the 1st token | tokens |");
    println!("|---:|---:|---|---:|---:|---:|---:|---:|");
    for &t in &threads {
        for &floor in &floors {
            let mut sums = [0.0f64; 4];
            for (name, pcm) in &clips {
                let len_s = pcm.len() as f64 / 16_000.0;
                let frames = ((len_s * 50.0).ceil() as i32 + 64).max(floor);
                let ctxf = if frames >= 1500 { 0 } else { frames };
                let mut best = [f64::MAX; 3];
                let mut tokens = 0;
                for _ in 0..runs {
                    let t0 = Instant::now();
                    state.pcm_to_mel(pcm, t as usize)?;
                    best[0] = best[0].min(t0.elapsed().as_secs_f64() * 1000.0);
                    for (i, max_tokens) in [(1, 1), (2, (24.0 + len_s * 10.0).ceil() as i32)] {
                        let mut p = greedy(t, ctxf);
                        p.set_temperature_inc(0.0);
                        p.set_max_tokens(max_tokens);
                        if !prompt.is_empty() {
                            p.set_initial_prompt(&prompt);
                        }
                        let t0 = Instant::now();
                        state.full(p, pcm)?;
                        best[i] = best[i].min(t0.elapsed().as_secs_f64() * 1000.0);
                        if i == 2 {
                            tokens = state.as_iter().map(|s| s.n_tokens()).sum::<i32>();
                        }
                    }
                }
                let dec = best[2] - best[1];
                for (s, v) in sums.iter_mut().zip([best[0], best[1], best[2], dec]) {
                    *s += v;
                }
                println!(
                    "| {t} | {floor} | {name} | {:.0} | {:.0} | {:.0} | {:.0} | {tokens} |",
                    best[0], best[1], best[2], dec
                );
            }
            let n = clips.len() as f64;
            println!(
                "| {t} | {floor} | **mean** | {:.0} | {:.0} | {:.0} | {:.0} | |",
                sums[0] / n,
                sums[1] / n,
                sums[2] / n,
                sums[3] / n
            );
        }
    }
    Ok(())
}
