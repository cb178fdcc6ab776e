//! The "Transcribe a file…" window's side in the app: the engine's file queue
//! (`dictum_engine::filejobs`), started on first use, its changes sent to the window as
//! `file-job` events; the files come from the window's Add files… (a native dialog), the tray
//! menu, a drop on the window, or `dictum-tray --transcribe FILE…` (a second launch hands
//! its files to the running app). Save as writes where a native dialog says.

use crate::state::AppState;
use dictum_engine::filejobs::{
    FileJobs, JobDefaults, JobOptions, JobView, SaveFormat, SavedFile, Setup, BUILT_IN,
};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use tauri::{AppHandle, DragDropEvent, Emitter, Manager, State, WindowEvent};

type Res<T> = Result<T, String>;

/// The window's label (`windows.rs`, `capabilities/transcribe.json`).
pub const WINDOW: &str = "transcribe";

/// The queue, once a file was asked for.
#[derive(Default)]
pub struct Files(Mutex<Option<FileJobs>>);

/// Runs `f` with the queue, starting it first when needed.
fn with_queue<T>(app: &AppHandle, f: impl FnOnce(&FileJobs) -> T) -> Res<T> {
    let files = app.state::<Files>();
    let mut guard = files.0.lock().unwrap_or_else(|p| p.into_inner());
    if guard.is_none() {
        let state = app.state::<AppState>();
        let for_config = app.clone();
        let for_events = app.clone();
        let started = FileJobs::start(Setup {
            config: Box::new(move || for_config.state::<AppState>().config()),
            model_dirs: dictum_engine::paths::model_dirs().map_err(|e| e.to_string())?,
            audio_dir: dictum_engine::paths::audio_dir().ok(),
            history_path: state.history_path.clone(),
            changed: Box::new(move |view: &JobView| {
                let _ = for_events.emit("file-job", view);
            }),
        })
        .map_err(|e| format!("cannot start transcribing files: {e}"))?;
        *guard = Some(started);
    }
    match guard.as_ref() {
        Some(queue) => Ok(f(queue)),
        None => Err("the file queue did not start".into()),
    }
}

/// The paths of a command line after `--transcribe` (up to the next option), made absolute
/// against `cwd` (a second launch's own working folder).
pub fn transcribe_args(args: &[String], cwd: &Path) -> Vec<PathBuf> {
    let Some(at) = args.iter().position(|a| a == "--transcribe") else {
        return Vec::new();
    };
    args[at + 1..]
        .iter()
        .take_while(|a| !a.starts_with("--"))
        .map(|a| {
            let p = PathBuf::from(a.strip_prefix("file://").unwrap_or(a));
            if p.is_absolute() {
                p
            } else {
                cwd.join(p)
            }
        })
        .collect()
}

/// Queues `paths` with the dictation's model and language and shows the window.
pub fn queue_and_show(app: &AppHandle, paths: Vec<PathBuf>) {
    if !paths.is_empty() {
        let config = app.state::<AppState>().config();
        let added = with_queue(app, |q| q.add(&paths, &JobOptions::default(), &config));
        match added {
            Ok(added) => println!("dictum-tray: transcribe: {} file(s) queued", added.len()),
            Err(e) => tracing::warn!("{e}"),
        }
    }
    crate::windows::show(app, WINDOW);
}

/// The files of a drop onto the transcribe window; None for any other event or window.
pub fn dropped(label: &str, event: &WindowEvent) -> Option<Vec<PathBuf>> {
    match event {
        WindowEvent::DragDrop(DragDropEvent::Drop { paths, .. })
            if label == WINDOW && !paths.is_empty() =>
        {
            Some(paths.clone())
        }
        _ => None,
    }
}

/// The tray menu's "Transcribe a file…": the dialog, then the window with the queue.
pub fn from_menu(app: &AppHandle) {
    let app = app.clone();
    tauri::async_runtime::spawn(async move {
        match pick(&app).await {
            Ok(paths) => queue_and_show(&app, paths),
            Err(e) => {
                tracing::warn!("{e}");
                crate::windows::show(&app, WINDOW);
            }
        }
    });
}

