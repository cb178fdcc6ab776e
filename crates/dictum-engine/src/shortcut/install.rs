//! `dictum shortcut install|remove`: writes the [`super::Binding`] where the desktop reads
//! it, idempotently, and undoes it.
//!
//! - sway: Dictum's own file `$XDG_CONFIG_HOME/sway/config.d/dictum.conf`, and one
//!   `include` line appended to the main config (backed up first) unless an `include`
//!   there already covers the file; then `swaymsg reload` when sway runs (`SWAYSOCK`).
//! - Hyprland: `$XDG_CONFIG_HOME/hypr/dictum.conf`, a `source =` line in `hyprland.conf`,
//!   `hyprctl reload` when Hyprland runs.
//! - GNOME: Dictum's own entry in `org.gnome.settings-daemon.plugins.media-keys
//!   custom-keybindings`, appended to the list (other entries are kept), through `gsettings`.
//!
//! Running `install` twice changes nothing the second time; `remove` takes out exactly what
//! `install` added.

use super::{
    gvariant_string, gvariant_strv, parse_gvariant_string, parse_gvariant_strv, pattern_covers,
    Binding, Desktop, GNOME_BINDING_SCHEMA, GNOME_LIST_KEY, GNOME_PATH, GNOME_SCHEMA,
};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The user's home and config folders (`$HOME`, `$XDG_CONFIG_HOME`).
#[derive(Debug, Clone)]
pub struct Paths {
    pub home: PathBuf,
    pub config_home: PathBuf,
}

impl Paths {
    pub fn from_env() -> Result<Paths, String> {
        let home = std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from)
            .ok_or("HOME is not set; run this as the user whose desktop gets the shortcut")?;
        let config_home = std::env::var_os("XDG_CONFIG_HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| home.join(".config"));
        Ok(Paths { home, config_home })
    }

    /// Dictum's own file for `desktop` (sway, Hyprland).
    pub fn own_file(&self, desktop: Desktop) -> Option<PathBuf> {
        match desktop {
            Desktop::Sway => Some(self.config_home.join("sway/config.d/dictum.conf")),
            Desktop::Hyprland => Some(self.config_home.join("hypr/dictum.conf")),
            _ => None,
        }
    }

    /// The main config sway reads, in sway's own search order; None when the user has none
    /// (sway then reads /etc/sway/config).
    pub fn sway_main(&self) -> Option<PathBuf> {
        [
            self.home.join(".sway/config"),
            self.config_home.join("sway/config"),
            self.home.join(".i3/config"),
            self.config_home.join("i3/config"),
        ]
        .into_iter()
        .find(|p| p.is_file())
    }

    pub fn hyprland_main(&self) -> PathBuf {
        self.config_home.join("hypr/hyprland.conf")
    }
}

/// What install or remove did, one line each, for the user.
#[derive(Debug, Default, Clone)]
pub struct Outcome {
    pub changed: bool,
    pub done: Vec<String>,
}

impl Outcome {
    fn did(&mut self, line: impl Into<String>) {
        self.changed = true;
        self.done.push(line.into());
    }
    fn say(&mut self, line: impl Into<String>) {
        self.done.push(line.into());
    }
}

/// The marker comment above the line Dictum adds to a main config.
pub const MARKER: &str =
    "# Dictum's shortcut (`dictum shortcut install`; `dictum shortcut remove` takes it out)";

/// The line that makes the main config read Dictum's file.
pub fn include_line(desktop: Desktop, target: &Path) -> String {
    let t = target.to_string_lossy();
    let t = if t.contains(char::is_whitespace) {
        format!("\"{t}\"")
    } else {
        t.into_owned()
    };
    match desktop {
        Desktop::Hyprland => format!("source = {t}"),
        _ => format!("include {t}"),
    }
}

/// Does any `include` (sway) / `source` (Hyprland) line of `config` already read `target`?
pub fn config_reads(desktop: Desktop, config: &str, target: &Path, paths: &Paths) -> bool {
    config.lines().any(|line| {
        let line = line.trim();
        let arg = match desktop {
            Desktop::Hyprland => line
                .strip_prefix("source")
                .map(str::trim_start)
                .and_then(|r| r.strip_prefix('=')),
            _ => line
                .strip_prefix("include")
                .filter(|r| r.starts_with(char::is_whitespace)),
        };
        arg.is_some_and(|a| {
            // Hyprland allows a trailing comment; sway does not, but neither hurts.
            let a = a.split(" #").next().unwrap_or(a);
            pattern_covers(a, target, &paths.home, &paths.config_home)
        })
    })
}

