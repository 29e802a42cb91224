//! The kit layer: `riskgate_kit`, the plumbing the keeper shares with gate-sim (the contracts'
//! bindings and revert decoding, the contracts compiled with foundry.toml's settings, a spawned
//! anvil, the bundled model's server), re-exported under one name.
//!
//! May import: nothing of the keeper.

pub use riskgate_kit::{anvil, bindings, compile};
