//! The keeper's checked configuration: what `keeper run`, `keeper deploy` and `keeper report`
//! act on, apart from how it was given (clap's argument structs in `cli` convert into these;
//! `keeper market`'s live beside its domain types, in [`crate::commands::market`]). Nothing here reads the
//! environment or holds a secret: keys are loaded later, by [`crate::chain`]. Nothing here knows
//! clap.

use alloy::primitives::Address;
use std::{path::PathBuf, time::Duration};

/// Configuration errors: each says what is wrong and how to fix it, in one line.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("--model-threads 0: the bundled model's server needs at least one thread")]
    ZeroModelThreads,
    #[error("--model-slots 0: the bundled model's server needs at least one request slot")]
    ZeroModelSlots,
    #[error("no RPC endpoint: pass --rpc-url or set KEEPER_RPC_URL (e.g. http://127.0.0.1:8545)")]
    MissingRpc,
    #[error("--rpc-url {url:?} is not a valid URL: use e.g. http://127.0.0.1:8545")]
    BadRpc {
        url: String,
        #[source]
        source: <reqwest::Url as std::str::FromStr>::Err,
    },
    #[error("{flag} {url:?} is not an http(s) URL (its scheme is {scheme:?}): use e.g. {example}")]
    NotHttp { flag: &'static str, url: String, scheme: String, example: &'static str },
    #[error("--model openai needs a base URL: pass --openai-url or set KEEPER_OPENAI_URL")]
    MissingOpenAiUrl,
    #[error("--openai-url {url:?} is not a valid URL: use e.g. http://127.0.0.1:8080")]
    BadOpenAiUrl {
        url: String,
        #[source]
        source: <reqwest::Url as std::str::FromStr>::Err,
    },
    #[error(
        "--root {} does not exist or is not a folder: the keeper keeps its state and record \
         there, and a mistyped root would start an empty one; create it on purpose \
         (mkdir -p {}) or pass the project's root",
        .0.display(), .0.display()
    )]
    MissingRoot(PathBuf),
    #[error("--model openai needs a model name: pass --openai-model or set KEEPER_OPENAI_MODEL")]
    MissingOpenAiModel,
    #[error("--model replay needs --replay-file FILE (one JSON-escaped answer per line)")]
    MissingReplayFile,
    #[error("{flag} {}: cannot read it; check the path", .path.display())]
    ReadFile {
        flag: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("--poll-ms must be at least 1 (milliseconds between two asks for a new head)")]
    ZeroPoll,
    #[error("--answer-ttl-secs must be > 0 (chain seconds after the read during which a signed answer may execute)")]
    ZeroAnswerTtl,
    #[error("--reask-secs must be > 0 (seconds of chain time between two asks of one market)")]
    ZeroReask,
    #[error("--trusted-resolver 0x0000000000000000000000000000000000000000 is the zero address: a gate can never trust it; pass the resolver's real address")]
    ZeroTrustedResolver,
    #[error("--trusted-resolver {0} is given twice: name each resolver once (script/Deploy.s.sol refuses duplicates too)")]
    DuplicateTrustedResolver(Address),
    #[error(
        "{count} distinct --trusted-resolver addresses, but a gate holds at most {max}: drop some"
    )]
    TooManyTrustedResolvers { count: usize, max: usize },
    #[error("no --trusted-resolver given: name at least one resolver the gate trusts (its markets' outcomes decide the gate's payouts); the deployer is no longer the default, since each role should have its own key")]
    MissingTrustedResolver,
    #[error("--trusted-creator 0x0000000000000000000000000000000000000000 is the zero address: a gate can never trust it; pass the market creator's real address")]
    ZeroTrustedCreator,
    #[error("--trusted-creator {0} is given twice: name each creator once (script/Deploy.s.sol refuses duplicates too)")]
    DuplicateTrustedCreator(Address),
    #[error(
        "{count} distinct --trusted-creator addresses, but a gate holds at most {max}: drop some"
    )]
    TooManyTrustedCreators { count: usize, max: usize },
    #[error("no --trusted-creator given: name at least one market creator the gate trusts (only markets it created are traded, rule 19); the deployer is no longer the default, since each role should have its own key")]
    MissingTrustedCreator,
    #[error("{0} is given without any --attestor-signer: a relayed gate has no attestor settings; name the attestors, or drop it")]
    AttestorSettingWithoutAttestors(&'static str),
    #[error("--attestor-signer {0} is given twice: name each attestor once (the gate counts an attestor once)")]
    DuplicateAttestor(Address),
    #[error("--slippage-bps {0} is above 10000 (100 %): the quote would not bound anything; use e.g. 50")]
    SlippageTooLarge(u32),
    #[error(
        "--verdict-ttl-secs must be > 0 (chain seconds an answer stays executable after the read)"
    )]
    ZeroVerdictTtl,
    #[error("--batch-max must be > 0 (the most decisions one transaction carries; 1 sends one per answer)")]
    ZeroBatchMax,
    #[error("--max-tokens must be > 0 (the most tokens one answer may use; e.g. 256)")]
    ZeroMaxTokens,
    #[error("--temperature {0} is outside 0..=2: use e.g. 0 for deterministic sampling")]
    BadTemperature(f32),
    #[error("--attestor {url:?} is not a valid URL: use e.g. {ATTESTOR_EXAMPLE}")]
    BadAttestorUrl {
        url: String,
        #[source]
        source: <reqwest::Url as std::str::FromStr>::Err,
    },
    #[error("--attestor {again:?} is the same attestor as --attestor {first:?} (both are {normal}): give each attestor once; a copy would count twice towards the gate's threshold at start and never in a vote")]
    DuplicateAttestorUrl { first: String, again: String, normal: String },
    #[error("--attestor-timeout-secs 0: each attestor needs time to answer; give the seconds one ask may take (e.g. 30)")]
    ZeroAttestorTimeout,
    #[error("--inference-timeout-secs 0: the model needs time to answer; give the seconds one answer may take (e.g. 30)")]
    ZeroInferenceTimeout,
}