#[tauri::command]
pub async fn file_job_defaults(state: State<'_, AppState>) -> Res<JobDefaults> {
    let config = state.config();
    let mut models: Vec<String> =
        dictum_engine::models::catalog(&state.models_dir()?, &config.stt.model)
            .into_iter()
            .filter(|m| m.installed)
            .map(|m| m.name)
            .collect();
    models.retain(|m| *m != config.stt.model);
    models.insert(0, config.stt.model.clone());
    Ok(JobDefaults {
        models,
        model: config.stt.model.clone(),
        language: config.stt.language.clone(),
        extensions: BUILT_IN.iter().map(|e| e.to_string()).collect(),
        ffmpeg: dictum_engine::audio::find_ffmpeg().is_some(),
    })
}

#[tauri::command]
pub async fn file_jobs(app: AppHandle) -> Res<Vec<JobView>> {
    with_queue(&app, |q| q.list())
}

#[tauri::command]
pub async fn file_jobs_add(
    app: AppHandle,
    state: State<'_, AppState>,
    paths: Vec<String>,
    options: JobOptions,
) -> Res<Vec<JobView>> {
    let config = state.config();
    let paths: Vec<PathBuf> = paths.into_iter().map(PathBuf::from).collect();
    with_queue(&app, |q| q.add(&paths, &options, &config))
}

#[tauri::command]
pub async fn file_jobs_pick(app: AppHandle) -> Res<Vec<String>> {
    Ok(pick(&app)
        .await?
        .into_iter()
        .map(|p| p.display().to_string())
        .collect())
}

#[tauri::command]
pub async fn file_job_cancel(app: AppHandle, id: u32) -> Res<()> {
    with_queue(&app, |q| q.cancel(id)).map(|_| ())
}

#[tauri::command]
pub async fn file_job_remove(app: AppHandle, id: u32) -> Res<()> {
    if with_queue(&app, |q| q.remove(id))? {
        Ok(())
    } else {
        Err("only a file that has ended can be removed: cancel it first".into())
    }
}

#[tauri::command]
pub async fn file_job_copy(app: AppHandle, id: u32) -> Res<()> {
    let text = with_queue(&app, |q| q.text(id))?.ok_or("no such file in the list")?;
    if text.trim().is_empty() {
        return Err("nothing to copy yet".into());
    }
    crate::tray::copy_text(&app, &text)
}

/// Save as: the text or subtitles written where the save dialog says (beside the recording
/// by default); None when the dialog was cancelled. `DICTUM_TRAY_SAVE_DIR` (tests): no
/// dialog, the proposed name in that folder.
#[tauri::command]
pub async fn file_job_save(app: AppHandle, id: u32, format: SaveFormat) -> Res<Option<SavedFile>> {
    let text = with_queue(&app, |q| q.render(id, format))??;
    let (dir, name) =
        with_queue(&app, |q| q.save_name(id, format))?.ok_or("no such file in the list")?;
    let target = match std::env::var_os("DICTUM_TRAY_SAVE_DIR") {
        Some(test_dir) => Some(PathBuf::from(test_dir).join(&name)),
        None => save_dialog(&app, dir, name).await?,
    };
    let Some(path) = target else {
        return Ok(None);
    };
    std::fs::write(&path, text.as_bytes())
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(Some(SavedFile {
        path: path.display().to_string(),
        bytes: text.len() as u64,
    }))
}

/// The native open dialog (several files, audio and video).
async fn pick(app: &AppHandle) -> Res<Vec<PathBuf>> {
    on_gui_thread(app, "file dialog", dialog::open_files).await
}

/// The native save dialog, proposing `name` in `dir`; None when cancelled.
async fn save_dialog(app: &AppHandle, dir: PathBuf, name: String) -> Res<Option<PathBuf>> {
    on_gui_thread(app, "save dialog", move || dialog::save_file(&dir, &name)).await
}

/// Runs `f` (a GTK dialog) on the GUI thread and waits for its answer off it.
async fn on_gui_thread<T: Send + 'static>(
    app: &AppHandle,
    what: &str,
    f: impl FnOnce() -> T + Send + 'static,
) -> Res<T> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    app.run_on_main_thread(move || {
        let _ = tx.send(f());
    })
    .map_err(|e| format!("cannot open the {what}: {e}"))?;
    rx.await.map_err(|_| format!("the {what} went away"))
}

