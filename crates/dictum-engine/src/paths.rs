//! Where Dictum keeps its files. XDG locations by default, each overridable by an env var so
//! tests and portable installs never touch the user's real data.
//!
//! What Dictum writes is private (dictated text, audio, settings with server URLs): folders
//! are created 0700 and files 0600 whatever the umask ([`create_private_dir_all`],
//! [`create_private_file`], [`write_private`]), existing ones are tightened
//! ([`make_private`]), and the binaries start with umask 077 ([`set_private_umask`]) so
//! whatever a library writes on Dictum's behalf (SQLite's WAL and SHM, temp files) is too.

use crate::{Error, Result};
use std::path::{Path, PathBuf};

pub const DATA_DIR_ENV: &str = "DICTUM_DATA_DIR";
pub const CONFIG_ENV: &str = "DICTUM_CONFIG";

fn project_dirs() -> Option<directories::ProjectDirs> {
    directories::ProjectDirs::from("", "", "dictum")
}

/// `$DICTUM_DATA_DIR`, else the XDG data dir (`~/.local/share/dictum`).
pub fn data_dir() -> Result<PathBuf> {
    if let Some(dir) = std::env::var_os(DATA_DIR_ENV).filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(dir));
    }
    project_dirs()
        .map(|d| d.data_dir().to_path_buf())
        .ok_or(Error::NoDataDir)
}

/// `$DICTUM_CONFIG`, else `~/.config/dictum/config.toml`.
pub fn config_file() -> Result<PathBuf> {
    if let Some(file) = std::env::var_os(CONFIG_ENV).filter(|v| !v.is_empty()) {
        return Ok(PathBuf::from(file));
    }
    project_dirs()
        .map(|d| d.config_dir().join("config.toml"))
        .ok_or(Error::NoDataDir)
}

pub fn history_db() -> Result<PathBuf> {
    Ok(data_dir()?.join("history.sqlite3"))
}

pub fn models_dir() -> Result<PathBuf> {
    Ok(data_dir()?.join("models"))
}

pub fn audio_dir() -> Result<PathBuf> {
    Ok(data_dir()?.join("audio"))
}

/// Folders searched for models given by name: `$DICTUM_MODELS_DIR` (if set), then
/// `<data dir>/models`.
pub fn model_dirs() -> Result<Vec<PathBuf>> {
    let mut dirs = Vec::new();
    if let Some(dir) = std::env::var_os("DICTUM_MODELS_DIR").filter(|v| !v.is_empty()) {
        dirs.push(PathBuf::from(dir));
    }
    dirs.push(models_dir()?);
    Ok(dirs)
}

/// Mode of the folders Dictum creates: the owner only.
pub const PRIVATE_DIR_MODE: u32 = 0o700;
/// Mode of the files Dictum creates: the owner only, no execute.
pub const PRIVATE_FILE_MODE: u32 = 0o600;

/// Sets the process umask to 077: everything created from now on, by Dictum or a library,
/// is readable by its owner only. Call first thing in `main` (the umask is per process).
pub fn set_private_umask() {
    #[cfg(unix)]
    // SAFETY: umask only swaps the process's file mode creation mask; it cannot fail.
    unsafe {
        libc::umask(0o077);
    }
}

/// Creates `dir` and any missing parents with mode 0700, and tightens `dir` itself to 0700
/// if it exists with more (the parents that already existed are not Dictum's to change).
pub fn create_private_dir_all(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(PRIVATE_DIR_MODE)
            .create(dir)?;
        let mode = std::fs::metadata(dir)?.permissions().mode();
        if mode & 0o077 != 0 {
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(PRIVATE_DIR_MODE))?;
        }
        Ok(())
    }
    #[cfg(not(unix))]
    std::fs::create_dir_all(dir)
}

/// Opens `path` for writing (created or truncated) with mode 0600; an existing file is
/// tightened to 0600 first. A symbolic link at `path` is refused (`O_NOFOLLOW`), never
/// followed: a link planted there would have Dictum write its private text wherever it
/// points.
pub fn create_private_file(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    open_private(path, &mut options)
}

/// Opens `path` for appending (created when missing) with mode 0600, as
/// [`create_private_file`] does: tightened first, a symbolic link refused.
pub fn append_private_file(path: &Path) -> std::io::Result<std::fs::File> {
    let mut options = std::fs::OpenOptions::new();
    options.append(true).create(true);
    open_private(path, &mut options)
}

fn open_private(path: &Path, options: &mut std::fs::OpenOptions) -> std::io::Result<std::fs::File> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options
            .mode(PRIVATE_FILE_MODE)
            .custom_flags(libc::O_NOFOLLOW);
        make_private(path)?;
    }
    options.open(path).map_err(|e| {
        #[cfg(unix)]
        if e.raw_os_error() == Some(libc::ELOOP) {
            return std::io::Error::other(format!(
                "{} is a symbolic link; Dictum writes its private files only as real files, never through a link (remove the link, or name the file it points to)",
                path.display()
            ));
        }
        e
    })
}

/// Writes `bytes` to `path` as a private (0600) file.
pub fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write;
    let mut f = create_private_file(path)?;
    f.write_all(bytes)?;
    f.sync_all()
}