pub type Result<T> = std::result::Result<T, ConfigError>;

/// Example endpoints the URL errors suggest.
pub const RPC_EXAMPLE: &str = "http://127.0.0.1:8545";
pub const OPENAI_EXAMPLE: &str = "http://127.0.0.1:8080";
pub const ATTESTOR_EXAMPLE: &str = "http://127.0.0.1:8650";

/// An attested gate's attestor URLs (`--attestor`, or KEEPER_ATTESTORS split at commas), checked
/// and in one spelling each: every one must be an http(s) URL; the scheme and host are
/// lower-cased and a default port dropped (as the URL parser does), and a trailing slash is
/// trimmed (the keeper appends `/attest`). Blank entries (a trailing comma) are skipped. One
/// attestor named twice, in any spelling, is refused: its two copies would count twice towards
/// the gate's threshold at start, and the keeper would then fall short of it on every market.
pub fn attestor_urls(given: &[String]) -> Result<Vec<String>> {
    let mut out: Vec<(String, &str)> = Vec::new();
    for raw in given.iter().map(|u| u.trim()).filter(|u| !u.is_empty()) {
        let url: reqwest::Url = raw
            .parse()
            .map_err(|source| ConfigError::BadAttestorUrl { url: raw.to_string(), source })?;
        let url = http_only("--attestor", ATTESTOR_EXAMPLE, url)?;
        let normal = url.as_str().trim_end_matches('/').to_string();
        if let Some((_, first)) = out.iter().find(|(n, _)| *n == normal) {
            return Err(ConfigError::DuplicateAttestorUrl {
                first: first.to_string(),
                again: raw.to_string(),
                normal,
            });
        }
        out.push((normal, raw));
    }
    Ok(out.into_iter().map(|(n, _)| n).collect())
}

/// `url` (given as `flag`) if its scheme is http or https: the keeper speaks HTTP(S) to nodes
/// and model servers alike, and any other scheme would only fail later, on every request.
pub fn http_only(
    flag: &'static str,
    example: &'static str,
    url: reqwest::Url,
) -> Result<reqwest::Url> {
    match url.scheme() {
        "http" | "https" => Ok(url),
        other => Err(ConfigError::NotHttp {
            flag,
            url: url.to_string(),
            scheme: other.to_string(),
            example,
        }),
    }
}

/// The project root, which must exist: a typo would otherwise start an empty state folder
/// beside the real one and split the keeper's journal in two.
pub fn existing_root(root: &std::path::Path) -> Result<()> {
    if root.is_dir() {
        Ok(())
    } else {
        Err(ConfigError::MissingRoot(root.to_path_buf()))
    }
}

pub use crate::kit::bindings::{MAX_TRUSTED_CREATORS, MAX_TRUSTED_RESOLVERS};

