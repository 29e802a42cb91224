//! Command line: clap derive `Args` parsed into a checked `Config`. Endpoints come from flags
//! with environment fallbacks; secrets (the keeper key, the inference API key) only ever come
//! from the environment or an encrypted keystore, never from a flag or a file in the repo.
//!
//! Only the binary reads this module: each command's arguments convert here into the plain
//! config type the command's module takes ([`RunConfig`], [`DeployConfig`], [`ReportConfig`],
//! [`MarketConfig`]), and the domain enums clap must parse have clap-only mirrors here
//! ([`LogFormatArg`], [`ResponseFormatArg`], [`SideArg`]), so no other module knows clap.

// The checked config types live in `crate::domain::config`; these paths stay for existing callers.
pub use crate::domain::config::{
    trusted_creator_list, trusted_resolver_list, ChainConfig, ConfigError, InferenceOptions,
    ModelConfig, ResponseFormat, Result, RunConfig, MAX_TRUSTED_RESOLVERS,
};
use crate::{
    commands::market::{
        self, CreateConfig, MarketConfig, QuoteConfig, ResolveConfig, Side, VenueConfig,
    },
    domain::config::QuotePolicy,
    domain::config::{DeployConfig, GateBounds, ReportConfig, ReportSource, ServeConfig},
    domain::log::LogFormat,
};
use alloy::primitives::Address;
use clap::{Parser, Subcommand, ValueEnum};
use std::{path::PathBuf, time::Duration};

/// The riskgate keeper: asks a model about binary markets and relays its one-word answer to an
/// on-chain RiskGate, which alone decides price and size; publishes every decision.
#[derive(Debug, Parser)]
#[command(name = "keeper", version, about, long_about = None)]
pub struct Args {
    /// Project root (holds contracts/, results/ and deployments/).
    #[arg(long, global = true, default_value = ".", env = "KEEPER_ROOT")]
    pub root: PathBuf,
    /// How log events are written to stderr: human-readable text or one JSON object per line
    /// (both with RFC 3339 UTC timestamps; the level comes from KEEPER_LOG or RUST_LOG, default
    /// info). Results (deploy and market JSON, dry-run lines) always go to stdout.
    #[arg(long, global = true, value_enum, default_value_t = LogFormatArg::Text, env = "KEEPER_LOG_FORMAT")]
    pub log_format: LogFormatArg,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Deploy the gate (and, on a local chain, the test collateral and market factory) and save
    /// the addresses to deployments/<chain-id>.json. The key comes from KEEPER_PRIVATE_KEY or
    /// --keystore (password in KEEPER_KEYSTORE_PASSWORD).
    Deploy(DeployArgs),
    /// Create markets, rest quotes and resolve them on a local or test chain (the key from
    /// KEEPER_PRIVATE_KEY or --keystore; the factory from --factory or deployments/<chain-id>.json).
    #[command(subcommand)]
    Market(MarketCommand),
    /// Run the bot: discover markets, ask the model, submit verdicts, redeem, record.
    Run(RunArgs),
    /// Rebuild results/feed.jsonl and results/RESULTS.md from chain logs alone, and check the
    /// gate's code on chain against the compiled source.
    Report(ReportArgs),
    /// Serve the floor: a read-only web view of one gate's record (status, gate card, feed,
    /// decisions, markets, models, charts, a JSON API and live updates), on loopback only. It
    /// holds no key.
    Serve(ServeArgs),
    /// Spawn a local anvil, deploy, play every scenario, resolve, redeem and write results/
    /// (built with the `dev` feature).
    #[cfg(feature = "dev")]
    Demo(DemoArgs),
    /// Measure throughput, memory and gas; writes results/bench/keeper.md (built with the `dev`
    /// feature).
    #[cfg(feature = "dev")]
    Bench(BenchArgs),
}

#[derive(Debug, clap::Args)]
pub struct ChainArgs {
    /// JSON-RPC endpoint of the chain.
    #[arg(long, env = "KEEPER_RPC_URL")]
    pub rpc_url: Option<String>,
    /// Refuse to act unless the RPC reports this chain id.
    #[arg(long, env = "KEEPER_CHAIN_ID")]
    pub chain_id: Option<u64>,
}

#[derive(Debug, clap::Args)]
pub struct KeyArgs {
    /// Encrypted JSON keystore holding the keeper key (password from KEEPER_KEYSTORE_PASSWORD).
    #[arg(long, env = "KEEPER_KEYSTORE")]
    pub keystore: Option<PathBuf>,
}

