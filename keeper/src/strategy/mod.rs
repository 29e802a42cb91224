//! Strategies: market state in, one raw model answer out. The keeper renders the prompt
//! deterministically (same state, same bytes; its keccak is the `promptHash`) and asks one
//! provider. A provider's text is passed on exactly as it came back: nothing here filters,
//! trims or rewrites it, and a failed call is an error, never a default direction.

pub mod builtin;
pub mod openai;
pub mod prompt;
pub mod replay;

use crate::{cli::ModelConfig, collectors::MarketState};
pub use prompt::Prompt;
use std::time::Duration;

#[derive(Debug, thiserror::Error)]
pub enum InferenceError {
    #[error("inference timed out after {0:?}")]
    Timeout(Duration),
    #[error("inference HTTP {status}: {body}")]
    Http { status: u16, body: String },
    #[error("inference transport error: {0}")]
    Transport(String),
    #[error("inference answer unreadable: {0}")]
    Malformed(String),
    #[error("inference returned an empty answer")]
    Empty,
    #[error("replay file {path} has no answer left (used {used})")]
    ReplayExhausted { path: String, used: usize },
    #[error("cannot read replay file {path}: {reason}")]
    ReplayFile { path: String, reason: String },
}

pub type Result<T> = std::result::Result<T, InferenceError>;

/// One inference provider.
#[derive(Debug)]
pub enum Provider {
    Builtin,
    OpenAi(openai::OpenAiClient),
    Replay(replay::Replay),
}

impl Provider {
    pub fn from_config(cfg: &ModelConfig, timeout: Duration) -> Result<Self> {
        Ok(match cfg {
            ModelConfig::Builtin => Self::Builtin,
            ModelConfig::OpenAi { base_url, model } => {
                Self::OpenAi(openai::OpenAiClient::new(base_url, model, timeout)?)
            }
            ModelConfig::Replay { path } => Self::Replay(replay::Replay::from_file(path)?),
        })
    }

    /// Provider name recorded in every row.
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
