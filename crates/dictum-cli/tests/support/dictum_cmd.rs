//! `dictum` as the CLI tests run it one command at a time: its data folder and config file in
//! the test's folder, models from the test assets, no log filter and no session bus from the
//! caller's environment. Included with `#[path]` by test files that include `common` at their
//! root.
#![allow(dead_code)]

use std::path::Path;
use std::process::{Command, Output, Stdio};

/// Runs `dictum ARGS` with `dir/data` and `dir/config.toml`; waits for it.
pub fn dictum(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dictum"))
        .args(args)
        .env("DICTUM_DATA_DIR", dir.join("data"))
        .env("DICTUM_CONFIG", dir.join("config.toml"))
        .env("DICTUM_MODELS_DIR", crate::common::assets().join("models"))
        .env_remove("DICTUM_LOG")
        .env_remove("DBUS_SESSION_BUS_ADDRESS")
        .stdin(Stdio::null())
        .output()
        .expect("run dictum")
}