/// `--gate`, declared once; a command that reads it for another purpose words its help with
/// `#[command(mut_arg("gate", ..))]`.
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct GateArgs {
    /// The RiskGate to drive.
    #[arg(long, env = "KEEPER_GATE")]
    pub gate: Option<Address>,
}

/// `--factory`, declared once; each command words its help with
/// `#[command(mut_arg("factory", ..))]`.
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct FactoryArgs {
    /// The market factory.
    #[arg(long, env = "KEEPER_FACTORY")]
    pub factory: Option<Address>,
}

/// `--from-block` and `--log-range`: where and how a command scans the gate's and the
/// factory's logs.
#[derive(Debug, Clone, Copy, clap::Args)]
pub struct LogScanArgs {
    /// First block to scan for the factory's and the gate's logs (default: from
    /// deployments/<chain-id>.json, else 0).
    #[arg(long)]
    pub from_block: Option<u64>,
    /// Largest block range of one eth_getLogs query.
    #[arg(long, default_value_t = 5_000)]
    pub log_range: u64,
}

/// `--anvil`: the local chain the development commands spawn.
#[derive(Debug, Clone, clap::Args)]
pub struct AnvilArgs {
    /// The anvil binary (the pinned toolchain's).
    #[arg(long, default_value = ".toolchain/bin/anvil")]
    pub anvil: PathBuf,
}

#[derive(Debug, clap::Args)]
#[command(mut_arg("factory", |a| {
    a.help("Existing market factory; without it a MarketFactory is deployed")
}))]
pub struct DeployArgs {
    #[command(flatten)]
    pub chain: ChainArgs,
    #[command(flatten)]
    pub key: KeyArgs,
    /// Existing collateral token; without it a TestCollateral is deployed (local chains).
    #[arg(long, env = "KEEPER_COLLATERAL")]
    pub collateral: Option<Address>,
    #[command(flatten)]
    pub factory: FactoryArgs,
    /// Keeper address allowed to submit verdicts (default: the deployer). It may be neither a
    /// trusted resolver nor a trusted creator.
    #[arg(long)]
    pub keeper: Option<Address>,
    /// A market resolver the gate trusts (repeatable, 1 to 8; required, no default). Only
    /// markets naming one of these as `resolver()` are ever traded (rule 12). Sorted before
    /// deploying (a duplicate is refused); fixed forever once deployed.
    #[arg(long = "trusted-resolver", value_name = "ADDR")]
    pub trusted_resolvers: Vec<Address>,
    /// A market creator the gate trusts (repeatable, 1 to 8; required, no default). Only
    /// markets the factory says one of these created (`creatorOf`) are ever traded (rule 19).
    /// Sorted before deploying (a duplicate is refused); fixed forever once deployed.
    #[arg(long = "trusted-creator", value_name = "ADDR")]
    pub trusted_creators: Vec<Address>,
    #[command(flatten)]
    pub bounds: BoundsArgs,
}

impl DeployArgs {
    /// The trusted resolvers given, as the constructor wants them: strictly ascending (sorted;
    /// a duplicate is refused, as the forge deploy script does), 1 to 8, never the zero
    /// address. None given is an error: the deployer is not trusted by default.
    pub fn trusted_resolvers(&self) -> Result<Vec<Address>> {
        trusted_resolver_list(&self.trusted_resolvers)
    }

    /// The trusted creators given, by the same rules as the resolvers.
    pub fn trusted_creators(&self) -> Result<Vec<Address>> {
        trusted_creator_list(&self.trusted_creators)
    }
}

