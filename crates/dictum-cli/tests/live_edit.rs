//! Edit mode end to end (issue 30 item 1): `dictum run` on Xvfb with the PulseAudio virtual
//! microphone (the harness of `live_snippets.rs`), a real GTK 4 text box
//! (`tests/gtk_textbox.py`) holding a selected sentence, and a declared stand-in for an
//! OpenAI-compatible LLM (`tests/llm_edit_standin.py`) that answers every edit with one chosen
//! text. The instruction is spoken by espeak-ng.
//!
//! - The edit key (`[edit] hotkey`, ctrl+alt+e) held while "Make this more formal." plays:
//!   the stand-in gets the selection and the instruction, its answer replaces the selection
//!   in the box, the row has mode `edit`, the selection's length and the instruction, the
//!   original is on the clipboard, and Ctrl+Z in the box brings the original back.
//! - Refusals, each with its notice and nothing typed: no selection, silence (no instruction),
//!   no LLM (`[llm] enabled = false`).
//! - An answer of 60 lines: the focus moved to an xterm mid-typing, then Escape: typing stops,
//!   no Return reaches the xterm (issue 38).

#[path = "../../dictum-engine/tests/common/mod.rs"]
mod common;

#[path = "support/events.rs"]
mod events;
#[path = "support/speech.rs"]
mod speech;
#[path = "support/x11_daemon.rs"]
mod x11_daemon;

use common::pulse::play_file_and_wait;
use common::x11::{tools_present, Xvfb};
use speech::speak;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};
use x11_daemon::{dictate, Daemon, Live};

const EDIT_KEY: &str = "ctrl+alt+e";
const ORIGINAL: &str = "hey can u send me the numbers by friday";
const ANSWER: &str = "Could you please send me the figures by Friday?";

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// A Python 3 with GTK 4's introspection (python3-gi, gir1.2-gtk-4.0); None: skipped.
fn gtk_python() -> Option<&'static str> {
    for py in ["/usr/bin/python3", "python3"] {
        let ok = Command::new(py)
            .args([
                "-c",
                "import gi; gi.require_version('Gtk', '4.0'); from gi.repository import Gtk",
            ])
            .stderr(Stdio::null())
            .status()
            .is_ok_and(|s| s.success());
        if ok {
            return Some(py);
        }
    }
    assert!(
        std::env::var_os("DICTUM_REQUIRE_E2E").is_none(),
        "DICTUM_REQUIRE_E2E is set but GTK 4 for Python is missing (apt install python3-gi gir1.2-gtk-4.0)"
    );
    eprintln!("SKIPPED: GTK 4 for Python missing (apt install python3-gi gir1.2-gtk-4.0)");
    None
}

/// The GTK text box; what it holds is read from the file it rewrites at every change.
struct TextBox {
    child: Child,
    out: PathBuf,
}

impl TextBox {
    fn start(x: &Xvfb, py: &str, dir: &Path, text: &str, select: bool) -> TextBox {
        let out = dir.join("box.txt");
        let title = "Dictum edit test";
        let mut cmd = Command::new(py);
        cmd.arg(repo_root().join("tests/gtk_textbox.py"))
            .args(["--text", text, "--title", title, "--out"])
            .arg(&out)
            .env("DISPLAY", &x.display)
            .env("GDK_BACKEND", "x11")
            .env("GSK_RENDERER", "cairo")
            .env_remove("WAYLAND_DISPLAY")
            .stdout(Stdio::piped())
            .stderr(Stdio::null());
        if select {
            cmd.arg("--select");
        }
        let mut child = cmd.spawn().expect("start tests/gtk_textbox.py");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("text box");
        assert_eq!(line.trim(), "ready", "the text box did not start");
        // No window manager: keys go to the window under the pointer.
        let window = x.xdotool(&["search", "--name", title]);
        let window = window
            .lines()
            .next()
            .expect("the text box's window")
            .to_string();
        x.xdotool(&["mousemove", "--window", &window, "100", "50"]);
        std::thread::sleep(Duration::from_millis(200));
        TextBox { child, out }
    }

    fn text(&self) -> String {
        std::fs::read_to_string(&self.out).unwrap_or_default()
    }

