//! Strategies: market state in, one raw model answer out. The keeper renders the prompt
//! deterministically (same state, same bytes; its keccak is the `promptHash`) and asks one
//! provider. A provider's text is passed on exactly as it came back: nothing here filters,
//! trims or rewrites it, and a failed call is an error, never a default direction.

pub mod builtin;
pub mod openai;
pub mod prompt;
pub mod replay;

use crate::{collectors::MarketState, config::ModelConfig, recorder::feed::TransportDetail};
pub use prompt::Prompt;
use std::time::Duration;

/// Why no answer arrived. Only these become off-chain rows: an answer that arrived, whatever
/// it says (empty included), is submitted.
#[derive(Debug, thiserror::Error)]
pub enum InferenceError {
    #[error("cannot build the inference HTTP client")]
    Client(#[source] reqwest::Error),
    #[error("inference timed out after {after:?} (attempt {attempt})")]
    Timeout { after: Duration, attempt: u32 },
    #[error("inference HTTP {status} (attempt {attempt}): {}", crate::chain::short(.body))]
    Http { status: u16, body: String, retry_after: Option<Duration>, attempt: u32 },
    #[error("inference request failed (attempt {attempt})")]
    Transport {
        attempt: u32,
        #[source]
        source: reqwest::Error,
    },
    #[error("inference answer unreadable (HTTP {status}, attempt {attempt}): {reason}")]
    Malformed {
        status: u16,
        body: String,
        finish_reason: Option<String>,
        reason: String,
        attempt: u32,
    },
    #[error("replay file {path} has no answer left (used {used})")]
    ReplayExhausted { path: String, used: usize },
    #[error("cannot read replay file {path}")]
    ReplayFile {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("replay file {path} line {line} is not a JSON string")]
    ReplayLine {
        path: String,
        line: usize,
        #[source]
        source: serde_json::Error,
    },
}

impl InferenceError {
    /// What the off-chain row keeps about the failed exchange beyond its message.
    pub fn detail(&self) -> TransportDetail {
        match self {
            Self::Timeout { attempt, .. } | Self::Transport { attempt, .. } => {
                TransportDetail { attempt: Some(*attempt), ..TransportDetail::default() }
            }
            Self::Http { status, body, attempt, .. } => TransportDetail {
                http_status: Some(*status),
                body: Some(body.clone()),
                finish_reason: None,
                attempt: Some(*attempt),
            },
            Self::Malformed { status, body, finish_reason, attempt, .. } => TransportDetail {
                http_status: Some(*status),
                body: Some(body.clone()),
                finish_reason: finish_reason.clone(),
                attempt: Some(*attempt),
            },
            Self::Client(_)
            | Self::ReplayExhausted { .. }
            | Self::ReplayFile { .. }
            | Self::ReplayLine { .. } => TransportDetail::default(),
        }
    }
}

pub type Result<T> = std::result::Result<T, InferenceError>;

/// One inference provider.
#[derive(Debug)]
pub enum Model {
    Builtin,
    OpenAi(openai::OpenAiClient),
    Replay(replay::Replay),
}

impl Model {
    pub fn from_config(cfg: &ModelConfig, timeout: Duration) -> Result<Self> {
        Ok(match cfg {
            ModelConfig::Builtin => Self::Builtin,
            ModelConfig::OpenAi { base_url, model, options } => {
                Self::OpenAi(openai::OpenAiClient::new(base_url, model, timeout, *options)?)
            }
            ModelConfig::Replay { path } => Self::Replay(replay::Replay::from_file(path)?),
        })
    }

    /// Model (provider) name recorded in every row.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Builtin => "builtin",
            Self::OpenAi(_) => "openai",
            Self::Replay(_) => "replay",
        }
    }

    /// Model label recorded in every row; the builtin one says plainly that it is rule-based.
    pub fn model(&self) -> String {
        match self {
            Self::Builtin => builtin::MODEL_LABEL.to_string(),
            Self::OpenAi(c) => c.model().to_string(),
            Self::Replay(r) => format!("replay:{}", r.label()),
        }
    }

    /// Asks for one answer. The returned text is submitted as is.
    pub async fn ask(&self, prompt: &Prompt, state: &MarketState) -> Result<String> {
        match self {
            Self::Builtin => Ok(builtin::decide(state).to_string()),
            Self::OpenAi(c) => c.ask(prompt).await,
            Self::Replay(r) => r.next(),
        }
    }
}
