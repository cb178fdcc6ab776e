//! URLs with credentials on the command line (`--llm-url`, `models download --base-url`) and in
//! the config file are refused before any request, with a one-line error that names the
//! setting, points to `llm.api_key_env`, and does not echo the password.

use std::process::{Command, Output};

fn dictum(dir: &std::path::Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_dictum"))
        .args(args)
        .env("DICTUM_DATA_DIR", dir.join("data"))
        .env("DICTUM_CONFIG", dir.join("config.toml"))
        .env("DICTUM_MODELS_DIR", dir.join("models"))
        .output()
        .expect("run dictum")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn credentials_in_urls_are_refused_everywhere() {
    let dir = tempfile::tempdir().expect("tempdir");
    // A listener that must never see a request.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    listener.set_nonblocking(true).expect("nonblocking");
    let port = listener.local_addr().expect("addr").port();
    let url = format!("http://me:hunter2@127.0.0.1:{port}");

    let o = dictum(dir.path(), &["clean", "--llm-url", &url, "hello", "there"]);
    let e = stderr(&o);
    assert!(!o.status.success(), "{e}");
    assert!(
        e.contains("llm.url") && e.contains("api_key_env") && !e.contains("hunter2"),
        "{e}"
    );

    let o = dictum(
        dir.path(),
        &["models", "download", "tiny.en-q8_0", "--base-url", &url],
    );
    let e = stderr(&o);
    assert!(!o.status.success(), "{e}");
    assert!(e.contains("password") && !e.contains("hunter2"), "{e}");

    std::fs::write(
        dir.path().join("config.toml"),
        format!("[llm]\nenabled = true\nurl = \"{url}\"\n"),
    )
    .expect("config");
    let o = dictum(dir.path(), &["config", "--check"]);
    let e = stderr(&o) + &String::from_utf8_lossy(&o.stdout);
    assert!(!o.status.success(), "{e}");
    assert!(e.contains("llm.url") && !e.contains("hunter2"), "{e}");

    assert!(listener.accept().is_err(), "a request reached the server");
}
