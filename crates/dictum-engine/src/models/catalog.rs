//! The whisper.cpp ggml models Dictum offers, with what their publisher states about each file.
//!
//! Every entry carries the file's exact size, its SHA-256 (the Git LFS object id of the file in
//! the models' public home, the Hugging Face repository `ggerganov/whisper.cpp`) and its SHA-1
//! (the checksum whisper.cpp's own model tables publish). This machine cannot reach Hugging
//! Face, so the values were read from public copies of that repository's API listing
//! (`/api/models/ggerganov/whisper.cpp?blobs=true`: size and `lfs.sha256` of every file) and
//! cross-checked against independent catalogs: each size, SHA-1 and SHA-256 below agrees with at
//! least six other projects, and 17 of the SHA-256s also with a Nix flake's fixed-output hashes,
//! which Nix verifies against the real download. A download is verified against all three.
//!
//! Note: the test assets in `shared/models` were converted locally and are *not* these files
//! (same names, other bytes); the tests use them with their own `SHA256SUMS`, and check that the
//! catalog refuses them.

use serde::Serialize;
use ts_rs::TS;

/// What the publisher states about a model file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Published {
    pub bytes: u64,
    pub sha1: &'static str,
    pub sha256: &'static str,
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
    pub published: Published,
}

impl CatalogModel {
    /// Size in MiB, for display.
    pub fn mib(&self) -> f64 {
        self.published.bytes as f64 / 1_048_576.0
    }
}

macro_rules! model {
    ($name:literal, $size:literal, $en:literal, $quant:expr, $bytes:literal, $sha1:literal, $sha256:literal) => {
        CatalogModel {
            name: $name,
            file: concat!("ggml-", $name, ".bin"),
            size: $size,
            english_only: $en,
            quant: $quant,
            published: Published {
                bytes: $bytes,
                sha1: $sha1,
                sha256: $sha256,
            },
        }
    };
}

