//! The whisper.cpp ggml models Dictum offers, with what is known about each file.
//!
//! Sizes are whisper.cpp's published approximate sizes (for display). An exact byte count and a
//! SHA-256 are recorded only where they were verified against the real file (the two models
//! the tests ship, `shared/models/SHA256SUMS`); every other entry says `Checksum::Unknown` and is
//! verified after download by its length (the server's `Content-Length`) and by the ggml
//! structure check (`stt::model_file`), which walks every tensor record.

use serde::Serialize;
use ts_rs::TS;

/// How a downloaded file is verified.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Checksum {
    /// Exact size and SHA-256 of the published file.
    Sha256 { bytes: u64, sha256: &'static str },
    /// Not recorded: verified by length and ggml structure only.
    Unknown,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CatalogModel {
    /// Name used in the config (`stt.model`) and on the command line.
    pub name: &'static str,
    /// File name in whisper.cpp's model repository and in the models folder.
    pub file: &'static str,
    /// Whisper size: tiny, base, small, medium, large-v3-turbo.
    pub size: &'static str,
    /// English-only (`.en`) model.
    pub english_only: bool,
    /// Quantization (`q5_0`, `q5_1`, `q8_0`), `None` for the f16 original.
    pub quant: Option<&'static str>,
    /// Approximate file size in MiB (whisper.cpp's README), for display.
    pub approx_mib: u32,
    pub checksum: Checksum,
}

const fn m(
    name: &'static str,
    file: &'static str,
    size: &'static str,
    english_only: bool,
    quant: Option<&'static str>,
    approx_mib: u32,
) -> CatalogModel {
    CatalogModel {
        name,
        file,
        size,
        english_only,
        quant,
        approx_mib,
        checksum: Checksum::Unknown,
    }
}

const fn verified(mut model: CatalogModel, bytes: u64, sha256: &'static str) -> CatalogModel {
    model.checksum = Checksum::Sha256 { bytes, sha256 };
    model
}

/// Every model Dictum knows by name, smallest first.
pub const CATALOG: &[CatalogModel] = &[
    m("tiny", "ggml-tiny.bin", "tiny", false, None, 75),
    m("tiny.en", "ggml-tiny.en.bin", "tiny", true, None, 75),
    m(
        "tiny-q5_1",
        "ggml-tiny-q5_1.bin",
        "tiny",
        false,
        Some("q5_1"),
        31,
    ),
    m(
        "tiny.en-q5_1",
        "ggml-tiny.en-q5_1.bin",
        "tiny",
        true,
        Some("q5_1"),
        31,
    ),
    m(
        "tiny-q8_0",
        "ggml-tiny-q8_0.bin",
        "tiny",
        false,
        Some("q8_0"),
        42,
    ),
    verified(
        m(
            "tiny.en-q8_0",
            "ggml-tiny.en-q8_0.bin",
            "tiny",
            true,
            Some("q8_0"),
            42,
        ),
        43_550_778,
        "d243ee7babe91b651f98b9fcffb3ea732be9e063f041dec8a0b2bc6bed25927c",
    ),
    m("base", "ggml-base.bin", "base", false, None, 142),
    m("base.en", "ggml-base.en.bin", "base", true, None, 142),
    m(
        "base-q5_1",
        "ggml-base-q5_1.bin",
        "base",
        false,
        Some("q5_1"),
        57,
    ),
    m(
        "base.en-q5_1",
        "ggml-base.en-q5_1.bin",
        "base",
        true,
        Some("q5_1"),
        57,
    ),
    verified(
        m(
            "base-q8_0",
            "ggml-base-q8_0.bin",
            "base",
            false,
            Some("q8_0"),
            78,
        ),
        81_768_585,
        "81cfccb75eb8eb4eecf9829be7448c60e3d4abcb5bdb0f00e2c8a726f7ae2f25",
    ),
    m(
        "base.en-q8_0",
        "ggml-base.en-q8_0.bin",
        "base",
        true,
        Some("q8_0"),
        78,
    ),
    m("small", "ggml-small.bin", "small", false, None, 466),
    m("small.en", "ggml-small.en.bin", "small", true, None, 466),
    m(
        "small-q5_1",
        "ggml-small-q5_1.bin",
        "small",
        false,
        Some("q5_1"),
        181,
    ),
    m(
        "small.en-q5_1",
        "ggml-small.en-q5_1.bin",
        "small",
        true,
        Some("q5_1"),
        181,
    ),
    m(
        "small-q8_0",
        "ggml-small-q8_0.bin",
        "small",
        false,
        Some("q8_0"),
        252,
    ),
    m(
        "small.en-q8_0",
        "ggml-small.en-q8_0.bin",
        "small",
        true,
        Some("q8_0"),
        252,
    ),
    m("medium", "ggml-medium.bin", "medium", false, None, 1500),
    m(
        "medium.en",
        "ggml-medium.en.bin",
        "medium",
        true,
        None,
        1500,
    ),
    m(
        "medium-q5_0",
        "ggml-medium-q5_0.bin",
        "medium",
        false,
        Some("q5_0"),
        514,
    ),
    m(
        "medium.en-q5_0",
        "ggml-medium.en-q5_0.bin",
        "medium",
        true,
        Some("q5_0"),
        514,
    ),
    m(
        "medium-q8_0",
        "ggml-medium-q8_0.bin",
        "medium",
        false,
        Some("q8_0"),
        785,
    ),
    m(
        "medium.en-q8_0",
        "ggml-medium.en-q8_0.bin",
        "medium",
        true,
        Some("q8_0"),
        785,
    ),
    m(
        "large-v3-turbo",
        "ggml-large-v3-turbo.bin",
        "large-v3-turbo",
        false,
        None,
        1549,
    ),
    m(
        "large-v3-turbo-q5_0",
        "ggml-large-v3-turbo-q5_0.bin",
        "large-v3-turbo",
        false,
        Some("q5_0"),
        547,
    ),
    m(
        "large-v3-turbo-q8_0",
        "ggml-large-v3-turbo-q8_0.bin",
        "large-v3-turbo",
        false,
        Some("q8_0"),
        834,
    ),
];

/// The catalog entry for a name or a file name.
pub fn find(name_or_file: &str) -> Option<&'static CatalogModel> {
    CATALOG
        .iter()
        .find(|m| m.name == name_or_file || m.file == name_or_file)
}

