fn main() {
    // tauri::generate_context! embeds ../ui/dist at compile time. On a fresh checkout where the
    // UI was not built yet (`npm --prefix ui run build`, done by scripts/test and scripts/run),
    // put a page there that says so, so that `cargo check/clippy/test --workspace` still build.
    let dist = std::path::Path::new("../ui/dist");
    if !dist.join("index.html").exists() {
        let _ = std::fs::create_dir_all(dist);
        let _ = std::fs::write(
            dist.join("index.html"),
            "<!doctype html><title>Dictum</title><p>The UI was not built: run <code>npm --prefix ui ci &amp;&amp; npm --prefix ui run build</code>, then rebuild the app.</p>",
        );
    }
    tauri_build::build()
}