/// `given`, sorted; refuses an empty list, the zero address, a duplicate and more than 8
/// entries, so that both deploy paths (this and `script/Deploy.s.sol`) treat one list the same
/// way.
pub fn trusted_resolver_list(given: &[Address]) -> Result<Vec<Address>> {
    if given.is_empty() {
        return Err(ConfigError::MissingTrustedResolver);
    }
    if given.contains(&Address::ZERO) {
        return Err(ConfigError::ZeroTrustedResolver);
    }
    let mut list = given.to_vec();
    list.sort_unstable();
    if let Some(w) = list.windows(2).find(|w| w[0] == w[1]) {
        return Err(ConfigError::DuplicateTrustedResolver(w[0]));
    }
    if list.len() > MAX_TRUSTED_RESOLVERS {
        return Err(ConfigError::TooManyTrustedResolvers {
            count: list.len(),
            max: MAX_TRUSTED_RESOLVERS,
        });
    }
    Ok(list)
}

/// The trusted market creators, by the same rules as [`trusted_resolver_list`] (the
/// constructor's `_checkCreators` mirrors `_checkResolvers`), with the creators' own errors.
pub fn trusted_creator_list(given: &[Address]) -> Result<Vec<Address>> {
    if given.is_empty() {
        return Err(ConfigError::MissingTrustedCreator);
    }
    if given.contains(&Address::ZERO) {
        return Err(ConfigError::ZeroTrustedCreator);
    }
    let mut list = given.to_vec();
    list.sort_unstable();
    if let Some(w) = list.windows(2).find(|w| w[0] == w[1]) {
        return Err(ConfigError::DuplicateTrustedCreator(w[0]));
    }
    if list.len() > MAX_TRUSTED_CREATORS {
        return Err(ConfigError::TooManyTrustedCreators {
            count: list.len(),
            max: MAX_TRUSTED_CREATORS,
        });
    }
    Ok(list)
}

/// How the answer's shape is constrained on an OpenAI-compatible server (see
/// [`crate::inference::openai`] for what each server accepts).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ResponseFormat {
    /// A JSON schema with an object root, `{"verdict": "BUY_UP" | "BUY_DOWN" | "ABSTAIN"}`; the
    /// keeper submits the `verdict` string, or the whole content when it is not that object.
    #[default]
    Object,
    /// A JSON schema whose root is the verdict string itself; the content is submitted whole.
    String,
    /// No `response_format` at all: the prompt alone asks for the verdict.
    None,
}

/// Sampling and shape options sent with every inference request.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct InferenceOptions {
    pub max_tokens: u32,
    pub temperature: f32,
    pub response_format: ResponseFormat,
    /// Sent as the request's `seed` when set (llama.cpp, vLLM and OpenAI honour it).
    pub seed: Option<u64>,
}

impl Default for InferenceOptions {
    fn default() -> Self {
        Self {
            max_tokens: 256,
            temperature: 0.0,
            response_format: ResponseFormat::Object,
            seed: None,
        }
    }
}

/// Where the keeper's chain access points, checked.
#[derive(Debug, Clone)]
pub struct ChainConfig {
    pub rpc_url: reqwest::Url,
    pub expected_chain_id: Option<u64>,
}

/// The inference provider chosen, with everything it needs (the API key is read later, from
/// the environment, and never stored here).
#[derive(Debug, Clone)]
pub enum ModelConfig {
    Builtin,
    OpenAi {
        base_url: String,
        model: String,
        options: InferenceOptions,
    },
    /// The bundled SmolLM2-135M model, served by the keeper itself on loopback.
    Bundled {
        options: InferenceOptions,
        /// CPU threads of the server it starts (None: the kit's default).
        threads: Option<u32>,
        /// Request slots of the server it starts, each an ask answered at once (None: one, the
        /// faster on a small machine: `keeper bench --model-only`).
        slots: Option<u32>,
    },
    Replay {
        path: PathBuf,
    },
}

/// `keeper run`, checked.
#[derive(Debug, Clone)]
pub struct RunConfig {
    pub chain: ChainConfig,
    pub keystore: Option<PathBuf>,
    pub model: ModelConfig,
    pub strategy_text: String,
    pub reask_secs: u64,
    pub quote: QuotePolicy,
    pub interval: Duration,
    pub inference_timeout: Duration,
    pub once: bool,
    pub dry_run: bool,
    pub from_block: Option<u64>,
    pub log_range: u64,
    pub concurrency: usize,
    /// None: results/<chain-id>/<gate>/ under the project root, known once connected.
    pub results: Option<PathBuf>,
    /// None: 2 on a real network, 0 on a local dev chain (decided once the chain id is known).
    pub confirmations: Option<u64>,
    pub resend_after: Duration,
    /// The most decisions one `submitVerdicts` transaction carries (1: none batched).
    pub batch_max: usize,
    /// How long an answer is held for others to join its batch.
    pub batch_window: Duration,
    /// None: an outage is waited out, however long.
    pub max_outage: Option<Duration>,
    /// None: the gate saved in deployments/<chain-id>.json.
    pub gate: Option<Address>,
    /// An attested gate's attestors (`keeper attest` base URLs, as [`attestor_urls`] leaves
    /// them); empty for a relayed gate.
    pub attestors: Vec<String>,
    /// How long each attestor is given per ask.
    pub attestor_timeout: Duration,
    /// Wait for every attestor before submitting (not only until k agree).
    pub attestor_wait_all: bool,
}

