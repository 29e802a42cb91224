//! Whose a failure is, and so the `keeper` binary's exit code: a refusal of what the operator
//! gave (a flag's value, a URL, a missing setting, contradictory flags, a file that does not
//! parse, a key or an address that names the wrong thing, a gate in the wrong mode for the
//! command) exits 2, as clap's own usage errors do; a failure while running (a node down, a
//! transaction that failed, a disk that cannot be written) exits 1.
//!
//! Each error type says it once, for its own variants ([`Classify`]), by an exhaustive match
//! (a new variant must be classified to compile), and a wrapper asks the error it wraps: the
//! binary never reads an error's text to decide.

/// Whose a failure is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// The operator's input or configuration: the same command would fail the same way until
    /// it is changed. Exit code 2.
    Input,
    /// Something failed while running (the node, a transaction, the disk, a model server):
    /// the same command may succeed later. Exit code 1.
    Runtime,
}

impl Fault {
    /// The process exit code: 2 for [`Fault::Input`] (as for a usage error), 1 otherwise.
    pub fn exit_code(self) -> i32 {
        match self {
            Fault::Input => 2,
            Fault::Runtime => 1,
        }
    }
}

/// An error that knows whose fault it is.
pub trait Classify {
    fn fault(&self) -> Fault;
}

use crate::kit::{anvil::AnvilError, compile::CompileError};
use riskgate_kit::llm::LlmError;

/// Every configuration error is the operator's.
impl Classify for super::config::ConfigError {
    fn fault(&self) -> Fault {
        Fault::Input
    }
}

/// A malformed `KEEPER_LOG` / `RUST_LOG` is the operator's; a logger already installed is not.
impl Classify for super::log::LogError {
    fn fault(&self) -> Fault {
        match self {
            Self::BadFilter { .. } => Fault::Input,
            Self::AlreadySet(_) => Fault::Runtime,
        }
    }
}

/// The pinned toolchain's anvil: a failure to run it is the installation's, not a flag's.
impl Classify for AnvilError {
    fn fault(&self) -> Fault {
        Fault::Runtime
    }
}

/// Compiling the contracts: the repository's and the toolchain's, not a flag's.
impl Classify for CompileError {
    fn fault(&self) -> Fault {
        Fault::Runtime
    }
}

/// The bundled model's server: `make bootstrap`'s, except an option given as 0.
impl Classify for LlmError {
    fn fault(&self) -> Fault {
        match self {
            Self::Option { .. } => Fault::Input,
            Self::Lock { .. }
            | Self::MissingServer { .. }
            | Self::MissingScript { .. }
            | Self::MissingModel { .. }
            | Self::ModelSize { .. }
            | Self::TempDir(_)
            | Self::Spawn { .. }
            | Self::Exited { .. }
            | Self::NotReady { .. } => Fault::Runtime,
        }
    }
}
