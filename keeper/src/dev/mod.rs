//! What the bot does not need: the demo that writes the published record, the benchmark, and the
//! funded test world they and the integration tests share. Built only with the `dev` feature, so
//! the production library and binary carry none of it.

pub mod bench;
pub mod browser;
pub mod demo;
pub mod steps;
pub mod world;
