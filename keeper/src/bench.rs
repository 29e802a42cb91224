//! placeholder
use crate::cli::BenchArgs;
use std::path::Path;
#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error("bench: {0}")]
    Step(String),
}
pub async fn run(_a: &BenchArgs, _root: &Path) -> Result<(), BenchError> {
    Ok(())
}
