//! Logging conventions, the same for every part of the keeper:
//!
//! - **Events** (what the bot is doing, warnings, failures) go through `tracing` to **stderr**,
//!   as text or one JSON object per line (`--log-format`, env `KEEPER_LOG_FORMAT`), each with an
//!   RFC 3339 UTC timestamp. The level filter comes from `KEEPER_LOG`, else `RUST_LOG`, else
//!   `info` (e.g. `KEEPER_LOG=keeper=debug`).
//! - **Results** a caller may pipe (the deploy JSON, `keeper market` JSON, dry-run JSON lines,
//!   the report summary) go to **stdout** with `println!`, never through the logger.
//! - Anything a model wrote is hostile: it enters a log event only as a `Debug` value
//!   (`answer = ?raw`, or `{raw:?}` in a message), so a newline, an ANSI escape or a fake log
//!   line inside an answer is escaped, never written raw. The JSON format escapes it again.
//! - Secrets (keys, API keys) never enter an event.
//! - A fatal error is one event, with its whole cause chain on one line ([`crate::error_chain`]);
//!   in JSON format it is one JSON object like every other line.

use tracing_subscriber::{fmt, EnvFilter};

/// How log events are written to stderr.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LogFormat {
    /// One human-readable line per event: `<timestamp> <LEVEL> <target>: <message> <fields>`.
    #[default]
    Text,
    /// One JSON object per event: `{"timestamp": …, "level": …, "message": …, "target": …, …}`.
    Json,
}

/// The environment variable read first for the level filter.
pub const LEVEL_VAR: &str = "KEEPER_LOG";
/// The conventional fallback for the level filter.
pub const FALLBACK_LEVEL_VAR: &str = "RUST_LOG";
/// The level when neither variable is set.
pub const DEFAULT_LEVEL: &str = "info";

#[derive(Debug, thiserror::Error)]
pub enum LogError {
    #[error("{var}={value:?} is not a log filter: use e.g. info, debug or keeper=debug,warn")]
    BadFilter {
        var: &'static str,
        value: String,
        #[source]
        source: tracing_subscriber::filter::ParseError,
    },
    #[error("a global logger is already installed")]
    AlreadySet(#[source] Box<dyn std::error::Error + Send + Sync + 'static>),
}

/// The level filter from `KEEPER_LOG`, else `RUST_LOG`, else `info`.
pub fn filter_from_env() -> Result<EnvFilter, LogError> {
    for var in [LEVEL_VAR, FALLBACK_LEVEL_VAR] {
        if let Ok(value) = std::env::var(var) {
            if value.trim().is_empty() {
                continue;
            }
            return EnvFilter::try_new(&value).map_err(|source| LogError::BadFilter {
                var,
                value,
                source,
            });
        }
    }
    Ok(EnvFilter::new(DEFAULT_LEVEL))
}

/// Installs the process-wide logger writing `format` to stderr. Timestamps are the system
/// clock in RFC 3339, UTC (`2025-01-02T03:04:05.678901Z`). No colour codes: stderr is often a
/// file or a journal.
pub fn init(format: LogFormat) -> Result<(), LogError> {
    let filter = filter_from_env()?;
    let builder = fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .with_target(true);
    let installed = match format {
        LogFormat::Text => builder.try_init(),
        LogFormat::Json => builder
            .json()
            .flatten_event(true)
            .with_current_span(false)
            .with_span_list(false)
            .try_init(),
    };
    installed.map_err(LogError::AlreadySet)
}