/// What the saved deployment of the connected chain says (`deployments/<chain-id>.json`, or
/// the gate's own entry), read by the CLI layer and handed to `keeper run`: the gate it names
/// and its deploy block, if a file exists.
#[derive(Debug, Clone)]
pub struct SavedGate {
    pub found: Option<GateAt>,
}

/// A gate and the block it was deployed in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GateAt {
    pub gate: Address,
    pub deploy_block: u64,
}

/// The gate's bounds, fixed at deploy (prices in 1e6 units, sizes in collateral base units).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GateBounds {
    pub min_price: u64,
    pub max_price: u64,
    pub max_size: u64,
    pub min_headroom: u32,
    pub max_concurrent: u8,
    pub max_notional: u64,
    pub max_horizon: u32,
    pub max_drawdown: u64,
    pub write_off_grace: u32,
    pub min_fill_bps: u16,
}

/// `keeper deploy`, checked.
#[derive(Debug, Clone)]
pub struct DeployConfig {
    pub chain: ChainConfig,
    pub keystore: Option<PathBuf>,
    /// None: a TestCollateral is deployed (local chains).
    pub collateral: Option<Address>,
    /// None: a MarketFactory is deployed.
    pub factory: Option<Address>,
    /// None: the deployer. Never one of the trusted resolvers or creators (refused before
    /// anything is sent).
    pub keeper: Option<Address>,
    /// Strictly ascending and non-empty, as [`trusted_resolver_list`] leaves it (no default:
    /// the deployer is not trusted unless named).
    pub trusted_resolvers: Vec<Address>,
    /// Strictly ascending and non-empty, as [`trusted_creator_list`] leaves it (no default).
    pub trusted_creators: Vec<Address>,
    pub bounds: GateBounds,
    /// The gate's mode (issue 35): no signers and every setting 0 for a relayed gate; the
    /// constructor (simulated before anything is sent) checks the rest.
    pub attestors: crate::kit::bindings::IRiskGate::Attestors,
}

/// The read age an attested gate gets unless told (`script/Deploy.s.sol`'s default too).
pub const DEFAULT_MAX_READ_AGE: u32 = 5;
/// The slippage over the attested price an attested gate gets unless told (the script's too).
pub const DEFAULT_MAX_SLIPPAGE_BPS: u16 = 200;

/// The mode from `keeper deploy`'s flags: relayed without signers (and then no setting may be
/// given), attested with them: sorted, each once, a majority by default.
pub fn attestor_setting(
    signers: &[Address],
    threshold: Option<u8>,
    max_read_age: Option<u32>,
    max_slippage_bps: Option<u16>,
) -> Result<crate::kit::bindings::IRiskGate::Attestors> {
    use crate::kit::bindings::IRiskGate::Attestors;
    if signers.is_empty() {
        let given = [
            (threshold.is_some(), "--attestor-threshold"),
            (max_read_age.is_some(), "--max-read-age"),
            (max_slippage_bps.is_some(), "--max-slippage-bps"),
        ];
        if let Some((_, flag)) = given.iter().find(|(set, _)| *set) {
            return Err(ConfigError::AttestorSettingWithoutAttestors(flag));
        }
        return Ok(Attestors {
            signers: Vec::new(),
            threshold: 0,
            maxReadAge: 0,
            maxSlippageBps: 0,
        });
    }
    let mut list = signers.to_vec();
    list.sort_unstable();
    if let Some(w) = list.windows(2).find(|w| w[0] == w[1]) {
        return Err(ConfigError::DuplicateAttestor(w[0]));
    }
    let majority = u8::try_from(list.len() / 2 + 1).unwrap_or(u8::MAX);
    Ok(Attestors {
        signers: list,
        threshold: threshold.unwrap_or(majority),
        maxReadAge: max_read_age.unwrap_or(DEFAULT_MAX_READ_AGE),
        maxSlippageBps: max_slippage_bps.unwrap_or(DEFAULT_MAX_SLIPPAGE_BPS),
    })
}

