//! Start at login: an XDG autostart entry (`~/.config/autostart/dictum.desktop`), written or
//! removed on request. The file's presence is the setting; nothing else records it.

use crate::{Error, Result};
use std::path::{Path, PathBuf};

pub const FILE_NAME: &str = "dictum.desktop";

/// `$XDG_CONFIG_HOME/autostart` (default `~/.config/autostart`).
pub fn autostart_dir() -> Result<PathBuf> {
    directories::BaseDirs::new()
        .map(|d| d.config_dir().join("autostart"))
        .ok_or(Error::NoDataDir)
}

/// The desktop entry that starts `exec` (quoted per the Desktop Entry spec) hidden in the tray.
pub fn desktop_entry(exec: &Path) -> String {
    let quoted = exec
        .display()
        .to_string()
        .replace('\\', "\\\\\\\\")
        .replace('"', "\\\\\"")
        .replace('`', "\\\\`")
        .replace('$', "\\\\$");
    format!(
        "[Desktop Entry]\n\
         Type=Application\n\
         Name=Dictum\n\
         Comment=Push-to-talk dictation (starts in the tray)\n\
         Exec=\"{quoted}\" --hidden\n\
         Icon=dictum\n\
         Terminal=false\n\
         Categories=Utility;Accessibility;\n\
         X-GNOME-Autostart-enabled=true\n"
    )
}

pub fn is_enabled_in(dir: &Path) -> bool {
    dir.join(FILE_NAME).is_file()
}

/// Writes (`enabled`) or removes the entry in `dir`.
pub fn set_enabled_in(dir: &Path, enabled: bool, exec: &Path) -> Result<()> {
    let path = dir.join(FILE_NAME);
    let io = |e: std::io::Error| Error::ConfigIo {
        path: path.clone(),
        reason: format!("{e}; check that {} is writable", dir.display()),
    };
    if enabled {
        std::fs::create_dir_all(dir).map_err(io)?;
        let tmp = dir.join(format!(".{FILE_NAME}.tmp"));
        std::fs::write(&tmp, desktop_entry(exec)).map_err(io)?;
        std::fs::rename(&tmp, &path).map_err(io)
    } else {
        match std::fs::remove_file(&path) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(io(e)),
            _ => Ok(()),
        }
    }
}

pub fn is_enabled() -> Result<bool> {
    Ok(is_enabled_in(&autostart_dir()?))
}

pub fn set_enabled(enabled: bool, exec: &Path) -> Result<()> {
    set_enabled_in(&autostart_dir()?, enabled, exec)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn write_and_remove() {
        let dir = tempfile::tempdir().expect("tempdir");
        let auto = dir.path().join("autostart");
        assert!(!is_enabled_in(&auto));
        let exec = Path::new("/opt/My Apps/dictum-tray");
        set_enabled_in(&auto, true, exec).expect("enable");
        assert!(is_enabled_in(&auto));
        let text = std::fs::read_to_string(auto.join(FILE_NAME)).expect("read");
        assert!(
            text.starts_with("[Desktop Entry]\nType=Application\n"),
            "{text}"
        );
        assert!(
            text.contains("Exec=\"/opt/My Apps/dictum-tray\" --hidden\n"),
            "{text}"
        );
        set_enabled_in(&auto, true, exec).expect("idempotent");
        set_enabled_in(&auto, false, exec).expect("disable");
        assert!(!is_enabled_in(&auto));
        set_enabled_in(&auto, false, exec).expect("idempotent");
        assert!(desktop_entry(Path::new("/a\"b$c")).contains("Exec=\"/a\\\\\"b\\\\$c\" --hidden"));
    }
}
