//! Files the keeper publishes, written whole or not at all: the record, the saved deployment.

use std::path::{Path, PathBuf};

/// A file that could not be written; the old one, if any, is untouched.
#[derive(Debug, thiserror::Error)]
#[error("writing {path}")]
pub struct WriteError {
    pub path: PathBuf,
    #[source]
    pub source: std::io::Error,
}

/// Writes `bytes` to `path` through a temporary file in the same directory and a rename, so a
/// crash leaves either the old file or the new one, never half of one.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), WriteError> {
    use std::io::Write;
    let err = |source: std::io::Error| WriteError { path: path.to_path_buf(), source };
    let dir = path.parent().filter(|p| !p.as_os_str().is_empty()).unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir).map_err(err)?;
    let mut tmp =
        tempfile::Builder::new().prefix(".keeper-").suffix(".tmp").tempfile_in(dir).map_err(err)?;
    tmp.write_all(bytes).map_err(err)?;
    tmp.as_file().sync_all().map_err(err)?;
    // Published files are world-readable (the temp file starts as 0600).
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        tmp.as_file().set_permissions(std::fs::Permissions::from_mode(0o644)).map_err(err)?;
    }
    tmp.persist(path).map_err(|e| err(e.error))?;
    Ok(())
}