/// `config` with Dictum's block (marker + include line) appended.
pub fn with_block(config: &str, line: &str) -> String {
    let mut out = config.to_string();
    if !out.is_empty() && !out.ends_with('\n') {
        out.push('\n');
    }
    out.push_str(&format!("\n{MARKER}\n{line}\n"));
    out
}

/// `config` without Dictum's block (or, if edited by hand, without the marker and the line
/// wherever they are); None when neither is there.
pub fn without_block(config: &str, line: &str) -> Option<String> {
    let block = format!("\n{MARKER}\n{line}\n");
    if let Some(at) = config.find(&block) {
        let mut out = config[..at].to_string();
        out.push_str(&config[at + block.len()..]);
        return Some(out);
    }
    let kept: Vec<&str> = config
        .lines()
        .filter(|l| l.trim() != MARKER && l.trim() != line)
        .collect();
    if kept.len() == config.lines().count() {
        return None;
    }
    let mut out = kept.join("\n");
    if config.ends_with('\n') && !out.is_empty() {
        out.push('\n');
    }
    Some(out)
}

/// Installs `b` for the user in `paths`. `reload`: tell the running compositor (when its
/// socket is in the environment).
pub fn install(b: &Binding, paths: &Paths, gsettings: &Gsettings) -> Result<Outcome, String> {
    let mut out = Outcome::default();
    match b.desktop {
        Desktop::Sway | Desktop::Hyprland => {
            let own = paths
                .own_file(b.desktop)
                .ok_or("no file for this desktop")?;
            let main = match b.desktop {
                Desktop::Sway => match paths.sway_main() {
                    Some(m) => m,
                    None => {
                        let m = paths.config_home.join("sway/config");
                        create_sway_main(&m, &mut out)?;
                        m
                    }
                },
                _ => {
                    let m = paths.hyprland_main();
                    if !m.is_file() {
                        return Err(format!(
                            "no Hyprland config at {}; start Hyprland once (it writes one), then run `dictum shortcut install` again",
                            m.display()
                        ));
                    }
                    m
                }
            };
            if std::fs::read_to_string(&own).ok().as_deref() == Some(b.text.as_str()) {
                out.say(format!("{} is up to date", own.display()));
            } else {
                write_file(&own, &b.text)?;
                out.did(format!("wrote {}", own.display()));
            }
            let main_real = std::fs::canonicalize(&main).unwrap_or(main.clone());
            let text = read(&main_real)?;
            if config_reads(b.desktop, &text, &own, paths) {
                out.say(format!("{} already reads it", main.display()));
            } else {
                let backup = backup(&main_real)?;
                write_file(
                    &main_real,
                    &with_block(&text, &include_line(b.desktop, &own)),
                )?;
                out.did(format!(
                    "added `{}` to {} (backup: {})",
                    include_line(b.desktop, &own),
                    main.display(),
                    backup.display()
                ));
            }
            if out.changed {
                reload(b.desktop, &mut out);
            }
        }
        Desktop::Gnome => {
            let kb = b.gnome.as_ref().ok_or("no GNOME keybinding")?;
            let mut list = parse_gvariant_strv(&gsettings.get(GNOME_SCHEMA, GNOME_LIST_KEY)?)?;
            if !list.iter().any(|p| p == GNOME_PATH) {
                list.push(GNOME_PATH.to_string());
                gsettings.set(GNOME_SCHEMA, GNOME_LIST_KEY, &gvariant_strv(&list))?;
                out.did(format!(
                    "added Dictum's entry to GNOME's custom shortcuts ({} in all)",
                    list.len()
                ));
            }
            let schema = format!("{GNOME_BINDING_SCHEMA}:{GNOME_PATH}");
            for (key, value) in [
                ("name", &kb.name),
                ("command", &kb.command),
                ("binding", &kb.binding),
            ] {
                let now = parse_gvariant_string(&gsettings.get(&schema, key)?)?;
                if &now != value {
                    gsettings.set(&schema, key, &gvariant_string(value))?;
                    out.did(format!("set the shortcut's {key} to {value:?}"));
                }
            }
            if !out.changed {
                out.say("GNOME's custom shortcut is already in place");
            }
        }
        Desktop::Kde | Desktop::Other => {
            out.say(format!(
                "nothing installed: Dictum does not edit {}'s shortcut settings",
                b.desktop.name()
            ));
        }
    }
    Ok(out)
}

