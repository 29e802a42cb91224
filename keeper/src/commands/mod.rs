//! The commands layer: one module per `keeper` subcommand, each thin over the layers below.
//! [`cli`] parses the command line into the domain's configuration values; [`run`] drives the
//! engine as a long-lived bot; [`deploy`], [`fund`] and [`market`] send the owner's, a funder's
//! and a market creator's transactions; [`report`] re-derives the published record from chain and checks it;
//! [`serve`] is the floor, a read-only web view of one gate's record; [`attest`] is one
//! attestor of an attested gate.
//!
//! May import: engine, chain, inference, record, domain, kit.

pub mod attest;
pub mod cli;
pub mod deploy;
pub mod fund;
pub mod market;
pub mod report;
pub mod run;
pub mod serve;