/// The gate's bounds, fixed at deploy (prices in 1e6 units, sizes in collateral base units).
/// The defaults are the README's deploy table (and `script/Deploy.s.sol`'s `GATE_*` defaults).
#[derive(Debug, Clone, clap::Args)]
pub struct BoundsArgs {
    /// Lowest price paid per unit of the token bought (1e6 = 1.0).
    #[arg(long, default_value_t = 50_000)]
    pub min_price: u64,
    /// Highest price paid per unit of the token bought (< 1e6).
    #[arg(long, default_value_t = 950_000)]
    pub max_price: u64,
    /// Order quantity before lot snapping, in collateral base units of payout (100 tUSD).
    #[arg(long, default_value_t = 100_000_000)]
    pub max_size: u64,
    /// Seconds that must remain before a market's expiry (>= 120).
    #[arg(long, default_value_t = 300)]
    pub min_headroom: u32,
    /// Open positions allowed at once.
    #[arg(long, default_value_t = 3)]
    pub max_concurrent: u8,
    /// Collateral at risk across open positions, in base units (250 tUSD).
    #[arg(long, default_value_t = 250_000_000)]
    pub max_notional: u64,
    /// Longest `expiry − now` a traded market may have, in seconds (>= --min-headroom; 7 days).
    #[arg(long, default_value_t = 604_800)]
    pub max_horizon: u32,
    /// Collateral the gate's balance may fall below its high-water mark, in base units: the
    /// bound on the total loss (500 tUSD).
    #[arg(long, default_value_t = 500_000_000)]
    pub max_drawdown: u64,
    /// Seconds after expiry before an unresolved position may be written off (>= 3600; 1 day).
    #[arg(long, default_value_t = 86_400)]
    pub write_off_grace: u32,
    /// Smallest fill kept, in basis points of the order's quantity (1..=10000; 25 %).
    #[arg(long, default_value_t = 2_500)]
    pub min_fill_bps: u16,
}

/// [`LogFormat`] as `--log-format` parses it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum LogFormatArg {
    /// One human-readable line per event: `<timestamp> <LEVEL> <target>: <message> <fields>`.
    Text,
    /// One JSON object per event: `{"timestamp": …, "level": …, "message": …, "target": …, …}`.
    Json,
}

impl From<LogFormatArg> for LogFormat {
    fn from(f: LogFormatArg) -> Self {
        match f {
            LogFormatArg::Text => LogFormat::Text,
            LogFormatArg::Json => LogFormat::Json,
        }
    }
}

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

/// [`Side`] as `--side` and `--outcome` parse it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SideArg {
    Up,
    Down,
}

impl From<SideArg> for Side {
    fn from(s: SideArg) -> Self {
        match s {
            SideArg::Up => Side::Up,
            SideArg::Down => Side::Down,
        }
    }
}

pub use crate::domain::config::BUNDLED_SEED;

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

#[derive(Debug, clap::Args)]
pub struct RunArgs {
    #[command(flatten)]
    pub chain: ChainArgs,
    #[command(flatten)]
    pub key: KeyArgs,
    #[command(flatten)]
    pub gate: GateArgs,
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
    /// Seconds to wait for one inference answer.
    #[arg(long, default_value_t = 30)]
    pub inference_timeout_secs: u64,
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
    /// Give up (exit non-zero, every row on disk) when the node stays unreachable this many
    /// seconds; without it an outage is waited out with a bounded backoff.
    #[arg(long, env = "KEEPER_MAX_OUTAGE_SECS")]
    pub max_outage_secs: Option<u64>,
}

#[derive(Debug, clap::Args)]
#[command(
    mut_arg("gate", |a| a.help("The RiskGate whose record is rebuilt")),
    mut_arg("from_block", |a| a.help("First block to scan (default: deployments/<chain-id>.json, else 0)")),
)]
pub struct ReportArgs {
    #[command(flatten)]
    pub chain: ChainArgs,
    #[command(flatten)]
    pub confirmations: ConfirmationsArgs,
    #[command(flatten)]
    pub gate: GateArgs,
    /// Compare with the files on disk instead of writing: re-derive every chain field,
    /// RESULTS.md and the chart, walk the feed's hash chain to feed.head, print what was and
    /// was not verified; exit non-zero on any difference.
    #[arg(long)]
    pub check: bool,
    /// Re-render every published prompt from chain data alone (the market's question and
    /// grids from `MarketCreated`, its book at the decision's `readBlock` rebuilt from the
    /// venue's logs, that block's timestamp, the strategy text in <results>/strategies/) and
    /// compare its keccak256 with the `promptHash` the gate published; print how many matched
    /// and name each one that did not. Writes nothing; exit non-zero on any mismatch.
    #[arg(long)]
    pub check_prompts: bool,
    /// Reload a saved anvil state (from `keeper demo`) into a fresh local anvil and check
    /// against it; the gate address then defaults to the one saved beside it.
    #[arg(long)]
    pub load_state: Option<PathBuf>,
    #[command(flatten)]
    pub scan: LogScanArgs,
    /// Directory holding feed.jsonl, feed.head, RESULTS.md and the chart. Default: the folder
    /// of the --load-state file (the demo keeps its state beside its record), else
    /// results/<chain-id>/<gate>/ as `keeper run` writes it.
    #[arg(long)]
    pub results: Option<PathBuf>,
}

