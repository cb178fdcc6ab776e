//! What decoding costs (issue 40): each file decoded to 16 kHz mono through
//! `audio::decode_file_16k_blocks`, as `dictum transcribe` does (symphonia in its decode worker,
//! ffmpeg for the rest), with nothing after it; wall and CPU time (this process and its
//! children) per minute of audio, the best of RUNS.
//!
//!     cargo run --release -p dictum-engine --example decode_cost -- FILE... [--runs N]

use std::time::Instant;

/// User + system CPU seconds of this process and of its waited-for children.
fn cpu_s() -> f64 {
    let tv = |t: libc::timeval| t.tv_sec as f64 + t.tv_usec as f64 / 1e6;
    let mut total = 0.0;
    for who in [libc::RUSAGE_SELF, libc::RUSAGE_CHILDREN] {
        // SAFETY: getrusage fills the struct given; zeroed is a valid rusage.
        let mut u: libc::rusage = unsafe { std::mem::zeroed() };
        if unsafe { libc::getrusage(who, &mut u) } == 0 {
            total += tv(u.ru_utime) + tv(u.ru_stime);
        }
    }
    total
}

fn main() -> std::process::ExitCode {
    if let Some(code) = dictum_engine::stt::worker_process::serve_if_requested() {
        return code;
    }
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    let mut runs = 3;
    if let Some(i) = args.iter().position(|a| a == "--runs") {
        runs = args.get(i + 1).and_then(|n| n.parse().ok()).unwrap_or(3);
        args.drain(i..(i + 2).min(args.len()));
    }
    println!("| file | audio | wall per audio minute | CPU per audio minute |");
    println!("|---|---:|---:|---:|");
    for file in &args {
        let mut best: Option<(f64, f64, f64)> = None;
        for _ in 0..runs {
            let (t, c) = (Instant::now(), cpu_s());
            let mut samples = 0u64;
            let info = dictum_engine::audio::decode_file_16k_blocks(
                std::path::Path::new(file),
                4 * 3600,
                &mut |block, _| {
                    samples += block.len() as u64;
                    Ok(())
                },
            );
            let (wall, cpu) = (t.elapsed().as_secs_f64(), cpu_s() - c);
            if let Err(e) = info {
                eprintln!("{file}: {e}");
                return std::process::ExitCode::FAILURE;
            }
            let minutes = samples as f64 / 16_000.0 / 60.0;
            if best.is_none_or(|(w, _, _)| wall < w) {
                best = Some((wall, cpu, minutes));
            }
        }
        if let Some((wall, cpu, minutes)) = best {
            println!(
                "| {file} | {:.1} min | {:.0} ms | {:.0} ms |",
                minutes,
                wall * 1000.0 / minutes,
                cpu * 1000.0 / minutes
            );
        }
    }
    std::process::ExitCode::SUCCESS
}
