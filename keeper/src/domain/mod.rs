//! The domain layer: the values every other layer passes around and the plumbing they share.
//! It owns the decision values (a row, its id, its annotation, a submission), the configuration
//! values (what the commands parse into and the engine runs on), how amounts, prices, times and
//! outside text are formatted, atomic file writes, the log setup, and whose fault a failure is (the exit code). Nothing here reads the
//! chain, asks a model or writes the record.
//!
//! May import: kit.

pub mod config;
pub mod decision;
pub mod exit;
pub mod format;
pub mod fs;
pub mod grid;
pub mod log;
