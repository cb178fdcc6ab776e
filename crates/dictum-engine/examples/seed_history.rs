//! Seeds a history database with demo rows (tests, screenshots, the tray app's Xvfb test).
//! Usage: cargo run -p dictum-engine --example seed_history -- PATH.sqlite3 [COUNT] [DAYS]

fn main() -> anyhow::Result<()> {
    let mut args = std::env::args().skip(1);
    let path = args
        .next()
        .ok_or_else(|| anyhow::anyhow!("usage: seed_history PATH.sqlite3 [COUNT] [DAYS]"))?;
    let count: usize = args
        .next()
        .map(|s| s.parse())
        .transpose()?
        .unwrap_or(10_000);
    let days: u32 = args.next().map(|s| s.parse()).transpose()?.unwrap_or(60);
    let history = dictum_engine::store::History::open(std::path::Path::new(&path))?;
    let mut rows =
        dictum_engine::store::demo::entries(count, days, dictum_engine::store::now_ms(), 1);
    history.insert_batch(&mut rows)?;
    println!("seeded {count} entries into {path}");
    Ok(())
}