/// Why a folder that exists cannot hold Dictum's private files ([`check_private_dir`]).
#[cfg(unix)]
#[derive(Debug)]
pub enum NotPrivate {
    Unreadable(std::io::Error),
    Symlink,
    NotFolder,
    OtherUser {
        owner: u32,
        me: u32,
    },
    /// Open to others with the sticky bit, such as /tmp.
    Shared {
        mode: u32,
    },
    OpenToOthers {
        mode: u32,
    },
}

#[cfg(unix)]
impl std::fmt::Display for NotPrivate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotPrivate::Unreadable(e) => write!(f, "{e}"),
            NotPrivate::Symlink => write!(f, "it is a symbolic link"),
            NotPrivate::NotFolder => write!(f, "it is not a folder"),
            NotPrivate::OtherUser { owner, me } => {
                write!(f, "it belongs to another user (uid {owner}, you are {me})")
            }
            NotPrivate::Shared { mode } => {
                write!(f, "it is a shared folder open to others (mode {mode:o})")
            }
            NotPrivate::OpenToOthers { mode } => write!(f, "it is open to others (mode {mode:o})"),
        }
    }
}

/// Checks, and never changes, that `dir` is a real folder (not a link) of this user with no
/// access for anyone else. One that is not may already have been seen or had files planted
/// in it; tightening it would hide that, so callers refuse it and say what to do.
#[cfg(unix)]
pub fn check_private_dir(dir: &Path) -> std::result::Result<(), NotPrivate> {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let meta = std::fs::symlink_metadata(dir).map_err(NotPrivate::Unreadable)?;
    if meta.file_type().is_symlink() {
        return Err(NotPrivate::Symlink);
    }
    if !meta.is_dir() {
        return Err(NotPrivate::NotFolder);
    }
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    if meta.uid() != me {
        return Err(NotPrivate::OtherUser {
            owner: meta.uid(),
            me,
        });
    }
    let mode = meta.permissions().mode() & 0o7777;
    if mode & 0o077 != 0 {
        return Err(if mode & 0o1000 != 0 {
            NotPrivate::Shared { mode }
        } else {
            NotPrivate::OpenToOthers { mode }
        });
    }
    Ok(())
}

/// Tightens an existing file to 0600 (folders to 0700) if group or others have any access;
/// a missing path is fine.
pub fn make_private(path: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let meta = match std::fs::symlink_metadata(path) {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e),
        };
        if meta.file_type().is_symlink() {
            return Ok(());
        }
        let mode = meta.permissions().mode();
        if mode & 0o077 != 0 {
            let private = if meta.is_dir() {
                PRIVATE_DIR_MODE
            } else {
                PRIVATE_FILE_MODE
            };
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(private))?;
        }
    }
    #[cfg(not(unix))]
    let _ = path;
    Ok(())
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_symbolic_link_is_never_written_through() {
        let dir = tempfile::tempdir().expect("tempdir");
        let target = dir.path().join("elsewhere");
        std::fs::write(&target, "theirs").expect("target");
        let link = dir.path().join("history.sqlite3.journal");
        std::os::unix::fs::symlink(&target, &link).expect("symlink");
        for open in [create_private_file, append_private_file] {
            let e = open(&link).expect_err("a link is refused");
            assert!(e.to_string().contains("symbolic link"), "{e}");
        }
        let e = write_private(&link, b"secret words").expect_err("refused");
        assert!(e.to_string().contains("never through a link"), "{e}");
        // The file the link points to is untouched, its mode too.
        assert_eq!(std::fs::read_to_string(&target).expect("read"), "theirs");
        // A dangling link is refused as well (O_CREAT would otherwise create its target).
        let dangling = dir.path().join("spool.pcm");
        let nowhere = dir.path().join("nowhere");
        std::os::unix::fs::symlink(&nowhere, &dangling).expect("symlink");
        assert!(create_private_file(&dangling).is_err());
        assert!(!nowhere.exists(), "the link's target was created");
        // A real file is written as before.
        let real = dir.path().join("real");
        write_private(&real, b"x").expect("real file");
        append_private_file(&real).expect("append");
    }

    fn mode(p: &Path) -> u32 {
        std::fs::metadata(p).expect("stat").permissions().mode() & 0o777
    }

    #[test]
    fn private_folders_and_files_whatever_the_umask() {
        // The test process has the usual umask (022): without the explicit modes these
        // would come out 0755 and 0644.
        let dir = tempfile::tempdir().expect("tempdir");
        let deep = dir.path().join("a/b/c");
        create_private_dir_all(&deep).expect("mkdir");
        for d in ["a", "a/b", "a/b/c"] {
            assert_eq!(mode(&dir.path().join(d)), 0o700, "{d}");
        }
        let file = deep.join("f");
        write_private(&file, b"secret").expect("write");
        assert_eq!(mode(&file), 0o600);
        // Existing, too open: tightened.
        std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o644)).expect("chmod");
        std::fs::set_permissions(&deep, std::fs::Permissions::from_mode(0o755)).expect("chmod");
        write_private(&file, b"again").expect("write");
        create_private_dir_all(&deep).expect("mkdir");
        assert_eq!((mode(&file), mode(&deep)), (0o600, 0o700));
        make_private(&dir.path().join("missing")).expect("missing is fine");
    }
}
