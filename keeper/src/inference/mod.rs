//! Strategies: market state in, one raw model answer out. The keeper renders the prompt
//! deterministically (same state, same bytes; its keccak is the `promptHash`) and asks one
//! provider. A provider's text is passed on exactly as it came back: nothing here filters,
//! trims or rewrites it, and a failed call is an error, never a default direction.
//!
//! The inference layer: the prompt's rendering ([`prompt`]) and the providers ([`builtin`]
//! rules, an OpenAI-compatible server in [`openai`] with the bundled model server's client, and
//! scripted [`replay`]), and an attested gate's [`attestors`] asked k of n.
//!
//! May import: chain, record, domain, kit.

pub mod attestors;
pub mod builtin;
pub mod openai;
pub mod prompt;
pub mod replay;

use crate::{
    chain::reads::MarketState, domain::config::ModelConfig, domain::decision::TransportDetail,
};
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
    #[error(
        "gave up after attempt {attempt}: a retry in {retry_in:?} would answer after the quote's \
         deadline, which the gate would refuse (reason 16); last: {last}"
    )]
    OutOfTime { attempt: u32, retry_in: Duration, last: Box<InferenceError> },
    #[error("not retried after attempt {attempt}: {why}; last: {last}")]
    NotRetried { attempt: u32, why: NotRetried, last: Box<InferenceError> },
    #[error("the bundled model is served by the keeper itself: start it with Model::start")]
    BundledNeedsServer,
    #[error("cannot start the bundled model's server")]
    Bundled(#[source] riskgate_kit::llm::LlmError),
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

impl crate::domain::exit::Classify for InferenceError {
    fn fault(&self) -> crate::domain::exit::Fault {
        use crate::domain::exit::Fault::{Input, Runtime};
        match self {
            // --replay-file names a file that cannot be read or does not parse.
            Self::ReplayFile { .. } | Self::ReplayLine { .. } => Input,
            Self::Bundled(e) => e.fault(),
            Self::Client(_)
            | Self::Timeout { .. }
            | Self::Http { .. }
            | Self::Transport { .. }
            | Self::Malformed { .. }
            | Self::OutOfTime { .. }
            | Self::NotRetried { .. }
            | Self::BundledNeedsServer
            | Self::ReplayExhausted { .. } => Runtime,
        }
    }
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
            Self::OutOfTime { last, .. } | Self::NotRetried { last, .. } => last.detail(),
            Self::Client(_)
            | Self::BundledNeedsServer
            | Self::Bundled(_)
            | Self::ReplayExhausted { .. }
            | Self::ReplayFile { .. }
            | Self::ReplayLine { .. } => TransportDetail::default(),
        }
    }
}

/// Why a 429 or 503 was not asked again, said in the off-chain row so an operator can tell a
/// server that is down from one that asked for a longer wait than the keeper gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NotRetried {
    /// The server's `Retry-After` is longer than the keeper ever waits before one retry.
    WaitTooLong { asked: Duration, most: Duration },
    /// Every attempt the keeper makes was used.
    AttemptsUsed { most: u32 },
}

impl std::fmt::Display for NotRetried {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::WaitTooLong { asked, most } => write!(
                f,
                "the server asked to wait {} s (Retry-After), longer than the {} s the keeper \
                 waits before a retry",
                asked.as_secs(),
                most.as_secs()
            ),
            Self::AttemptsUsed { most } => write!(f, "all {most} attempts were used"),
        }
    }
}

pub type Result<T> = std::result::Result<T, InferenceError>;

/// How an answer arrived: a chat completion's content, a tool call's arguments or a refusal's
/// text; or from the built-in rules or a replay file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Arrival {
    Content,
    ToolCall,
    Refusal,
    Rules,
    Replay,
}

impl Arrival {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Content => "content",
            Self::ToolCall => "tool_call",
            Self::Refusal => "refusal",
            Self::Rules => "rules",
            Self::Replay => "replay",
        }
    }
}

/// One answer, and what its provider said about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reply {
    /// Submitted exactly as it is.
    pub text: String,
    pub arrival: Arrival,
    /// The model the server said answered (a chat completion's `model` field), if it named one.
    pub served_model: Option<String>,
}

/// One inference provider.
#[derive(Debug)]
pub enum Model {
    Builtin,
    OpenAi(openai::OpenAiClient),
    Replay(replay::Replay),
}

