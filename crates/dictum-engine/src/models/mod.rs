//! Finding model files: a catalog name (`tiny.en-q8_0`) or a path. The catalog names the
//! public whisper.cpp ggml files (`catalog.rs`: sizes, checksums); `download.rs` fetches them;
//! a missing model gets an error that says how to get it.

use crate::{Error, Result};
use std::path::{Path, PathBuf};

/// Where the public ggml whisper models live (a mirror or local folder can replace it); the
/// `[models]` section's default.
pub use crate::config::models::DEFAULT_BASE_URL;

mod catalog;
pub mod download;
pub mod measure;
pub mod recommend;

pub use catalog::{catalog, find, CatalogModel, ModelStatus, Published, CATALOG};

/// The file name for a catalog name, or the name itself if it already is a file name.
pub fn file_name_for(name: &str) -> Option<&'static str> {
    find(name).map(|m| m.file)
}

/// Resolves `model` (a path, a file name, or a catalog name) to an existing file, looking in
/// `dirs` for names. The error says how to get the model.
///
/// A catalog name (`tiny.en-q8_0`) or catalog file name (`ggml-tiny.en-q8_0.bin`) is only
/// ever looked up in `dirs`, never in the current folder: a file of that name lying in
/// whatever folder Dictum was started from must not replace the installed, verified model.
/// A path with a `/` (`./ggml-tiny.en-q8_0.bin`, `/models/x.bin`) is always taken as given,
/// and so is a bare name that is no catalog entry but an existing file (`my-finetune.bin`).
pub fn resolve(model: &str, dirs: &[PathBuf]) -> Result<PathBuf> {
    let as_path = Path::new(model);
    let looks_like_path = model.contains(std::path::MAIN_SEPARATOR) || model.contains('/');
    let catalog_entry = file_name_for(model).is_some();
    if looks_like_path || (!catalog_entry && as_path.is_file()) {
        return if as_path.is_file() {
            Ok(as_path.to_path_buf())
        } else {
            Err(Error::ModelNotFound(format!(
                "model file {model} does not exist; check the path, or pass a catalog name such as tiny.en-q8_0"
            )))
        };
    }
    let file = file_name_for(model)
        .map(str::to_string)
        .or_else(|| model.ends_with(".bin").then(|| model.to_string()));
    let Some(file) = file else {
        let names: Vec<&str> = CATALOG.iter().map(|m| m.name).collect();
        return Err(Error::ModelNotFound(format!(
            "unknown model name `{model}`; use one of {} or a path to a ggml .bin file",
            names.join(", ")
        )));
    };
    for dir in dirs {
        let candidate = dir.join(&file);
        if candidate.is_file() {
            return Ok(candidate);
        }
    }
    let into = dirs
        .first()
        .map(|d| d.display().to_string())
        .unwrap_or_else(|| "your models folder".into());
    let here = if Path::new(&file).is_file() {
        format!(" (a file named {file} is in the current folder: pass --model ./{file} to use it)")
    } else {
        String::new()
    };
    Err(Error::ModelNotFound(format!(
        "model `{model}` is not installed (looked for {file} in {}); download and verify it with \
         `dictum models download {model}` (or the tray app's Models settings), which puts it in {into}, \
         or pass --model /path/to/{file}{here}",
        dirs.iter()
            .map(|d| d.display().to_string())
            .collect::<Vec<_>>()
            .join(", ")
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_paths_and_missing_models() {
        let dir = tempfile::tempdir().expect("tempdir");
        let file = dir.path().join("ggml-tiny.en-q8_0.bin");
        std::fs::write(&file, b"x").expect("write");
        let dirs = vec![dir.path().to_path_buf()];
        assert_eq!(resolve("tiny.en-q8_0", &dirs).expect("by name"), file);
        assert_eq!(
            resolve("ggml-tiny.en-q8_0.bin", &dirs).expect("by file"),
            file
        );
        assert_eq!(
            resolve(file.to_str().expect("utf8"), &[]).expect("by path"),
            file
        );
        let err = resolve("base-q8_0", &dirs)
            .expect_err("missing")
            .to_string();
        assert!(
            err.contains("ggml-base-q8_0.bin") && err.contains("--model"),
            "{err}"
        );
        let err = resolve("/no/such/model.bin", &dirs)
            .expect_err("missing")
            .to_string();
        assert!(err.contains("does not exist"), "{err}");
        let err = resolve("huge", &dirs).expect_err("unknown").to_string();
        assert!(err.contains("unknown model name"), "{err}");
    }
}
