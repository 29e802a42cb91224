//! The riskgate keeper: runs an agent against `RiskGate`, publishes the feed, and re-derives it
//! from chain. The keeper never decides a price or a size: the one number it sends, its quote
//! (the price the model was shown plus an operator-set slippage, and a deadline), can only
//! tighten what the gate does. It never filters or rewrites a model answer (the gate parses; a
//! bad answer becomes a published reason-11 row), and never invents a direction: when inference
//! fails nothing is submitted and the failure is an off-chain row. It asks only about markets
//! whose resolver the gate trusts, and writes off positions whose market never settles.

pub mod anvil;
pub mod bench;
pub mod bindings;
pub mod chain;
pub mod cli;
pub mod collectors;
pub mod compile;
pub mod demo;
pub mod deploy;
pub mod executor;
pub mod quote;
pub mod recorder;
pub mod report;
pub mod runner;
pub mod strategy;
pub mod world;
