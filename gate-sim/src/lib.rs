//! gate-sim: an independent reference model of RiskGate, differential fuzzing of the compiled
//! contract against it (in revm and on anvil), a hostile answer corpus, and an adversarial
//! market simulator. The reference model is written from the specification; it must never be
//! "fixed" to match the contract without deciding from the specification which side is right.

pub mod abi;
pub mod artifact;
pub mod bench;
pub mod corpus;
pub mod diff;
pub mod evm;
pub mod forge;
pub mod model;
pub mod sim;
pub mod strategies;