/// Undoes [`install`] for `desktop`.
pub fn remove(desktop: Desktop, paths: &Paths, gsettings: &Gsettings) -> Result<Outcome, String> {
    let mut out = Outcome::default();
    match desktop {
        Desktop::Sway | Desktop::Hyprland => {
            let own = paths.own_file(desktop).ok_or("no file for this desktop")?;
            match std::fs::remove_file(&own) {
                Ok(()) => out.did(format!("removed {}", own.display())),
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(format!("cannot remove {}: {e}", own.display())),
            }
            let main = match desktop {
                Desktop::Sway => paths.sway_main(),
                _ => Some(paths.hyprland_main()).filter(|m| m.is_file()),
            };
            if let Some(main) = main {
                let main_real = std::fs::canonicalize(&main).unwrap_or(main.clone());
                let text = read(&main_real)?;
                if let Some(new) = without_block(&text, &include_line(desktop, &own)) {
                    let backup = backup(&main_real)?;
                    write_file(&main_real, &new)?;
                    out.did(format!(
                        "took Dictum's line out of {} (backup: {})",
                        main.display(),
                        backup.display()
                    ));
                }
            }
            if out.changed {
                reload(desktop, &mut out);
            } else {
                out.say(format!(
                    "no Dictum shortcut was installed for {}",
                    desktop.name()
                ));
            }
        }
        Desktop::Gnome => {
            let list = parse_gvariant_strv(&gsettings.get(GNOME_SCHEMA, GNOME_LIST_KEY)?)?;
            if list.iter().any(|p| p == GNOME_PATH) {
                let kept: Vec<String> = list.into_iter().filter(|p| p != GNOME_PATH).collect();
                gsettings.set(GNOME_SCHEMA, GNOME_LIST_KEY, &gvariant_strv(&kept))?;
                out.did("took Dictum's entry out of GNOME's custom shortcuts");
            }
            let schema = format!("{GNOME_BINDING_SCHEMA}:{GNOME_PATH}");
            for key in ["name", "command", "binding"] {
                if !parse_gvariant_string(&gsettings.get(&schema, key)?)?.is_empty() {
                    gsettings.reset(&schema, key)?;
                    out.changed = true;
                }
            }
            if !out.changed {
                out.say("no Dictum shortcut was installed for GNOME");
            }
        }
        Desktop::Kde | Desktop::Other => {
            out.say(format!(
                "nothing to remove: Dictum installs nothing on {}",
                desktop.name()
            ));
        }
    }
    Ok(out)
}

/// A user without a sway config runs /etc/sway/config; theirs starts as a copy of it (sway's
/// own advice), so adding one line does not lose the defaults.
fn create_sway_main(main: &Path, out: &mut Outcome) -> Result<(), String> {
    let system = ["/etc/sway/config", "/usr/local/etc/sway/config"]
        .into_iter()
        .find_map(|p| std::fs::read_to_string(p).ok().map(|t| (p, t)));
    let text = match &system {
        Some((_, t)) => t.clone(),
        None => String::new(),
    };
    write_file(main, &text)?;
    out.did(match system {
        Some((p, _)) => format!(
            "you had no sway config of your own: created {} as a copy of {p}",
            main.display()
        ),
        None => format!("you had no sway config: created {}", main.display()),
    });
    Ok(())
}

fn reload(desktop: Desktop, out: &mut Outcome) {
    let (env, cmd, args): (&str, &str, &[&str]) = match desktop {
        Desktop::Sway => ("SWAYSOCK", "swaymsg", &["reload"]),
        Desktop::Hyprland => ("HYPRLAND_INSTANCE_SIGNATURE", "hyprctl", &["reload"]),
        _ => return,
    };
    if std::env::var_os(env).is_none_or(|v| v.is_empty()) {
        out.say(format!(
            "{} is not running here ({env} is not set): the shortcut works from its next start",
            desktop.name()
        ));
        return;
    }
    match Command::new(cmd).args(args).output() {
        Ok(o) if o.status.success() => {
            out.say(format!("reloaded {} (`{cmd} reload`)", desktop.name()))
        }
        Ok(o) => out.say(format!(
            "`{cmd} reload` failed ({}): {}; reload {} yourself",
            o.status,
            String::from_utf8_lossy(&o.stdout).trim(),
            desktop.name()
        )),
        Err(e) => out.say(format!(
            "could not run `{cmd} reload` ({e}); reload {} yourself",
            desktop.name()
        )),
    }
}

