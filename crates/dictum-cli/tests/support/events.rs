//! The daemon's `--json` event stream as a channel: one thread reads `dictum run`'s standard
//! output and sends each JSON line (other lines are printed). Shared by the live tests.

use serde_json::Value;
use std::io::{BufRead, BufReader};
use std::process::ChildStdout;
use std::sync::mpsc;

pub fn json_events(stdout: ChildStdout) -> mpsc::Receiver<Value> {
    let (tx, events) = mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            match serde_json::from_str::<Value>(&line) {
                Ok(v) => {
                    if tx.send(v).is_err() {
                        break;
                    }
                }
                Err(_) => eprintln!("dictum stdout: {line}"),
            }
        }
    });
    events
}