/// Where `keeper report` reads the gate's record from.
#[derive(Debug, Clone)]
pub enum ReportSource {
    /// A live chain, and the gate whose record is rebuilt; None: the one saved in
    /// deployments/<chain-id>.json, as `keeper run` reads it.
    Chain { chain: ChainConfig, gate: Option<Address> },
    /// A saved anvil state (from `keeper demo`) reloaded into a fresh local anvil; `gate` None:
    /// the one saved beside it.
    LoadState { state: PathBuf, gate: Option<Address> },
}

/// `keeper report`, checked.
#[derive(Debug, Clone)]
pub struct ReportConfig {
    pub source: ReportSource,
    /// Compare with the files on disk instead of writing.
    pub check: bool,
    /// Re-render every published prompt from chain logs and compare its hash.
    pub check_prompts: bool,
    /// None: from deployments/<chain-id>.json (or the saved state's deployment), else 0.
    pub from_block: Option<u64>,
    pub log_range: u64,
    /// Under the project root. None: the folder of the saved state, else
    /// results/<chain-id>/<gate>/.
    pub results: Option<PathBuf>,
    /// The record is read to `head - confirmations`, as `keeper run` writes it; None: the
    /// chain's default ([`default_confirmations`]).
    pub confirmations: Option<u64>,
}

/// `keeper attest`: an attestor of one attested gate (issue 35).
#[derive(Debug, Clone)]
pub struct AttestConfig {
    pub chain: ChainConfig,
    /// The gate whose answers it signs: the only one.
    pub gate: alloy::primitives::Address,
    /// The attestor's own key: this keystore (password in ATTESTOR_KEYSTORE_PASSWORD), else
    /// ATTESTOR_PRIVATE_KEY. Never a flag.
    pub keystore: Option<PathBuf>,
    pub model: ModelConfig,
    /// The strategy text of every prompt it renders; every attestor of a gate must render the
    /// same prompt, so they share it.
    pub strategy_text: String,
    pub inference_timeout: Duration,
    /// A loopback address (port 0: any free port, printed on stdout).
    pub listen: std::net::SocketAddr,
    /// The signed deadline: the read block's timestamp plus this many seconds.
    pub answer_ttl_secs: u64,
    pub log_range: u64,
    /// The first block searched for a market's `MarketCreated` (each market once).
    pub from_block: u64,
}

/// `keeper serve`: the floor.
#[derive(Debug, Clone)]
pub struct ServeConfig {
    /// The chain and gate followed, or a saved state reloaded into a local anvil.
    pub source: ReportSource,
    /// A loopback address (port 0: any free port, printed on stdout).
    pub listen: std::net::SocketAddr,
    /// The folder whose feed and journal give the keeper's labels and off-chain rows (default
    /// as for `report`).
    pub results: Option<PathBuf>,
    pub from_block: Option<u64>,
    pub log_range: u64,
    pub confirmations: Option<u64>,
    /// How often the node is asked for a new head.
    pub poll: std::time::Duration,
    /// Where the floor keeps its own state of a gate whose results folder holds no keeper's
    /// (None: `.cache/floor/<chain-id>/<gate>/` under the project root).
    pub cache: Option<PathBuf>,
    /// Follow the gate into the floor's own state even when the results folder holds a
    /// keeper's.
    pub own_state: bool,
}

/// Confirmations when `--confirmations` is not given, for `run` and `report` alike: none on a
/// local dev chain (anvil and hardhat use chain id 31337, mine on demand and never reorganise
/// by themselves), two on any other network.
pub const DEV_CHAIN_ID: u64 = 31_337;
pub const DEFAULT_CONFIRMATIONS: u64 = 2;

pub fn default_confirmations(chain_id: u64) -> u64 {
    if chain_id == DEV_CHAIN_ID {
        0
    } else {
        DEFAULT_CONFIRMATIONS
    }
}

/// The seed `--model bundled` sends unless `--seed` says otherwise.
pub const BUNDLED_SEED: u64 = 1;

/// The operator's quote settings (`--slippage-bps`, `--verdict-ttl-secs`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct QuotePolicy {
    /// Worst price accepted above the one the model saw, in basis points of it.
    pub slippage_bps: u32,
    /// Chain seconds after the read during which the answer may still be executed.
    pub ttl_secs: u64,
}

impl Default for QuotePolicy {
    /// The defaults of issue 7: 50 bps over the price seen, valid for 60 s of chain time.
    fn default() -> Self {
        Self { slippage_bps: 50, ttl_secs: 60 }
    }
}