    /// Waits (5 s at most) until the box holds `want`; returns what it holds then.
    fn wait_for(&self, want: &str) -> String {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let now = self.text();
            if now == want || Instant::now() > deadline {
                return now;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for TextBox {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `tests/llm_edit_standin.py`: answers every request with `answer`, logging the messages.
struct Standin {
    child: Child,
    url: String,
    log: PathBuf,
}

impl Standin {
    fn start(dir: &Path, answer: &str) -> Standin {
        let log = dir.join("llm-requests.jsonl");
        let mut child = Command::new("python3")
            .arg(repo_root().join("tests/llm_edit_standin.py"))
            .args(["--answer", answer, "--log"])
            .arg(&log)
            .stdout(Stdio::piped())
            .spawn()
            .expect("start tests/llm_edit_standin.py");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("stand-in");
        let port: u16 = line
            .trim()
            .strip_prefix("listening ")
            .and_then(|p| p.parse().ok())
            .unwrap_or_else(|| panic!("stand-in said {line:?}"));
        Standin {
            child,
            url: format!("http://127.0.0.1:{port}"),
            log,
        }
    }

    /// The user messages of the edit requests so far (the warm-up's cleanup excluded).
    fn edit_requests(&self) -> Vec<String> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter_map(|v| {
                let msgs = v["messages"].as_array()?.clone();
                let user = msgs.iter().rev().find(|m| m["role"] == "user")?;
                let text = user["content"].as_str()?.to_string();
                text.contains("<selection>").then_some(text)
            })
            .collect()
    }
}

impl Drop for Standin {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn edit_config(url: &str, llm: bool) -> String {
    format!(
        "[llm]\nenabled = {llm}\nbackend = \"openai\"\nurl = \"{url}\"\nmodel = \"edit-standin\"\n\n[edit]\nenabled = true\n"
    )
}

#[test]
fn edit_mode_replaces_the_selection_and_refuses_clearly() {
    if !(tools_present() && speech::tools()) {
        return;
    }
    let Some(py) = gtk_python() else {
        return;
    };
    let clips = tempfile::tempdir().expect("tempdir");
    let instruction = speak(clips.path(), "formal", "Make this more formal.");
    let silence = clips.path().join("silence.wav");
    common::write_wav(&silence, &vec![0.0; 16_000 * 3 / 2]);

    let live = Live::start().expect("tools checked above");
    let (x, dir) = (&live.x, live.path());
    let llm = Standin::start(dir, ANSWER);
    live.append_config(&edit_config(&llm.url, true));
    let mut d = live.daemon();

    // Nothing selected: refused at the press, nothing recorded, the box as it was.
    {
        let plain = TextBox::start(x, py, dir, "Nothing is selected here.", false);
        d.send("edit-press");
        d.wait_notice("nothing is selected");
        d.send("edit-release");
        d.no_dictation(Duration::from_millis(1500));
        assert_eq!(plain.text(), "Nothing is selected here.");
    }

    // The edit: the selection replaced by the answer.
    let tb = TextBox::start(x, py, dir, ORIGINAL, true);
    let ev = dictate(x, &mut d, EDIT_KEY, &instruction, 300);
    assert_eq!(ev["outcome"], "ok", "{ev}");
    assert_eq!(ev["text"], ANSWER, "{ev}");
    assert_eq!(tb.wait_for(ANSWER), ANSWER, "{ev}");
    let sent = llm.edit_requests();
    assert_eq!(sent.len(), 1, "{sent:?}");
    assert!(sent[0].contains(ORIGINAL), "{sent:?}");
    assert!(sent[0].to_lowercase().contains("formal"), "{sent:?}");

    let id = ev["id"].as_i64().expect("row id");
    let history =
        dictum_engine::store::History::open(&dir.join("history.sqlite3")).expect("history");
    let row = history.get(id).expect("read row").expect("row");
    let edit = history.edit_of(id).expect("read edit").expect("mode edit");
    assert_eq!(edit.selection, ORIGINAL);
    assert_eq!(edit.selection_chars, ORIGINAL.chars().count() as i64);
    let said = row.raw_text.clone().unwrap_or_default().to_lowercase();
    assert!(said.contains("formal"), "the instruction: {row:?}");
    assert_eq!(row.text.as_deref(), Some(ANSWER));
    assert_eq!(row.llm_error, None, "{row:?}");
    assert_eq!(row.llm_backend.as_deref(), Some("openai"), "{row:?}");
    assert!(row.llm_ms.is_some_and(|ms| ms > 0.0), "{row:?}");
    // `dictum history` shows it as an edit.
    let listed = Command::new(env!("CARGO_BIN_EXE_dictum"))
        .args(["history", "--limit", "1"])
        .env("DICTUM_DATA_DIR", dir)
        .env("DICTUM_CONFIG", dir.join("config.toml"))
        .output()
        .expect("dictum history");
    let listed = String::from_utf8_lossy(&listed.stdout);
    assert!(
        listed.contains(&format!("edit of {} chars", ORIGINAL.chars().count())),
        "{listed}"
    );
    // The original is on the clipboard, and the box's own undo brings it back.
    assert_eq!(x.clipboard().as_deref(), Some(ORIGINAL));
    let mut undos = 0;
    while tb.text() != ORIGINAL && undos < 20 {
        x.xdotool(&["key", "--clearmodifiers", "ctrl+z"]);
        undos += 1;
        std::thread::sleep(Duration::from_millis(150));
    }
    assert_eq!(tb.text(), ORIGINAL, "Ctrl+Z x{undos}");
    eprintln!("Ctrl+Z pressed {undos} times");

    // Silence: no instruction, nothing typed.
    x.xdotool(&["key", "ctrl+a"]);
    std::thread::sleep(Duration::from_millis(200));
    let ev = dictate(x, &mut d, EDIT_KEY, &silence, 100);
    assert_eq!(ev["outcome"], "no_speech", "{ev}");
    d.wait_notice("no instruction was heard");
    assert_eq!(llm.edit_requests().len(), 1, "no request for silence");
    std::thread::sleep(Duration::from_millis(300));
    assert_eq!(tb.text(), ORIGINAL);

    // No LLM: refused at the press.
    d.write_config(&edit_config(&llm.url, false));
    d.wait_notice("config applied");
    d.send("edit-press");
    d.wait_notice("no LLM is set up");
    d.send("edit-release");
    d.no_dictation(Duration::from_millis(1500));
    assert_eq!(tb.text(), ORIGINAL);
    assert_eq!(llm.edit_requests().len(), 1);
    drop(tb);

    a_long_answer_stops_when_the_focus_moves(x, py, &mut d, &instruction);
}

/// Issue 38: an answer of 60 lines, Return between them (`[edit] type_newlines`), typed into
/// the box; the focus moves to an xterm mid-typing, then Escape: typing stops, no Return
/// reaches the xterm (its `cat` writes a line only at a Return), the row says it stopped.
fn a_long_answer_stops_when_the_focus_moves(x: &Xvfb, py: &str, d: &mut Daemon, said: &Path) {
    let dir = tempfile::tempdir().expect("tempdir");
    let answer: Vec<String> = (1..=60)
        .map(|i| format!("Line {i} of the long answer, typed one line after the other."))
        .collect();
    let llm = Standin::start(dir.path(), &answer.join("\n"));
    d.write_config(&format!(
        "{}type_newlines = true\n",
        edit_config(&llm.url, true)
    ));
    d.wait_notice("config applied");
    // The answer's budget is 4 x (selection + instruction) + 400 characters.
    let selection = "The old text of this note, to be rewritten. ".repeat(30);
    let xterm = common::x11::Xterm::start_as(x, "Dictum xterm", "XTerm", "80x10+0+420");
    // The box takes the pointer (the focus: no window manager).
    let tb = TextBox::start(x, py, dir.path(), selection.trim_end(), true);
    x.xdotool(&["keydown", EDIT_KEY]);
    std::thread::sleep(Duration::from_millis(100));
    play_file_and_wait(said);
    std::thread::sleep(Duration::from_millis(300));
    x.xdotool(&["keyup", EDIT_KEY]);
    // Mid-typing: a few lines in the box, then the focus goes to the xterm, then Escape.
    let deadline = Instant::now() + Duration::from_secs(60);
    while tb.text().matches('\n').count() < 3 && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    let at_move = tb.text().matches('\n').count();
    assert!(at_move >= 3, "typing did not start: {:?}", d.notices);
    xterm.point_at(x);
    x.xdotool(&["key", "Escape"]);
    let ev = d.next("dictation", Duration::from_secs(60));
    eprintln!("long answer, {at_move} lines when the focus moved: {ev}");
    std::thread::sleep(Duration::from_millis(1000));
    let error = ev["inject_error"].as_str().unwrap_or_default();
    assert!(error.contains("typing stopped"), "{ev}");
    let lines = tb.text().matches('\n').count();
    assert!(
        lines < 59,
        "typing stopped early: {lines} line breaks in the box"
    );
    assert!(
        !std::fs::read_to_string(&xterm.file)
            .unwrap_or_default()
            .contains('\n'),
        "no Return reached the xterm: {ev}"
    );
}