fn read(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}

/// Writes `text` whole (a temporary file renamed over the old one), keeping its permissions.
fn write_file(path: &Path, text: &str) -> Result<(), String> {
    let dir = path
        .parent()
        .ok_or_else(|| format!("{} has no folder", path.display()))?;
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let tmp = dir.join(format!(".{name}.dictum-tmp"));
    std::fs::write(&tmp, text).map_err(|e| format!("cannot write {}: {e}", tmp.display()))?;
    if let Ok(meta) = std::fs::metadata(path) {
        let _ = std::fs::set_permissions(&tmp, meta.permissions());
    }
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        format!("cannot write {}: {e}", path.display())
    })
}

/// Copies `path` to `path.dictum-backup` (the state before Dictum's latest edit).
fn backup(path: &Path) -> Result<PathBuf, String> {
    let mut name = path.as_os_str().to_owned();
    name.push(".dictum-backup");
    let to = PathBuf::from(name);
    std::fs::copy(path, &to)
        .map_err(|e| format!("cannot back up {} to {}: {e}", path.display(), to.display()))?;
    Ok(to)
}

/// The `gsettings` tool (extra environment for tests: `GSETTINGS_BACKEND=keyfile`).
#[derive(Debug, Clone, Default)]
pub struct Gsettings {
    pub env: Vec<(OsString, OsString)>,
}

impl Gsettings {
    fn run(&self, args: &[&str]) -> Result<String, String> {
        let out = Command::new("gsettings")
            .args(args)
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .output()
            .map_err(|e| {
                format!("cannot run gsettings ({e}); on GNOME it comes with libglib2.0-bin")
            })?;
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr).trim().to_string();
            return Err(if err.contains("No such schema") {
                format!("GNOME's shortcut settings are not installed here ({err}); is this GNOME? Try --desktop")
            } else {
                format!("gsettings {}: {err}", args.join(" "))
            });
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }

    pub fn get(&self, schema: &str, key: &str) -> Result<String, String> {
        self.run(&["get", schema, key])
    }

    pub fn set(&self, schema: &str, key: &str, value: &str) -> Result<(), String> {
        self.run(&["set", schema, key, value]).map(|_| ())
    }

    pub fn reset(&self, schema: &str, key: &str) -> Result<(), String> {
        self.run(&["reset", schema, key]).map(|_| ())
    }
}

#[cfg(test)]
mod tests {
    use super::super::binding;
    use super::*;

    fn paths(dir: &Path) -> Paths {
        Paths {
            home: dir.to_path_buf(),
            config_home: dir.join(".config"),
        }
    }

    const EXE: &str = "/usr/local/bin/dictum";

    #[test]
    fn block_added_and_taken_out_leaves_the_config_as_it_was() {
        for original in ["", "set $mod Mod4\n", "set $mod Mod4", "a\n\nb\n"] {
            let line = "include /h/.config/sway/config.d/dictum.conf";
            let added = with_block(original, line);
            assert!(
                added.ends_with(&format!("\n{MARKER}\n{line}\n")),
                "{added:?}"
            );
            let back = without_block(&added, line).expect("block found");
            let expect = if original.is_empty() || original.ends_with('\n') {
                original.to_string()
            } else {
                format!("{original}\n")
            };
            assert_eq!(back, expect);
            assert_eq!(without_block(&back, line), None);
        }
        // Moved by hand: the two lines go wherever they are.
        let line = "include /x";
        let edited = format!("a\n{MARKER}\nb\n{line}\nc\n");
        assert_eq!(without_block(&edited, line).as_deref(), Some("a\nb\nc\n"));
    }

    #[test]
    fn sway_install_is_idempotent_and_remove_undoes_it() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = paths(dir.path());
        let main = dir.path().join(".config/sway/config");
        std::fs::create_dir_all(main.parent().expect("parent")).expect("mkdir");
        let original = "set $mod Mod4\nbindsym $mod+Return exec foot\n";
        std::fs::write(&main, original).expect("write");
        let b = binding(Desktop::Sway, "ctrl+alt+space", Path::new(EXE)).expect("binding");
        let gs = Gsettings::default();