#[derive(Debug, clap::Args)]
#[command(
    mut_arg("gate", |a| a.help("The RiskGate whose record is shown (default: deployments/<chain-id>.json)")),
    mut_arg("from_block", |a| a.help("First block to scan (default: deployments/<chain-id>.json, else 0)")),
)]
pub struct ServeArgs {
    #[command(flatten)]
    pub chain: ChainArgs,
    #[command(flatten)]
    pub confirmations: ConfirmationsArgs,
    #[command(flatten)]
    pub gate: GateArgs,
    /// Reload a saved anvil state (from `keeper demo`) into a local anvil and show its record;
    /// the gate defaults to the one saved beside it.
    #[arg(long, conflicts_with = "rpc_url")]
    pub load_state: Option<PathBuf>,
    /// Address to listen on: loopback only (port 0 picks a free one; the address is printed).
    #[arg(long, default_value = "127.0.0.1:8080", env = "KEEPER_SERVE_LISTEN")]
    pub listen: std::net::SocketAddr,
    /// Milliseconds between asks for a new head.
    #[arg(long, default_value_t = 250)]
    pub poll_ms: u64,
    #[command(flatten)]
    pub scan: LogScanArgs,
    /// Directory holding the keeper's feed.jsonl and journal (their labels and off-chain rows
    /// are shown). Default: the folder of the --load-state file, else results/<chain-id>/<gate>/.
    #[arg(long)]
    pub results: Option<PathBuf>,
}

impl ServeArgs {
    pub fn to_config(&self) -> Result<ServeConfig> {
        let source = match &self.load_state {
            Some(state) => ReportSource::LoadState { state: state.clone(), gate: self.gate.gate },
            None => ReportSource::Chain { chain: self.chain.to_config()?, gate: self.gate.gate },
        };
        if self.poll_ms == 0 {
            return Err(ConfigError::ZeroPoll);
        }
        Ok(ServeConfig {
            source,
            listen: self.listen,
            results: self.results.as_deref().map(from_cwd),
            from_block: self.scan.from_block,
            log_range: self.scan.log_range,
            confirmations: self.confirmations.confirmations,
            poll: std::time::Duration::from_millis(self.poll_ms),
        })
    }
}

/// How deep the record is read: `run` and `report` take the same flag, so `report` reads the
/// record `run` wrote.
#[derive(Debug, Clone, clap::Args)]
pub struct ConfirmationsArgs {
    /// Blocks a decision must be buried under before it enters the record (default: 2, or 0 on a
    /// local dev chain, chain id 31337). `report` reads to the same depth.
    #[arg(long, env = "KEEPER_CONFIRMATIONS")]
    pub confirmations: Option<u64>,
}

/// `keeper market …`: a venue's maker and resolver chores, for local and test chains.
#[derive(Debug, Subcommand)]
pub enum MarketCommand {
    /// Create a market on the factory (resolved by the key's address unless --resolver); prints
    /// {"market", "expiry", ...} as JSON on stdout.
    Create(MarketCreateArgs),
    /// Rest a bid and/or an ask on a market as the key's address, minting test collateral when
    /// the token is an open-faucet TestCollateral and the balance is short.
    Quote(MarketQuoteArgs),
    /// Resolve a market after its expiry (only its resolver's key can).
    Resolve(MarketResolveArgs),
}

/// Where the venue is: the chain, the key, and the factory (--factory, else the --gate's
/// factory, else deployments/<chain-id>.json).
#[derive(Debug, clap::Args)]
#[command(
    mut_arg("gate", |a| a.help("A RiskGate whose market factory to use")),
    mut_arg("factory", |a| {
        a.help("The market factory (overrides --gate and the deployments file)")
    }),
)]
pub struct VenueArgs {
    #[command(flatten)]
    pub chain: ChainArgs,
    #[command(flatten)]
    pub key: KeyArgs,
    #[command(flatten)]
    pub gate: GateArgs,
    #[command(flatten)]
    pub factory: FactoryArgs,
}

#[derive(Debug, clap::Args)]
pub struct MarketCreateArgs {
    #[command(flatten)]
    pub venue: VenueArgs,
    /// The event the market asks about, 1 to 280 bytes ("Will ETH close above 3,000 USD on
    /// 2027-01-31?"). It is published on chain and shown to the model verbatim.
    #[arg(long)]
    pub question: String,
    /// Seconds of chain time from the current head to the market's expiry.
    #[arg(long)]
    pub expiry_in: u64,
    /// Price grid, in 1e6 units (`tick × lot` must be a multiple of 1e6; 1000 = 0.001).
    #[arg(long, default_value_t = crate::commands::market::DEFAULT_TICK)]
    pub tick: u64,
    /// Quantity grid, in collateral base units.
    #[arg(long, default_value_t = crate::commands::market::DEFAULT_LOT)]
    pub lot: u64,
    /// Smallest order quantity, in collateral base units.
    #[arg(long, default_value_t = 0)]
    pub min_qty: u64,
    /// The market's resolver (default: the key's address). A gate trades only markets whose
    /// resolver it trusts.
    #[arg(long)]
    pub resolver: Option<Address>,
}

