//! `keeper run`'s arguments, and the model and sampling options they choose.

use super::*;

/// [`ResponseFormat`] as `--response-format` parses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ResponseFormatArg {
    /// A JSON schema with an object root, `{"verdict": "BUY_UP" | "BUY_DOWN" | "ABSTAIN"}`; the
    /// keeper submits the `verdict` string, or the whole content when it is not that object.
    Object,
    /// A JSON schema whose root is the verdict string itself; the content is submitted whole.
    String,
    /// No `response_format` at all: the prompt alone asks for the verdict.
    None,
}

impl From<ResponseFormatArg> for ResponseFormat {
    fn from(f: ResponseFormatArg) -> Self {
        match f {
            ResponseFormatArg::Object => ResponseFormat::Object,
            ResponseFormatArg::String => ResponseFormat::String,
            ResponseFormatArg::None => ResponseFormat::None,
        }
    }
}

/// Which inference provider answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum ModelKind {
    /// Deterministic rule-based strategy over the rendered book; needs no network.
    Builtin,
    /// Any OpenAI-compatible /v1/chat/completions endpoint (API key from KEEPER_OPENAI_API_KEY).
    Openai,
    /// The bundled SmolLM2-135M-Instruct (installed by `make bootstrap`), served by llama.cpp
    /// on 127.0.0.1 for this run and asked through the openai provider. Tiny: it proves the
    /// path, it does not trade well.
    Bundled,
    /// Answers read from --replay-file, one JSON-escaped string per line.
    Replay,
}

/// The model that answers and its sampling options, with the strategy text its prompt
/// carries: `keeper run`'s and `keeper attest`'s alike.
#[derive(Debug, clap::Args)]
pub struct ModelArgs {
    /// Inference provider.
    #[arg(long, value_enum, default_value_t = ModelKind::Builtin, env = "KEEPER_MODEL")]
    pub model: ModelKind,
    /// Base URL of the OpenAI-compatible server (e.g. http://127.0.0.1:8080).
    #[arg(long, env = "KEEPER_OPENAI_URL")]
    pub openai_url: Option<String>,
    /// Model name sent to the OpenAI-compatible server.
    #[arg(long, env = "KEEPER_OPENAI_MODEL")]
    pub openai_model: Option<String>,
    /// Most tokens the model may produce per answer (reasoning models need room to think).
    #[arg(long, default_value_t = 256, env = "KEEPER_MAX_TOKENS")]
    pub max_tokens: u32,
    /// Sampling temperature (0 = as deterministic as the server allows).
    #[arg(long, default_value_t = 0.0, env = "KEEPER_TEMPERATURE")]
    pub temperature: f32,
    /// Sampling seed sent with every request (default: none for --model openai, 1 for
    /// --model bundled).
    #[arg(long, env = "KEEPER_SEED")]
    pub seed: Option<u64>,
    /// Constraint on the answer's shape: a JSON object {"verdict": ...}, the bare verdict string
    /// as a JSON schema, or none.
    #[arg(long, value_enum, default_value_t = ResponseFormatArg::Object, env = "KEEPER_RESPONSE_FORMAT")]
    pub response_format: ResponseFormatArg,
    /// File of answers for --model replay.
    #[arg(long)]
    pub replay_file: Option<PathBuf>,
    /// Strategy text appended to the fixed system prompt (recorded by hash in every row).
    #[arg(long)]
    pub strategy: Option<PathBuf>,
    /// CPU threads of the bundled model's server (--model bundled; default: the kit's, 2):
    /// several servers on one machine (attestors, say) share its cores better with one each.
    #[arg(long, env = "KEEPER_MODEL_THREADS")]
    pub model_threads: Option<u32>,
    /// Request slots of the bundled model's server (--model bundled; default 1): the keeper
    /// keeps as many asks in flight. More slots pay on a machine with cores to spare beyond
    /// the model's threads; `keeper bench --model-only` measures one against one per core.
    #[arg(long, env = "KEEPER_MODEL_SLOTS")]
    pub model_slots: Option<u32>,
    /// Seconds to wait for one inference answer.
    #[arg(long, default_value_t = 30)]
    pub inference_timeout_secs: u64,
}

