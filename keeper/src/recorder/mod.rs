//! Recorder: decodes the gate's `Decision`, `Settled` and `WrittenOff` events into feed rows,
//! keeps the keeper's own notes (provider, model, scenario, the whole answer) and off-chain
//! failure rows beside them, and writes `feed.jsonl`, `RESULTS.md` and the SVG chart atomically. Everything that
//! comes from chain can be rebuilt from chain alone (`keeper report`).

pub mod adversary;
pub mod chart;
pub mod feed;
pub mod markdown;

pub use feed::{Annotation, DecisionRow, FeedRow, OffchainRow, RowNote};
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum RecordError {
    #[error("writing {path}: {reason}")]
    Write { path: PathBuf, reason: String },
    #[error("reading {path}: {reason}")]
    Read { path: PathBuf, reason: String },
    #[error("chain read failed: {0}")]
    Chain(String),
    #[error("chart: {0}")]
    Chart(String),
}

pub type Result<T> = std::result::Result<T, RecordError>;

/// Writes `bytes` to `path` through a temporary file in the same directory and a rename, so a
/// crash leaves either the old file or the new one, never half of one.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    use std::io::Write;
    let err = |reason: String| RecordError::Write { path: path.to_path_buf(), reason };
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| err(e.to_string()))?;
    let mut tmp = tempfile::Builder::new()
        .prefix(".keeper-")
        .suffix(".tmp")
        .tempfile_in(dir)
        .map_err(|e| err(e.to_string()))?;
    tmp.write_all(bytes).map_err(|e| err(e.to_string()))?;
    tmp.as_file().sync_all().map_err(|e| err(e.to_string()))?;
    // Published files are world-readable (the temp file starts as 0600).
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o644))
            .map_err(|e| err(e.to_string()))?;
    }
    tmp.persist(path).map_err(|e| err(e.to_string()))?;
    Ok(())
}

/// Output file names inside the results directory.
pub const FEED_FILE: &str = "feed.jsonl";
pub const RESULTS_FILE: &str = "RESULTS.md";
pub const CHART_FILE: &str = "decisions.svg";