#[derive(Debug, clap::Args)]
pub struct MarketQuoteArgs {
    #[command(flatten)]
    pub venue: VenueArgs,
    /// The market to quote on.
    #[arg(long)]
    pub market: Address,
    /// Which token --bid and --ask price (1e6 units): `up`, or `down` (a DOWN bid at p rests as
    /// an UP ask at 1e6 − p, and the reverse).
    #[arg(long, value_enum, default_value_t = SideArg::Up)]
    pub side: SideArg,
    /// Price of the resting bid for the side's token.
    #[arg(long)]
    pub bid: Option<u64>,
    /// Price of the resting ask for the side's token.
    #[arg(long)]
    pub ask: Option<u64>,
    /// Quantity of each order, in collateral base units of payout (a multiple of the lot).
    #[arg(long)]
    pub qty: u64,
}

#[derive(Debug, clap::Args)]
pub struct MarketResolveArgs {
    #[command(flatten)]
    pub venue: VenueArgs,
    /// The market to resolve.
    #[arg(long)]
    pub market: Address,
    /// The winning side.
    #[arg(long, value_enum)]
    pub outcome: SideArg,
}

#[derive(Debug, clap::Args)]
pub struct DemoArgs {
    #[command(flatten)]
    pub anvil: AnvilArgs,
    /// Directory results are written to.
    #[arg(long, default_value = "results")]
    pub results: PathBuf,
}

#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    #[command(flatten)]
    pub anvil: AnvilArgs,
    /// Markets in the throughput run.
    #[arg(long, default_value_t = 200)]
    pub markets: usize,
    /// Markets in the memory run.
    #[arg(long, default_value_t = 1_000)]
    pub rss_markets: usize,
    /// Record sizes (decisions, comma-separated, ascending) at which the keeper's RSS, restart
    /// and cycle time and disk use are measured.
    #[arg(long, value_delimiter = ',', default_values_t = [1_000usize, 100_000])]
    pub record_sizes: Vec<usize>,
    /// Output file.
    #[arg(long, default_value = "results/bench/keeper.md")]
    pub out: PathBuf,
}

impl ChainArgs {
    pub fn to_config(&self) -> Result<ChainConfig> {
        let raw = self.rpc_url.as_deref().ok_or(ConfigError::MissingRpc)?;
        let rpc_url =
            raw.parse().map_err(|source| ConfigError::BadRpc { url: raw.to_string(), source })?;
        Ok(ChainConfig { rpc_url, expected_chain_id: self.chain_id })
    }
}

impl RunArgs {
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

    pub fn to_config(&self) -> Result<RunConfig> {
        let chain = self.chain.to_config()?;
        let model = match self.model {
            ModelKind::Builtin => ModelConfig::Builtin,
            ModelKind::Openai => ModelConfig::OpenAi {
                base_url: self.openai_url.clone().ok_or(ConfigError::MissingOpenAiUrl)?,
                model: self.openai_model.clone().ok_or(ConfigError::MissingOpenAiModel)?,
                options: self.inference_options()?,
            },
            ModelKind::Bundled => {
                let mut options = self.inference_options()?;
                options.seed = options.seed.or(Some(BUNDLED_SEED));
                ModelConfig::Bundled { options }
            }
            ModelKind::Replay => ModelConfig::Replay {
                path: self.replay_file.clone().ok_or(ConfigError::MissingReplayFile)?,
            },
        };
        let strategy_text = match &self.strategy {
            Some(path) => std::fs::read_to_string(path)
                .map_err(|source| ConfigError::ReadFile { path: path.clone(), source })?,
            None => String::new(),
        };
        if self.reask_secs == 0 {
            return Err(ConfigError::ZeroReask);
        }
        if self.slippage_bps > 10_000 {
            return Err(ConfigError::SlippageTooLarge(self.slippage_bps));
        }
        if self.verdict_ttl_secs == 0 {
            return Err(ConfigError::ZeroVerdictTtl);
        }
        Ok(RunConfig {
            chain,
            keystore: self.key.keystore.clone(),
            model,
            strategy_text,
            reask_secs: self.reask_secs,
            quote: QuotePolicy { slippage_bps: self.slippage_bps, ttl_secs: self.verdict_ttl_secs },
            interval: Duration::from_secs(self.interval_secs),
            inference_timeout: Duration::from_secs(self.inference_timeout_secs.max(1)),
            once: self.once,
            dry_run: self.dry_run,
            from_block: self.scan.from_block,
            log_range: self.scan.log_range.max(1),
            concurrency: self.concurrency.max(1),
            results: self.results.as_deref().map(from_cwd),
            confirmations: self.confirmations.confirmations,
            resend_after: Duration::from_secs(self.resend_after_secs.max(1)),
            max_outage: self.max_outage_secs.map(Duration::from_secs),
            gate: self.gate.gate,
        })
    }
}