/// Every model Dictum knows by name, smallest first.
#[rustfmt::skip]
pub const CATALOG: &[CatalogModel] = &[
    model!("tiny", "tiny", false, None, 77691713, "bd577a113a864445d4c299885e0cb97d4ba92b5f",
        "be07e048e1e599ad46341c8d2a135645097a538221678b7acdd1b1919c6e1b21"),
    model!("tiny.en", "tiny", true, None, 77704715, "c78c86eb1a8faa21b369bcd33207cc90d64ae9df",
        "921e4cf8686fdd993dcd081a5da5b6c365bfde1162e72b08d75ac75289920b1f"),
    model!("tiny-q5_1", "tiny", false, Some("q5_1"), 32152673, "2827a03e495b1ed3048ef28a6a4620537db4ee51",
        "818710568da3ca15689e31a743197b520007872ff9576237bda97bd1b469c3d7"),
    model!("tiny.en-q5_1", "tiny", true, Some("q5_1"), 32166155, "3fb92ec865cbbc769f08137f22470d6b66e071b6",
        "c77c5766f1cef09b6b7d47f21b546cbddd4157886b3b5d6d4f709e91e66c7c2b"),
    model!("tiny-q8_0", "tiny", false, Some("q8_0"), 43537433, "19e8118f6652a650569f5a949d962154e01571d9",
        "c2085835d3f50733e2ff6e4b41ae8a2b8d8110461e18821b09a15c40c42d1cca"),
    model!("tiny.en-q8_0", "tiny", true, Some("q8_0"), 43550795, "802d6668e7d411123e672abe4cb6c18f12306abb",
        "5bc2b3860aa151a4c6e7bb095e1fcce7cf12c7b020ca08dcec0c6d018bb7dd94"),
    model!("base", "base", false, None, 147951465, "465707469ff3a37a2b9b8d8f89f2f99de7299dac",
        "60ed5bc3dd14eea856493d334349b405782ddcaf0028d4b5df4088345fba2efe"),
    model!("base.en", "base", true, None, 147964211, "137c40403d78fd54d454da0f9bd998f78703390c",
        "a03779c86df3323075f5e796cb2ce5029f00ec8869eee3fdfb897afe36c6d002"),
    model!("base-q5_1", "base", false, Some("q5_1"), 59707625, "a3733eda680ef76256db5fc5dd9de8629e62c5e7",
        "422f1ae452ade6f30a004d7e5c6a43195e4433bc370bf23fac9cc591f01a8898"),
    model!("base.en-q5_1", "base", true, Some("q5_1"), 59721011, "d26d7ce5a1b6e57bea5d0431b9c20ae49423c94a",
        "4baf70dd0d7c4247ba2b81fafd9c01005ac77c2f9ef064e00dcf195d0e2fdd2f"),
    model!("base-q8_0", "base", false, Some("q8_0"), 81768585, "7bb89bb49ed6955013b166f1b6a6c04584a20fbe",
        "c577b9a86e7e048a0b7eada054f4dd79a56bbfa911fbdacf900ac5b567cbb7d9"),
    model!("base.en-q8_0", "base", true, Some("q8_0"), 81781811, "bb1574182e9b924452bf0cd1510ac034d323e948",
        "a4d4a0768075e13cfd7e19df3ae2dbc4a68d37d36a7dad45e8410c9a34f8c87e"),
    model!("small", "small", false, None, 487601967, "55356645c2b361a969dfd0ef2c5a50d530afd8d5",
        "1be3a9b2063867b937e64e2ec7483364a79917e157fa98c5d94b5c1fffea987b"),
    model!("small.en", "small", true, None, 487614201, "db8a495a91d927739e50b3fc1cc4c6b8f6c2d022",
        "c6138d6d58ecc8322097e0f987c32f1be8bb0a18532a3f88f734d1bbf9c41e5d"),
    model!("small-q5_1", "small", false, Some("q5_1"), 190085487, "6fe57ddcfdd1c6b07cdcc73aaf620810ce5fc771",
        "ae85e4a935d7a567bd102fe55afc16bb595bdb618e11b2fc7591bc08120411bb"),
    model!("small.en-q5_1", "small", true, Some("q5_1"), 190098681, "20f54878d608f94e4a8ee3ae56016571d47cba34",
        "bfdff4894dcb76bbf647d56263ea2a96645423f1669176f4844a1bf8e478ad30"),
    model!("small-q8_0", "small", false, Some("q8_0"), 264464607, "bcad8a2083f4e53d648d586b7dbc0cd673d8afad",
        "49c8fb02b65e6049d5fa6c04f81f53b867b5ec9540406812c643f177317f779f"),
    model!("small.en-q8_0", "small", true, Some("q8_0"), 264477561, "9d75ff4ccfa0a8217870d7405cf8cef0a5579852",
        "67a179f608ea6114bd3fdb9060e762b588a3fb3bd00c4387971be4d177958067"),
    model!("medium", "medium", false, None, 1533763059, "fd9727b6e1217c2f614f9b698455c4ffd82463b4",
        "6c14d5adee5f86394037b4e4e8b59f1673b6cee10e3cf0b11bbdbee79c156208"),
    model!("medium.en", "medium", true, None, 1533774781, "8c30f0e44ce9560643ebd10bbe50cd20eafd3723",
        "cc37e93478338ec7700281a7ac30a10128929eb8f427dda2e865faa8f6da4356"),
    model!("medium-q5_0", "medium", false, Some("q5_0"), 539212467, "7718d4c1ec62ca96998f058114db98236937490e",
        "19fea4b380c3a618ec4723c3eef2eb785ffba0d0538cf43f8f235e7b3b34220f"),
    model!("medium.en-q5_0", "medium", true, Some("q5_0"), 539225533, "bb3b5281bddd61605d6fc76bc5b92d8f20284c3b",
        "76733e26ad8fe1c7a5bf7531a9d41917b2adc0f20f2e4f5531688a8c6cd88eb0"),
    model!("medium-q8_0", "medium", false, Some("q8_0"), 823369779, "e66645948aff4bebbec71b3485c576f3d63af5d6",
        "42a1ffcbe4167d224232443396968db4d02d4e8e87e213d3ee2e03095dea6502"),
    model!("medium.en-q8_0", "medium", true, Some("q8_0"), 823382461, "b1cf48c12c807e14881f634fb7b6c6ca867f6b38",
        "43fa2cd084de5a04399a896a9a7a786064e221365c01700cea4666005218f11c"),
    model!("large-v3-turbo", "large-v3-turbo", false, None, 1624555275, "4af2b29d7ec73d781377bfd1758ca957a807e941",
        "1fc70f774d38eb169993ac391eea357ef47c88757ef72ee5943879b7e8e2bc69"),
    model!("large-v3-turbo-q5_0", "large-v3-turbo", false, Some("q5_0"), 574041195, "e050f7970618a659205450ad97eb95a18d69c9ee",
        "394221709cd5ad1f40c46e6031ca61bce88931e6e088c188294c6d5a55ffa7e2"),
    model!("large-v3-turbo-q8_0", "large-v3-turbo", false, Some("q8_0"), 874188075, "01bf15bedffe9f39d65c1b6ff9b687ea91f59e0e",
        "317eb69c11673c9de1e1f0d459b253999804ec71ac4c23c17ecf5fbe24e259a1"),
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
    /// Exact published size.
    #[ts(type = "number")]
    pub exact_bytes: u64,
    /// Published SHA-256 (a download is checked against it, and against `sha1`).
    pub sha256: String,
    /// Published SHA-1 (whisper.cpp's model tables).
    pub sha1: String,
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
            let partial_bytes = std::fs::metadata(dir.join(format!("{}.part", m.file)))
                .map(|md| md.len())
                .unwrap_or(0);
            ModelStatus {
                name: m.name.into(),
                file: m.file.into(),
                size: m.size.into(),
                english_only: m.english_only,
                quant: m.quant.map(str::to_string),
                exact_bytes: m.published.bytes,
                sha256: m.published.sha256.into(),
                sha1: m.published.sha1.into(),
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
    fn every_entry_has_exact_size_and_both_checksums() {
        let hex = |s: &str, len: usize| {
            s.len() == len
                && s.bytes()
                    .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
        };
        for m in CATALOG {
            assert!(hex(m.published.sha1, 40), "{} sha1", m.name);
            assert!(hex(m.published.sha256, 64), "{} sha256", m.name);
            // whisper.cpp's approximate sizes (MiB; "1.5 GiB" for medium and turbo), a sanity
            // check on each exact byte count.
            let approx = match (m.size, m.quant) {
                ("tiny", None) => 75.0,
                ("tiny", Some("q5_1")) => 31.0,
                ("tiny", Some("q8_0")) => 42.0,
                ("base", None) => 142.0,
                ("base", Some("q5_1")) => 57.0,
                ("base", Some("q8_0")) => 78.0,
                ("small", None) => 466.0,
                ("small", Some("q5_1")) => 181.0,
                ("small", Some("q8_0")) => 252.0,
                ("medium", None) => 1536.0,
                ("medium", Some("q5_0")) => 514.0,
                ("medium", Some("q8_0")) => 785.0,
                ("large-v3-turbo", None) => 1536.0,
                ("large-v3-turbo", Some("q5_0")) => 547.0,
                ("large-v3-turbo", Some("q8_0")) => 834.0,
                other => panic!("unexpected {other:?}"),
            };
            let ratio = m.mib() / approx;
            assert!((0.94..1.06).contains(&ratio), "{}: {} MiB", m.name, m.mib());
            // The `.en` twin differs by its vocabulary header only: a few KiB.
            if let Some(twin) = find(&m.name.replace(".en", "")).filter(|_| m.english_only) {
                let d = m.published.bytes.abs_diff(twin.published.bytes);
                assert!(d < 64 * 1024, "{} vs {}: {d}", m.name, twin.name);
            }
        }
        let mut sums: Vec<_> = CATALOG.iter().map(|m| m.published.sha256).collect();
        sums.sort_unstable();
        sums.dedup();
        assert_eq!(sums.len(), CATALOG.len(), "a SHA-256 appears twice");
    }

    #[test]
    fn status_reports_installed_partial_and_default() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("ggml-base-q8_0.bin"), b"x").expect("write");
        std::fs::write(dir.path().join("ggml-small.bin.part"), vec![0u8; 123]).expect("write");
        let all = catalog(dir.path(), "base-q8_0");
        let base = all.iter().find(|m| m.name == "base-q8_0").expect("base");
        assert!(base.installed && base.is_default);
        assert_eq!(base.exact_bytes, 81_768_585);
        assert_eq!(base.sha1, "7bb89bb49ed6955013b166f1b6a6c04584a20fbe");
        let small = all.iter().find(|m| m.name == "small").expect("small");
        assert!(!small.installed && !small.is_default);
        assert_eq!(small.exact_bytes, 487_601_967);
        assert_eq!(small.partial_bytes, 123);
        assert_eq!(all.iter().filter(|m| m.installed).count(), 1);
    }
}
