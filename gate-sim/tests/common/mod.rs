//! Shared by the integration tests: the compiled gate, which `make test` builds with forge first,
//! and what the batch differentials share (each test binary uses only part of it).
#![allow(dead_code)]

/// `return Err(TestCaseError::fail(..))` unless the condition holds (proptest's `prop_assert!`
/// with a message that names the case).
macro_rules! ensure {
    ($cond:expr, $($arg:tt)+) => {
        if !$cond {
            return Err(proptest::test_runner::TestCaseError::fail(format!($($arg)+)));
        }
    };
}

pub mod batches;

use gate_sim::artifact::{self, GateArtifact};

pub fn gate_artifact() -> GateArtifact {
    let path = artifact::default_artifact_path();
    GateArtifact::load(&path).unwrap_or_else(|e| {
        panic!("{e}: the differential needs the compiled RiskGate (`make test` builds it first)")
    })
}