        let first = install(&b, &p, &gs).expect("install");
        assert!(first.changed, "{:?}", first.done);
        let own = dir.path().join(".config/sway/config.d/dictum.conf");
        assert_eq!(std::fs::read_to_string(&own).expect("own file"), b.text);
        let text = std::fs::read_to_string(&main).expect("main");
        assert!(text.starts_with(original));
        assert!(
            text.ends_with(&format!("include {}\n", own.display())),
            "{text}"
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join(".config/sway/config.dictum-backup"))
                .expect("backup"),
            original
        );

        let second = install(&b, &p, &gs).expect("install again");
        assert!(!second.changed, "{:?}", second.done);
        assert_eq!(std::fs::read_to_string(&main).expect("main"), text);

        // Another hotkey rewrites only Dictum's file.
        let b2 = binding(Desktop::Sway, "super+f9", Path::new(EXE)).expect("binding");
        let third = install(&b2, &p, &gs).expect("install other hotkey");
        assert!(third.changed);
        assert!(std::fs::read_to_string(&own)
            .expect("own")
            .contains("Mod4+F9"));
        assert_eq!(std::fs::read_to_string(&main).expect("main"), text);

        let gone = remove(Desktop::Sway, &p, &gs).expect("remove");
        assert!(gone.changed, "{:?}", gone.done);
        assert!(!own.exists());
        assert_eq!(std::fs::read_to_string(&main).expect("main"), original);
        let again = remove(Desktop::Sway, &p, &gs).expect("remove again");
        assert!(!again.changed, "{:?}", again.done);
    }

    #[test]
    fn sway_config_that_already_includes_config_d_is_left_alone() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = paths(dir.path());
        let main = dir.path().join(".config/sway/config");
        std::fs::create_dir_all(main.parent().expect("parent")).expect("mkdir");
        let original = "include ~/.config/sway/config.d/*\n";
        std::fs::write(&main, original).expect("write");
        let b = binding(Desktop::Sway, "ctrl+alt+space", Path::new(EXE)).expect("binding");
        install(&b, &p, &Gsettings::default()).expect("install");
        assert_eq!(std::fs::read_to_string(&main).expect("main"), original);
        assert!(!dir
            .path()
            .join(".config/sway/config.dictum-backup")
            .exists());
        remove(Desktop::Sway, &p, &Gsettings::default()).expect("remove");
        assert_eq!(std::fs::read_to_string(&main).expect("main"), original);
    }

    #[test]
    fn sway_without_a_user_config_gets_a_copy_of_the_system_one() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = paths(dir.path());
        let b = binding(Desktop::Sway, "ctrl+alt+space", Path::new(EXE)).expect("binding");
        let out = install(&b, &p, &Gsettings::default()).expect("install");
        let main = dir.path().join(".config/sway/config");
        let text = std::fs::read_to_string(&main).expect("created");
        if let Ok(system) = std::fs::read_to_string("/etc/sway/config") {
            assert!(text.starts_with(&system));
            assert!(
                out.done
                    .iter()
                    .any(|l| l.contains("copy of /etc/sway/config")),
                "{:?}",
                out.done
            );
        }
        assert!(text.contains("include "), "{text}");
    }

    #[test]
    fn a_symlinked_main_config_stays_a_symlink() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = paths(dir.path());
        let dotfiles = dir.path().join("dotfiles/sway-config");
        std::fs::create_dir_all(dotfiles.parent().expect("parent")).expect("mkdir");
        std::fs::write(&dotfiles, "set $mod Mod4\n").expect("write");
        let main = dir.path().join(".config/sway/config");
        std::fs::create_dir_all(main.parent().expect("parent")).expect("mkdir");
        std::os::unix::fs::symlink(&dotfiles, &main).expect("symlink");
        let b = binding(Desktop::Sway, "ctrl+alt+space", Path::new(EXE)).expect("binding");
        install(&b, &p, &Gsettings::default()).expect("install");
        assert!(std::fs::symlink_metadata(&main)
            .expect("meta")
            .file_type()
            .is_symlink());
        assert!(std::fs::read_to_string(&dotfiles)
            .expect("real")
            .contains("include "));
    }

    #[test]
    fn hyprland_install_sources_the_file_and_needs_a_config() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = paths(dir.path());
        let b = binding(Desktop::Hyprland, "super+d", Path::new(EXE)).expect("binding");
        let err = install(&b, &p, &Gsettings::default()).expect_err("no config");
        assert!(err.contains("start Hyprland once"), "{err}");
        let main = p.hyprland_main();
        std::fs::create_dir_all(main.parent().expect("parent")).expect("mkdir");
        std::fs::write(&main, "monitor=,preferred,auto,1\n").expect("write");
        install(&b, &p, &Gsettings::default()).expect("install");
        let own = dir.path().join(".config/hypr/dictum.conf");
        let text = std::fs::read_to_string(&main).expect("main");
        assert!(
            text.ends_with(&format!("source = {}\n", own.display())),
            "{text}"
        );
        assert!(config_reads(Desktop::Hyprland, &text, &own, &p));
        assert!(
            !install(&b, &p, &Gsettings::default())
                .expect("again")
                .changed
        );
        remove(Desktop::Hyprland, &p, &Gsettings::default()).expect("remove");
        assert_eq!(
            std::fs::read_to_string(&main).expect("main"),
            "monitor=,preferred,auto,1\n"
        );
        assert!(!own.exists());
    }

    /// Real gsettings with its keyfile backend in a temporary config folder (the schema comes
    /// with gnome-settings-daemon-common); skipped where the schema is not installed.
    #[test]
    fn gnome_install_appends_to_the_list_and_remove_keeps_the_others() {
        let dir = tempfile::tempdir().expect("tempdir");
        let gs = Gsettings {
            env: vec![
                ("GSETTINGS_BACKEND".into(), "keyfile".into()),
                ("XDG_CONFIG_HOME".into(), dir.path().as_os_str().to_owned()),
            ],
        };
        if let Err(e) = gs.get(GNOME_SCHEMA, GNOME_LIST_KEY) {
            assert!(
                std::env::var_os("DICTUM_REQUIRE_E2E").is_none(),
                "DICTUM_REQUIRE_E2E is set but {e} (apt install gnome-settings-daemon-common)"
            );
            eprintln!("SKIPPED: {e}");
            return;
        }
        let theirs = "/org/gnome/settings-daemon/plugins/media-keys/custom-keybindings/custom0/";
        gs.set(
            GNOME_SCHEMA,
            GNOME_LIST_KEY,
            &gvariant_strv(&[theirs.to_string()]),
        )
        .expect("seed");
        let b = binding(Desktop::Gnome, "ctrl+alt+space", Path::new(EXE)).expect("binding");
        let p = paths(dir.path());
        assert!(install(&b, &p, &gs).expect("install").changed);
        let list =
            parse_gvariant_strv(&gs.get(GNOME_SCHEMA, GNOME_LIST_KEY).expect("get")).expect("list");
        assert_eq!(list, [theirs, GNOME_PATH]);
        let schema = format!("{GNOME_BINDING_SCHEMA}:{GNOME_PATH}");
        let get =
            |k: &str| parse_gvariant_string(&gs.get(&schema, k).expect("get")).expect("string");
        assert_eq!(get("command"), "/usr/local/bin/dictum ctl toggle");
        assert_eq!(get("binding"), "<Control><Alt>space");
        assert_eq!(get("name"), "Dictum dictation");
        let again = install(&b, &p, &gs).expect("again");
        assert!(!again.changed, "{:?}", again.done);
        assert!(remove(Desktop::Gnome, &p, &gs).expect("remove").changed);
        let list =
            parse_gvariant_strv(&gs.get(GNOME_SCHEMA, GNOME_LIST_KEY).expect("get")).expect("list");
        assert_eq!(list, [theirs]);
        assert_eq!(get("command"), "");
        assert!(
            !remove(Desktop::Gnome, &p, &gs)
                .expect("remove again")
                .changed
        );
    }

    #[test]
    fn kde_and_other_install_nothing() {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = paths(dir.path());
        for d in [Desktop::Kde, Desktop::Other] {
            let b = binding(d, "ctrl+alt+space", Path::new(EXE)).expect("binding");
            let out = install(&b, &p, &Gsettings::default()).expect("install");
            assert!(!out.changed);
            assert!(out.done[0].contains("nothing installed"), "{:?}", out.done);
        }
        assert_eq!(std::fs::read_dir(dir.path()).expect("dir").count(), 0);
    }
}
