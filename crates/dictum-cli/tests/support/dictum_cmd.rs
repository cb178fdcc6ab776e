//! `dictum` as the CLI tests run it one command at a time: its data folder and config file in
//! the test's folder, models from the test assets, no log filter and no session bus from the
//! caller's environment. Included with `#[path]` by test files that include `common` at their
//! root.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// `dictum ARGS` with `dir/data` and `dir/config.toml` and no log filter from the caller.
pub fn command(dir: &Path, args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_dictum"));
    c.args(args)
        .env("DICTUM_DATA_DIR", dir.join("data"))
        .env("DICTUM_CONFIG", dir.join("config.toml"))
        .env_remove("DICTUM_LOG");
    c
}

/// Runs `dictum ARGS` with `dir/data` and `dir/config.toml`, the test assets' models and no
/// session bus; waits for it.
pub fn dictum(dir: &Path, args: &[&str]) -> Output {
    command(dir, args)
        .env("DICTUM_MODELS_DIR", crate::common::assets().join("models"))
        .env_remove("DBUS_SESSION_BUS_ADDRESS")
        .stdin(Stdio::null())
        .output()
        .expect("run dictum")
}

/// A test's own folder for `dictum`'s data folder and config file; each test file adds the
/// methods it needs.
pub struct Sandbox {
    pub dir: tempfile::TempDir,
}

impl Sandbox {
    pub fn new() -> Sandbox {
        Sandbox {
            dir: tempfile::tempdir().expect("tempdir"),
        }
    }

    /// `rel` in the folder.
    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    /// [`command`] in this folder.
    pub fn command(&self, args: &[&str]) -> Command {
        command(self.dir.path(), args)
    }
}
