//! A local anvil: riskgate-kit's (loopback only, `--prune-history` unless history is asked for,
//! its state folder removed when it stops, killed on drop).
pub use riskgate_kit::anvil::*;