impl ModelArgs {
    /// The sampling options, checked.
    pub fn inference_options(&self) -> Result<InferenceOptions> {
        if self.max_tokens == 0 {
            return Err(ConfigError::ZeroMaxTokens);
        }
        if !(self.temperature.is_finite() && (0.0..=2.0).contains(&self.temperature)) {
            return Err(ConfigError::BadTemperature(self.temperature));
        }
        Ok(InferenceOptions {
            max_tokens: self.max_tokens,
            temperature: self.temperature,
            response_format: self.response_format.into(),
            seed: self.seed,
        })
    }

    /// The provider, checked.
    pub fn to_config(&self) -> Result<ModelConfig> {
        Ok(match self.model {
            ModelKind::Builtin => ModelConfig::Builtin,
            ModelKind::Openai => ModelConfig::OpenAi {
                base_url: openai_url(self.openai_url.as_deref())?,
                model: self.openai_model.clone().ok_or(ConfigError::MissingOpenAiModel)?,
                options: self.inference_options()?,
            },
            ModelKind::Bundled => {
                let mut options = self.inference_options()?;
                options.seed = options.seed.or(Some(BUNDLED_SEED));
                if self.model_threads == Some(0) {
                    return Err(ConfigError::ZeroModelThreads);
                }
                if self.model_slots == Some(0) {
                    return Err(ConfigError::ZeroModelSlots);
                }
                let (threads, slots) = (self.model_threads, self.model_slots);
                ModelConfig::Bundled { options, threads, slots }
            }
            ModelKind::Replay => ModelConfig::Replay {
                path: self.replay_file.clone().ok_or(ConfigError::MissingReplayFile)?,
            },
        })
    }

    /// The strategy text (empty without --strategy).
    pub fn strategy_text(&self) -> Result<String> {
        match &self.strategy {
            Some(path) => std::fs::read_to_string(path).map_err(|source| ConfigError::ReadFile {
                flag: "--strategy",
                path: path.clone(),
                source,
            }),
            None => Ok(String::new()),
        }
    }

    /// `--inference-timeout-secs`, checked: 0 is refused (it would otherwise run as some
    /// other value, unsaid).
    pub fn inference_timeout(&self) -> Result<Duration> {
        match self.inference_timeout_secs {
            0 => Err(ConfigError::ZeroInferenceTimeout),
            secs => Ok(Duration::from_secs(secs)),
        }
    }
}

#[derive(Debug, clap::Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub chain: ChainArgs,
    #[command(flatten)]
    pub key: KeyArgs,
    #[command(flatten)]
    pub gate: GateArgs,
    #[command(flatten)]
    pub model: ModelArgs,
    /// Seconds of chain time before the same market is asked again.
    #[arg(long, default_value_t = 3600)]
    pub reask_secs: u64,
    /// The quote's slippage: the worst price accepted is the price the model was shown for the
    /// chosen side plus this many basis points of it (rounded up). The gate only tightens with it.
    #[arg(long, default_value_t = 50, env = "KEEPER_SLIPPAGE_BPS")]
    pub slippage_bps: u32,
    /// The quote's deadline: chain seconds after the book read during which the answer may
    /// still execute; later, the gate refuses it (reason 16).
    #[arg(long, default_value_t = 60, env = "KEEPER_VERDICT_TTL_SECS")]
    pub verdict_ttl_secs: u64,
    /// Seconds to sleep between cycles.
    #[arg(long, default_value_t = 15)]
    pub interval_secs: u64,
    /// Run one cycle and exit.
    #[arg(long)]
    pub once: bool,
    /// Simulate every call (eth_call) and send nothing; results/ is not touched.
    #[arg(long)]
    pub dry_run: bool,
    #[command(flatten)]
    pub scan: LogScanArgs,
    /// Markets read and asked concurrently.
    #[arg(long, default_value_t = 32)]
    pub concurrency: usize,
    /// Directory the feed, RESULTS.md and the submission journal are written to (default:
    /// results/<chain-id>/<gate>/, so no two gates or chains ever share one; `results/` itself
    /// belongs to `make demo`).
    #[arg(long, env = "KEEPER_RESULTS")]
    pub results: Option<PathBuf>,
    #[command(flatten)]
    pub confirmations: ConfirmationsArgs,
    /// Seconds a pending transaction may wait for inclusion before it is re-sent at the same
    /// nonce with bumped fees.
    #[arg(long, default_value_t = 30, env = "KEEPER_RESEND_AFTER_SECS")]
    pub resend_after_secs: u64,
    /// The most decisions sent in one `submitVerdicts` transaction (1: one transaction per
    /// answer). A relayed gate's answers that arrive within --batch-window-ms of each other go
    /// out together, as many as fit half the block gas limit.
    #[arg(long, default_value_t = crate::engine::DEFAULT_BATCH_MAX, env = "KEEPER_BATCH_MAX")]
    pub batch_max: usize,
    /// Milliseconds an answer is held for others to join its batch (0: each is sent as it
    /// arrives).
    #[arg(long, default_value_t = crate::engine::DEFAULT_BATCH_WINDOW.as_millis() as u64, env = "KEEPER_BATCH_WINDOW_MS")]
    pub batch_window_ms: u64,
    /// Give up (exit non-zero, every row on disk) when the node stays unreachable this many
    /// seconds; without it an outage is waited out with a bounded backoff.
    #[arg(long, env = "KEEPER_MAX_OUTAGE_SECS")]
    pub max_outage_secs: Option<u64>,
    /// An attested gate's attestor, as the base URL of its `keeper attest` (repeat the flag,
    /// or a comma-separated KEEPER_ATTESTORS): every one is asked about each due market at
    /// once, and the answers go out once k agree. Not for a relayed gate.
    #[arg(long = "attestor", env = "KEEPER_ATTESTORS", value_delimiter = ',')]
    pub attestors: Vec<String>,
    /// Seconds each attestor is given to answer one ask.
    #[arg(long, default_value_t = 30, env = "KEEPER_ATTESTOR_TIMEOUT_SECS")]
    pub attestor_timeout_secs: u64,
    /// Submit an attested answer only once every attestor has answered, refused or timed out,
    /// not as soon as k agree: slower by the slowest attestor, and every vote holds every
    /// answer given, whoever answered first.
    #[arg(long, env = "KEEPER_ATTESTOR_WAIT_ALL")]
    pub attestor_wait_all: bool,
}