impl DeployArgs {
    /// Checked in this order, before anything is read or sent: the endpoint, then the trusted
    /// resolvers, then the trusted creators.
    pub fn to_config(&self) -> Result<DeployConfig> {
        let chain = self.chain.to_config()?;
        let trusted_resolvers = self.trusted_resolvers()?;
        let trusted_creators = self.trusted_creators()?;
        Ok(DeployConfig {
            chain,
            keystore: self.key.keystore.clone(),
            collateral: self.collateral,
            factory: self.factory.factory,
            keeper: self.keeper,
            trusted_resolvers,
            trusted_creators,
            bounds: self.bounds.to_bounds(),
        })
    }
}

impl BoundsArgs {
    pub fn to_bounds(&self) -> GateBounds {
        GateBounds {
            min_price: self.min_price,
            max_price: self.max_price,
            max_size: self.max_size,
            min_headroom: self.min_headroom,
            max_concurrent: self.max_concurrent,
            max_notional: self.max_notional,
            max_horizon: self.max_horizon,
            max_drawdown: self.max_drawdown,
            write_off_grace: self.write_off_grace,
            min_fill_bps: self.min_fill_bps,
        }
    }
}

impl ReportArgs {
    /// With `--load-state` no endpoint or gate is needed (a local anvil is spawned and the gate
    /// saved beside the state is the default); without, both are.
    pub fn to_config(&self) -> Result<ReportConfig> {
        let source = match &self.load_state {
            Some(state) => ReportSource::LoadState { state: state.clone(), gate: self.gate.gate },
            None => {
                let chain = self.chain.to_config()?;
                ReportSource::Chain { chain, gate: self.gate.gate }
            }
        };
        Ok(ReportConfig {
            source,
            check: self.check,
            check_prompts: self.check_prompts,
            from_block: self.scan.from_block,
            log_range: self.scan.log_range,
            results: self.results.as_deref().map(from_cwd),
            confirmations: self.confirmations.confirmations,
        })
    }
}

impl VenueArgs {
    pub fn to_config(&self) -> Result<VenueConfig> {
        Ok(VenueConfig {
            chain: self.chain.to_config()?,
            keystore: self.key.keystore.clone(),
            gate: self.gate.gate,
            factory: self.factory.factory,
        })
    }
}

impl MarketCommand {
    /// A market error, not only a config one: a quote's orders are checked here, before the
    /// endpoint, so a malformed quote is named first and never reaches the chain.
    pub fn to_config(&self) -> market::Result<MarketConfig> {
        Ok(match self {
            MarketCommand::Create(a) => MarketConfig::Create(CreateConfig {
                question: market::question(&a.question)?,
                venue: a.venue.to_config()?,
                expiry_in: a.expiry_in,
                tick: a.tick,
                lot: a.lot,
                min_qty: a.min_qty,
                resolver: a.resolver,
            }),
            MarketCommand::Quote(a) => {
                let orders = market::up_orders(a.side.into(), a.bid, a.ask, a.qty)?;
                MarketConfig::Quote(QuoteConfig {
                    venue: a.venue.to_config()?,
                    market: a.market,
                    orders,
                })
            }
            MarketCommand::Resolve(a) => MarketConfig::Resolve(ResolveConfig {
                venue: a.venue.to_config()?,
                market: a.market,
                outcome: a.outcome.into(),
            }),
        })
    }
}