impl Model {
    /// The provider `cfg` names. The bundled model needs its server: [`Model::start`].
    pub fn from_config(cfg: &ModelConfig, timeout: Duration) -> Result<Self> {
        Ok(match cfg {
            ModelConfig::Builtin => Self::Builtin,
            ModelConfig::OpenAi { base_url, model, options } => {
                Self::OpenAi(openai::OpenAiClient::new(base_url, model, timeout, *options)?)
            }
            ModelConfig::Bundled { .. } => return Err(InferenceError::BundledNeedsServer),
            ModelConfig::Replay { path } => Self::Replay(replay::Replay::from_file(path)?),
        })
    }

    /// The provider `cfg` names, ready to answer: for the bundled model, its server started on
    /// loopback from `root`'s toolchain (returned, so it lives as long as the caller holds it;
    /// dropping it stops the server); for any server, its own description of its models read
    /// once (`GET /v1/models`).
    pub async fn start(
        cfg: &ModelConfig,
        timeout: Duration,
        root: &std::path::Path,
    ) -> Result<(Self, Option<riskgate_kit::llm::LlmServer>)> {
        match cfg {
            ModelConfig::Bundled { options, threads, slots } => {
                let (client, server) =
                    openai::OpenAiClient::bundled(root, timeout, *options, *threads, *slots)
                        .await?;
                Ok((Self::OpenAi(client), Some(server)))
            }
            other => {
                let mut model = Self::from_config(other, timeout)?;
                if let Self::OpenAi(c) = &mut model {
                    c.describe().await;
                }
                Ok((model, None))
            }
        }
    }

    /// How many asks the provider answers at once, when it says (a llama.cpp server's slots).
    pub fn slots(&self) -> Option<usize> {
        match self {
            Self::OpenAi(c) => c.slots(),
            Self::Builtin | Self::Replay(_) => None,
        }
    }

    /// Model (provider) name recorded in every row.
    pub fn name(&self) -> &'static str {
        match self {
            Self::Builtin => "builtin",
            Self::OpenAi(_) => "openai",
            Self::Replay(_) => "replay",
        }
    }

    /// The label a row carries before its answer arrives (and when a server names no model):
    /// for a server, the name the keeper asked for. Once a server answers, the row names the
    /// model the server reported ([`Model::annotate`]).
    pub fn model(&self) -> String {
        match self {
            Self::Builtin => builtin::MODEL_LABEL.to_string(),
            Self::OpenAi(c) => c.model().to_string(),
            Self::Replay(r) => format!("replay:{}", r.label()),
        }
    }

    /// Fills in what `reply` says about who answered and how: the served model's name, what it
    /// is, its file's hash where known, and how the answer arrived.
    pub fn annotate(&self, note: &mut crate::domain::decision::Annotation, reply: &Reply) {
        note.arrival = Some(reply.arrival.as_str().to_string());
        match self {
            Self::Builtin => note.model_kind = Some("rules".into()),
            Self::Replay(_) => note.model_kind = Some("replay".into()),
            Self::OpenAi(c) => {
                let served = reply.served_model.as_deref();
                note.model = Some(match served {
                    Some(m) => m.to_string(),
                    None => format!("{} (the server named no model)", c.model()),
                });
                note.model_kind = Some(c.kind_of(served));
                note.model_sha256 = c.sha256_of(served);
            }
        }
    }

    /// Asks for one answer. Its text is submitted as is.
    pub async fn ask(&self, prompt: &Prompt, state: &MarketState) -> Result<Reply> {
        self.ask_until(prompt, state, None).await
    }

    /// [`Model::ask`], retrying a rate-limited or busy server only while the answer could still
    /// arrive before `until` (the quote's life, on the wall clock).
    pub async fn ask_until(
        &self,
        prompt: &Prompt,
        state: &MarketState,
        until: Option<std::time::Instant>,
    ) -> Result<Reply> {
        let local = |text: String, arrival| Reply { text, arrival, served_model: None };
        match self {
            Self::Builtin => Ok(local(builtin::decide(state).to_string(), Arrival::Rules)),
            Self::OpenAi(c) => c.ask_until(prompt, until).await,
            Self::Replay(r) => Ok(local(r.next()?, Arrival::Replay)),
        }
    }
}
