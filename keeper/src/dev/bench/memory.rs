//! Peak RSS of `keeper run --once` over many markets, and anvil's temporary folder.

use super::*;

/// Entries and bytes under anvil's temporary folder (`~/.foundry/anvil/tmp`), where an anvil
/// that keeps history spills per-block state.
pub(super) fn anvil_tmp() -> (usize, u64) {
    fn walk(p: &Path, acc: &mut (usize, u64)) {
        let Ok(rd) = std::fs::read_dir(p) else { return };
        for e in rd.flatten() {
            acc.0 += 1;
            match e.metadata() {
                Ok(m) if m.is_dir() => walk(&e.path(), acc),
                Ok(m) => acc.1 += m.len(),
                Err(_) => {}
            }
        }
    }
    let mut acc = (0, 0);
    if let Some(home) = std::env::var_os("HOME") {
        walk(&Path::new(&home).join(".foundry/anvil/tmp"), &mut acc);
    }
    acc
}

/// Peak RSS (KiB, as the keeper logs it on exit) and wall seconds of `keeper run --once` over
/// the world's markets (all due).
pub(super) async fn peak_rss(w: &World, root: &Path, tmp: &Path) -> Result<(u64, f64)> {
    let r = super::history::run_once(w, root, tmp, &[]).await?;
    Ok((r.rss_kib, r.secs))
}

/// The report's section on memory.
pub(super) fn write_memory(md: &mut String, markets: usize, rss_kib: u64, rss_secs: f64) {
    let rss_mb = rss_kib as f64 / 1024.0;
    let _ = writeln!(md, "## Memory\n");
    let _ = writeln!(md, "Peak RSS of `keeper run --once` over {} markets, all due: **{rss_mb:.1} MB** ({rss_kib} KiB, its VmHWM as it logs it on exit (a parent's wait4 ru_maxrss would count the bench's own high-water mark, which a vfork-spawned child inherits); the run took {rss_secs:.1} s, process start included). Target <= 100 MB: {}.\n", markets, verdict(rss_mb <= 100.0));
}

/// The report's section on anvil's temporary folder.
pub(super) fn write_anvil_tmp(md: &mut String, tmp_before: (usize, u64), tmp_after: (usize, u64)) {
    let _ = writeln!(md, "## Anvil's temporary folder\n");
    let _ = writeln!(md, "`~/.foundry/anvil/tmp` before the bench: {} entries, {} bytes; after, with every anvil stopped: {} entries, {} bytes.\n", tmp_before.0, tmp_before.1, tmp_after.0, tmp_after.1);
}