/// One catalog model as the UI sees it: what it is, whether it is installed, how it is checked.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export)]
pub struct ModelStatus {
    pub name: String,
    pub file: String,
    pub size: String,
    pub english_only: bool,
    pub quant: Option<String>,
    pub approx_mib: u32,
    /// Exact published size, when recorded.
    #[ts(type = "number | null")]
    pub exact_bytes: Option<u64>,
    /// Published SHA-256, when recorded; `None` = verified by length and ggml structure.
    pub sha256: Option<String>,
    /// Installed in the models folder (complete file present).
    pub installed: bool,
    /// Bytes of an interrupted download (`.part`) that a new download resumes from.
    #[ts(type = "number")]
    pub partial_bytes: u64,
    /// This is the configured default (`stt.model`).
    pub is_default: bool,
}

/// The catalog with each model's state in `dir` (the models folder) and `default_model`.
pub fn catalog(dir: &std::path::Path, default_model: &str) -> Vec<ModelStatus> {
    CATALOG
        .iter()
        .map(|m| {
            let (exact_bytes, sha256) = match m.checksum {
                Checksum::Sha256 { bytes, sha256 } => (Some(bytes), Some(sha256.to_string())),
                Checksum::Unknown => (None, None),
            };
            let partial_bytes = std::fs::metadata(dir.join(format!("{}.part", m.file)))
                .map(|md| md.len())
                .unwrap_or(0);
            ModelStatus {
                name: m.name.into(),
                file: m.file.into(),
                size: m.size.into(),
                english_only: m.english_only,
                quant: m.quant.map(str::to_string),
                approx_mib: m.approx_mib,
                exact_bytes,
                sha256,
                installed: dir.join(m.file).is_file(),
                partial_bytes,
                is_default: m.name == default_model || m.file == default_model,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_files_are_unique_and_consistent() {
        for (i, a) in CATALOG.iter().enumerate() {
            assert_eq!(a.file, format!("ggml-{}.bin", a.name), "{}", a.name);
            assert!(a.name.starts_with(a.size), "{}", a.name);
            assert_eq!(a.english_only, a.name.contains(".en"), "{}", a.name);
            assert_eq!(
                a.quant,
                a.name
                    .rsplit_once('-')
                    .map(|(_, q)| q)
                    .filter(|q| q.starts_with('q')),
                "{}",
                a.name
            );
            for b in &CATALOG[i + 1..] {
                assert_ne!(a.name, b.name);
            }
        }
        for size in ["tiny", "base", "small", "medium", "large-v3-turbo"] {
            assert!(
                CATALOG.iter().any(|m| m.size == size && m.quant.is_none()),
                "{size}"
            );
            assert!(
                CATALOG
                    .iter()
                    .any(|m| m.size == size && m.quant.is_some_and(|q| q.starts_with("q5"))),
                "{size}"
            );
            assert!(
                CATALOG
                    .iter()
                    .any(|m| m.size == size && m.quant == Some("q8_0")),
                "{size}"
            );
        }
    }

    #[test]
    fn status_reports_installed_partial_and_default() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("ggml-base-q8_0.bin"), b"x").expect("write");
        std::fs::write(dir.path().join("ggml-small.bin.part"), vec![0u8; 123]).expect("write");
        let all = catalog(dir.path(), "base-q8_0");
        let base = all.iter().find(|m| m.name == "base-q8_0").expect("base");
        assert!(base.installed && base.is_default);
        assert_eq!(base.exact_bytes, Some(81_768_585));
        let small = all.iter().find(|m| m.name == "small").expect("small");
        assert!(!small.installed && !small.is_default && small.sha256.is_none());
        assert_eq!(small.partial_bytes, 123);
        assert_eq!(all.iter().filter(|m| m.installed).count(), 1);
    }
}
