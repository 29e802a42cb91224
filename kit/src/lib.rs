//! riskgate-kit: the plumbing the keeper and gate-sim share, so both talk to the contracts, read
//! their reverts, run anvil and compile `contracts/src` the same way.
//!
//! - [`bindings`]: the contracts' ABI (`sol!` from the interface sources) and the gate's fixed
//!   vocabulary (reason codes, verdict codes, units).
//! - [`revert`]: a contract error decoded into the contracts' own error enums.
//! - [`anvil`]: a local anvil on loopback, with `--prune-history` unless history is asked for,
//!   its per-block state in a folder of its own that is removed when it stops, killed on drop.
//! - [`tied`]: child processes that get SIGKILL when the process that started them dies.
//! - [`compile`]: `contracts/src` compiled with every bytecode setting read from `foundry.toml`.
//! - [`llm`]: the bundled language model (`tools/llm.lock`) behind llama.cpp's OpenAI-compatible
//!   server, on loopback, waited for until `/health` answers, killed on drop.
//!
//! Nothing here models the gate: gate-sim's reference model is an independent reading of the
//! specification and must not use this crate's reason table.

pub mod anvil;
pub mod bindings;
pub mod compile;
pub mod llm;
pub mod revert;
pub mod tied;

use std::path::{Path, PathBuf};

/// The repository root as this crate was built in (the parent of `kit/`): for tests and tools
/// run from the work tree.
pub fn workspace_root() -> PathBuf {
    let manifest = Path::new(env!("CARGO_MANIFEST_DIR"));
    manifest.parent().map_or_else(|| manifest.to_path_buf(), Path::to_path_buf)
}
