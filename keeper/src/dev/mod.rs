//! The dev layer: what the bot does not need. The demo that writes the published record, the
//! benchmark (one module per figure), the funded test world the integration tests share, and a
//! small WebDriver client for the browser tests. Built only with the `dev` feature, so the
//! production library and binary carry none of it.
//!
//! May import: commands, engine, chain, inference, record, domain, kit.

pub mod bench;
pub mod browser;
pub mod demo;
pub mod steps;
pub mod world;
