//! The settings panel's live input level: the engine's `Capture` opened on its own thread
//! (the audio stream stays on the thread that made it), its level sent every 50 ms.

use dictum_engine::audio::capture::Capture;
use dictum_engine::ipc::MicLevel;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

pub struct Meter {
    stop: Arc<AtomicBool>,
}

impl Meter {
    pub fn start(device: String, send: impl Fn(MicLevel) + Send + 'static) -> Meter {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let spawned = std::thread::Builder::new()
            .name("level-meter".into())
            .spawn(move || {
                let name = (!device.is_empty()).then_some(device.as_str());
                let capture = match Capture::open(name, 0) {
                    Ok(c) => c,
                    Err(e) => {
                        send(MicLevel {
                            device: device.clone(),
                            level: 0.0,
                            error: Some(e.to_string()),
                        });
                        return;
                    }
                };
                while !flag.load(Ordering::Relaxed) {
                    send(MicLevel {
                        device: device.clone(),
                        level: capture.level().clamp(0.0, 1.0),
                        error: capture.device_error(),
                    });
                    std::thread::sleep(Duration::from_millis(50));
                }
            });
        if let Err(e) = spawned {
            tracing::warn!("cannot start the level meter: {e}");
        }
        Meter { stop }
    }

    pub fn stop(self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}