impl RunArgs {
    pub fn to_config(&self) -> Result<RunConfig> {
        let chain = self.chain.to_config()?;
        let model = self.model.to_config()?;
        let strategy_text = self.model.strategy_text()?;
        if self.reask_secs == 0 {
            return Err(ConfigError::ZeroReask);
        }
        if self.slippage_bps > 10_000 {
            return Err(ConfigError::SlippageTooLarge(self.slippage_bps));
        }
        if self.verdict_ttl_secs == 0 {
            return Err(ConfigError::ZeroVerdictTtl);
        }
        if self.batch_max == 0 {
            return Err(ConfigError::ZeroBatchMax);
        }
        let inference_timeout = self.model.inference_timeout()?;
        let attestors = attestor_urls(&self.attestors)?;
        if self.attestor_timeout_secs == 0 {
            return Err(ConfigError::ZeroAttestorTimeout);
        }
        Ok(RunConfig {
            chain,
            keystore: self.key.keystore.clone(),
            model,
            strategy_text,
            reask_secs: self.reask_secs,
            quote: QuotePolicy { slippage_bps: self.slippage_bps, ttl_secs: self.verdict_ttl_secs },
            interval: Duration::from_secs(self.interval_secs),
            inference_timeout,
            once: self.once,
            dry_run: self.dry_run,
            from_block: self.scan.from_block,
            log_range: self.scan.log_range.max(1),
            concurrency: self.concurrency.max(1),
            results: self.results.as_deref().map(from_cwd),
            confirmations: self.confirmations.confirmations,
            resend_after: Duration::from_secs(self.resend_after_secs.max(1)),
            batch_max: self.batch_max,
            batch_window: Duration::from_millis(self.batch_window_ms),
            max_outage: self.max_outage_secs.map(Duration::from_secs),
            gate: self.gate.gate,
            attestors,
            attestor_timeout: Duration::from_secs(self.attestor_timeout_secs),
            attestor_wait_all: self.attestor_wait_all,
        })
    }
}

/// `--openai-url`, checked: it must parse, and be http or https (a malformed one would
/// otherwise turn every due market into an off-chain row while the breaker opens).
fn openai_url(raw: Option<&str>) -> Result<String> {
    let raw = raw.ok_or(ConfigError::MissingOpenAiUrl)?;
    let url: reqwest::Url =
        raw.parse().map_err(|source| ConfigError::BadOpenAiUrl { url: raw.to_string(), source })?;
    http_only("--openai-url", OPENAI_EXAMPLE, url)?;
    Ok(raw.to_string())
}
