//! The contracts compiled with `foundry.toml`'s settings, and the masked code check:
//! riskgate-kit's.
pub use riskgate_kit::compile::*;
