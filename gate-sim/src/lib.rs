//! gate-sim: an independent reference model of RiskGate v2.1 (and of an attested gate's
//! judgment, issue 35), differential fuzzing of the
//! compiled contract against it (in revm and on anvil), a hostile answer corpus, a market-model
//! simulator and the attacks of issues 7 and 14 run against the reference and the compiled
//! contracts. The
//! reference model is written from the specification; it must never be "fixed" to match the
//! contract without deciding from the specification which side is right.

pub mod abi;
pub mod adversary;
pub mod artifact;
pub mod attested;
pub mod bench;
pub mod checks;
pub mod corpus;
pub mod diff;
pub mod evm;
pub mod fixtures;
pub mod forge;
pub mod ledger;
pub mod model;
pub mod sim;
pub mod strategies;
pub mod venue;
pub mod world;