/// A path from the command line, resolved against the working directory (as a shell user
/// reads it), once, here.
fn from_cwd(p: &std::path::Path) -> PathBuf {
    std::path::absolute(p).unwrap_or_else(|_| p.to_path_buf())
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_consistent() {
        Args::command().debug_assert();
    }

    #[test]
    fn run_without_rpc_is_a_config_error_not_a_panic() {
        let args = Args::try_parse_from(["keeper", "run", "--gate", &Address::ZERO.to_string()]);
        let Ok(Args { command: Command::Run(run), .. }) = args else {
            panic!("run args should parse");
        };
        // Only meaningful when the environment does not provide the endpoint.
        if std::env::var("KEEPER_RPC_URL").is_err() {
            assert!(matches!(run.to_config(), Err(ConfigError::MissingRpc)));
        }
    }

    #[test]
    fn a_malformed_rpc_url_is_named_with_the_parsers_reason() {
        let chain = ChainArgs { rpc_url: Some("127.0.0.1:8545".into()), chain_id: None };
        let e = chain.to_config().unwrap_err();
        assert!(matches!(&e, ConfigError::BadRpc { url, .. } if url == "127.0.0.1:8545"), "{e}");
        // The parser's own reason stays underneath, whole.
        assert_eq!(
            crate::error_chain(&e),
            "RPC endpoint \"127.0.0.1:8545\" is not a valid URL: use e.g. http://127.0.0.1:8545: \
             relative URL without a base"
        );
    }

    #[test]
    fn deploy_defaults_are_the_readme_table() {
        // The README's deploy table (and script/Deploy.s.sol's GATE_* defaults).
        let Ok(Args { command: Command::Deploy(d), .. }) =
            Args::try_parse_from(["keeper", "deploy"])
        else {
            panic!("deploy args should parse");
        };
        let b = &d.bounds;
        assert_eq!((b.min_price, b.max_price, b.max_size), (50_000, 950_000, 100_000_000));
        assert_eq!((b.min_headroom, b.max_concurrent, b.max_notional), (300, 3, 250_000_000));
        assert_eq!((b.max_horizon, b.max_drawdown), (604_800, 500_000_000));
        assert_eq!((b.write_off_grace, b.min_fill_bps), (86_400, 2_500));
        // No role defaults to the deployer any more: without the lists, deploy refuses, saying
        // what is missing.
        assert!(d.trusted_resolvers.is_empty() && d.trusted_creators.is_empty());
        let e = d.trusted_resolvers().unwrap_err().to_string();
        assert!(e.starts_with("no --trusted-resolver given") && e.contains("no longer"), "{e}");
        let e = d.trusted_creators().unwrap_err().to_string();
        assert!(e.starts_with("no --trusted-creator given") && e.contains("no longer"), "{e}");
    }

    #[test]
    fn trusted_resolvers_are_sorted_never_duplicated_and_never_zero() {
        let a = |b: u8| Address::repeat_byte(b);
        assert_eq!(trusted_resolver_list(&[a(3), a(1), a(2)]).unwrap(), vec![a(1), a(2), a(3)]);
        assert!(matches!(
            trusted_resolver_list(&[a(3), a(1), a(3), a(2)]),
            Err(ConfigError::DuplicateTrustedResolver(x)) if x == a(3)
        ));
        assert!(matches!(
            trusted_resolver_list(&[a(1), Address::ZERO]),
            Err(ConfigError::ZeroTrustedResolver)
        ));
        let nine: Vec<Address> = (1..=9).map(a).collect();
        assert!(matches!(
            trusted_resolver_list(&nine),
            Err(ConfigError::TooManyTrustedResolvers { count: 9, max: 8 })
        ));
        assert!(matches!(trusted_resolver_list(&[]), Err(ConfigError::MissingTrustedResolver)));
        // Creators follow the same rules, with their own errors.
        assert_eq!(trusted_creator_list(&[a(3), a(1)]).unwrap(), vec![a(1), a(3)]);
        assert!(matches!(
            trusted_creator_list(&[a(3), a(3)]),
            Err(ConfigError::DuplicateTrustedCreator(x)) if x == a(3)
        ));
        assert!(matches!(
            trusted_creator_list(&[Address::ZERO]),
            Err(ConfigError::ZeroTrustedCreator)
        ));
        assert!(matches!(
            trusted_creator_list(&nine),
            Err(ConfigError::TooManyTrustedCreators { count: 9, max: 8 })
        ));
        assert!(matches!(trusted_creator_list(&[]), Err(ConfigError::MissingTrustedCreator)));
        let parse = |flags: &[String]| {
            let mut argv = vec!["keeper".to_string(), "deploy".to_string()];
            argv.extend(flags.iter().cloned());
            match Args::try_parse_from(argv) {
                Ok(Args { command: Command::Deploy(d), .. }) => d,
                _ => panic!("deploy args should parse"),
            }
        };
        let flag = |x: Address| ["--trusted-resolver".to_string(), x.to_string()];
        let creator = |x: Address| ["--trusted-creator".to_string(), x.to_string()];
        let d = parse(&[flag(a(2)), flag(a(1)), creator(a(5)), creator(a(4))].concat());
        assert_eq!(d.trusted_resolvers().unwrap(), vec![a(1), a(2)]);
        assert_eq!(d.trusted_creators().unwrap(), vec![a(4), a(5)]);
        assert!(matches!(parse(&[]).trusted_resolvers(), Err(ConfigError::MissingTrustedResolver)));
        let zero = parse(&flag(Address::ZERO));
        let e = zero.trusted_resolvers().unwrap_err().to_string();
        assert!(e.contains("zero address") && !e.contains('\n'), "{e}");
    }

    #[test]
    fn checks_run_in_the_order_the_commands_always_ran_them() {
        let parse = |argv: &[&str]| {
            let mut full = vec!["keeper"];
            full.extend_from_slice(argv);
            Args::try_parse_from(full).expect("args should parse").command
        };
        let z = Address::repeat_byte(1).to_string();
        // A malformed quote is named before a missing endpoint: it never reaches the chain.
        let Command::Market(m) = parse(&["market", "quote", "--market", &z, "--qty", "1"]) else {
            panic!("market quote");
        };
        assert!(matches!(m.to_config(), Err(market::MarketError::NoOrder)));
        // A saved state needs no endpoint and no gate.
        let Command::Report(r) = parse(&["report", "--load-state", "x/anvil-state.json"]) else {
            panic!("report");
        };
        let cfg = r.to_config().unwrap();
        assert!(matches!(cfg.source, ReportSource::LoadState { gate: None, .. }));
        // A live report wants the endpoint; without a gate it reads the saved deployment, as
        // `keeper run` does (found once the chain id is known).
        let Command::Report(r) = parse(&["report", "--rpc-url", "http://127.0.0.1:1"]) else {
            panic!("report");
        };
        if std::env::var("KEEPER_GATE").is_err() {
            let cfg = r.to_config().unwrap();
            assert!(matches!(cfg.source, ReportSource::Chain { gate: None, .. }));
        }
        // Deploy: the endpoint, then the trusted resolvers, then the trusted creators.
        let zero = Address::ZERO.to_string();
        let Command::Deploy(d) =
            parse(&["deploy", "--rpc-url", "http://127.0.0.1:1", "--trusted-resolver", &zero])
        else {
            panic!("deploy");
        };
        assert!(matches!(d.to_config(), Err(ConfigError::ZeroTrustedResolver)));
        let Command::Deploy(d) = parse(&["deploy", "--rpc-url", "http://127.0.0.1:1"]) else {
            panic!("deploy");
        };
        assert!(matches!(d.to_config(), Err(ConfigError::MissingTrustedResolver)));
        let Command::Deploy(d) =
            parse(&["deploy", "--rpc-url", "http://127.0.0.1:1", "--trusted-resolver", &z])
        else {
            panic!("deploy");
        };
        assert!(matches!(d.to_config(), Err(ConfigError::MissingTrustedCreator)));
        let y = Address::repeat_byte(2).to_string();
        let Command::Deploy(d) = parse(&[
            "deploy",
            "--rpc-url",
            "http://127.0.0.1:1",
            "--trusted-resolver",
            &z,
            "--trusted-creator",
            &y,
        ]) else {
            panic!("deploy");
        };
        let cfg = d.to_config().unwrap();
        assert_eq!(cfg.bounds, d.bounds.to_bounds());
        assert_eq!(cfg.trusted_resolvers, vec![Address::repeat_byte(1)]);
        assert_eq!(cfg.trusted_creators, vec![Address::repeat_byte(2)]);
    }

    #[test]
    fn quote_flags_default_to_issue_7() {
        let Ok(Args { command: Command::Run(r), .. }) = Args::try_parse_from(["keeper", "run"])
        else {
            panic!("run args should parse");
        };
        if std::env::var("KEEPER_SLIPPAGE_BPS").is_err() {
            assert_eq!(r.slippage_bps, 50);
        }
        if std::env::var("KEEPER_VERDICT_TTL_SECS").is_err() {
            assert_eq!(r.verdict_ttl_secs, 60);
        }
    }
}
