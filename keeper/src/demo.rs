//! placeholder
use crate::cli::DemoArgs;
use std::path::Path;
use tokio_util::sync::CancellationToken;
#[derive(Debug, thiserror::Error)]
pub enum DemoError {
    #[error("demo: {0}")]
    Step(String),
}
pub async fn run(_a: &DemoArgs, _root: &Path, _c: CancellationToken) -> Result<(), DemoError> {
    Ok(())
}