#[cfg(target_os = "linux")]
mod dialog {
    //! GTK's native file chooser (the desktop portal's where there is one, e.g. in a Flatpak).
    use gtk::prelude::*;
    use std::path::{Path, PathBuf};

    pub fn open_files() -> Vec<PathBuf> {
        let chooser = gtk::FileChooserNative::new(
            Some("Transcribe files"),
            None::<&gtk::Window>,
            gtk::FileChooserAction::Open,
            Some("Transcribe"),
            Some("Cancel"),
        );
        chooser.set_select_multiple(true);
        let media = gtk::FileFilter::new();
        media.set_name(Some("Audio and video"));
        media.add_mime_type("audio/*");
        media.add_mime_type("video/*");
        chooser.add_filter(media);
        let all = gtk::FileFilter::new();
        all.set_name(Some("All files"));
        all.add_pattern("*");
        chooser.add_filter(all);
        let picked = if chooser.run() == gtk::ResponseType::Accept {
            chooser.filenames()
        } else {
            Vec::new()
        };
        chooser.destroy();
        picked
    }

    pub fn save_file(dir: &Path, name: &str) -> Option<PathBuf> {
        let chooser = gtk::FileChooserNative::new(
            Some("Save as"),
            None::<&gtk::Window>,
            gtk::FileChooserAction::Save,
            Some("Save"),
            Some("Cancel"),
        );
        chooser.set_do_overwrite_confirmation(true);
        if dir.is_dir() {
            let _ = chooser.set_current_folder(dir);
        }
        chooser.set_current_name(name);
        let chosen = if chooser.run() == gtk::ResponseType::Accept {
            chooser.filename()
        } else {
            None
        };
        chooser.destroy();
        chosen
    }
}

#[cfg(not(target_os = "linux"))]
mod dialog {
    //! No native dialog wired here yet: files come by drop or command line, Save as is refused.
    use std::path::{Path, PathBuf};

    pub fn open_files() -> Vec<PathBuf> {
        Vec::new()
    }

    pub fn save_file(_dir: &Path, _name: &str) -> Option<PathBuf> {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn transcribe_arguments_are_the_paths_up_to_the_next_option() {
        let a = |s: &[&str]| s.iter().map(|x| x.to_string()).collect::<Vec<_>>();
        let cwd = Path::new("/home/me/Music");
        assert_eq!(
            transcribe_args(
                &a(&[
                    "dictum-tray",
                    "--transcribe",
                    "a.mp3",
                    "/tmp/b.ogg",
                    "file:///tmp/c d.wav",
                    "--show",
                    "history"
                ]),
                cwd
            ),
            vec![
                PathBuf::from("/home/me/Music/a.mp3"),
                PathBuf::from("/tmp/b.ogg"),
                PathBuf::from("/tmp/c d.wav"),
            ]
        );
        assert!(transcribe_args(&a(&["dictum-tray", "--show", "history"]), cwd).is_empty());
        assert!(transcribe_args(&a(&["dictum-tray", "--transcribe"]), cwd).is_empty());
    }

    #[test]
    fn only_a_drop_on_the_transcribe_window_queues_files() {
        let drop = WindowEvent::DragDrop(DragDropEvent::Drop {
            paths: vec![PathBuf::from("/tmp/talk.mp3")],
            position: tauri::PhysicalPosition::new(10.0, 10.0),
        });
        assert_eq!(
            dropped(WINDOW, &drop),
            Some(vec![PathBuf::from("/tmp/talk.mp3")])
        );
        assert_eq!(dropped("history", &drop), None);
        let hover = WindowEvent::DragDrop(DragDropEvent::Over {
            position: tauri::PhysicalPosition::new(10.0, 10.0),
        });
        assert_eq!(dropped(WINDOW, &hover), None);
        let empty = WindowEvent::DragDrop(DragDropEvent::Drop {
            paths: Vec::new(),
            position: tauri::PhysicalPosition::new(0.0, 0.0),
        });
        assert_eq!(dropped(WINDOW, &empty), None);
    }
}
