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
    attestor_setting, attestor_urls, trusted_creator_list, trusted_resolver_list, ChainConfig,
    ConfigError, InferenceOptions, ModelConfig, ResponseFormat, Result, RunConfig,
    MAX_TRUSTED_RESOLVERS,
};
use crate::domain::config::{http_only, OPENAI_EXAMPLE, RPC_EXAMPLE};
use crate::{
    commands::fund::{Amount, FundConfig},
    commands::market::{
        self, CreateConfig, MarketConfig, QuoteConfig, ResolveConfig, Side, VenueConfig,
    },
    domain::config::QuotePolicy,
    domain::config::{DeployConfig, GateBounds, ReportConfig, ReportSource, ServeConfig},
    domain::log::LogFormat,
};
mod attest_args;
mod deploy_args;
mod market_args;
mod record_args;
mod run_args;

pub use attest_args::*;
pub use deploy_args::*;
pub use market_args::*;
pub use record_args::*;
pub use run_args::*;

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
    /// Deposit collateral into a gate from the key's address (approve, then `deposit`); on an
    /// open-faucet test collateral a short balance is minted first. Prints JSON on stdout.
    Fund(FundArgs),
    /// Run the bot: discover markets, ask the model, submit verdicts, redeem, record.
    Run(RunArgs),
    /// Rebuild results/feed.jsonl and results/RESULTS.md from chain logs alone, and check the
    /// gate's code on chain against the compiled source.
    Report(ReportArgs),
    /// Serve the floor: a read-only web view of one gate's record (status, gate card, feed,
    /// decisions, markets, models, charts, a JSON API and live updates), on loopback only. It
    /// holds no key.
    Serve(ServeArgs),
    /// Serve as one attestor of an attested gate: on `POST /attest {chainId, gate, market,
    /// readBlock}` it reads the market and its book at readBlock itself, renders the prompt,
    /// asks its own model and signs the answer (EIP-712) with its own key (ATTESTOR_PRIVATE_KEY
    /// or --keystore), on loopback only.
    Attest(AttestArgs),
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
pub use crate::domain::config::BUNDLED_SEED;
/// How deep the record is read: `run` and `report` take the same flag, so `report` reads the
/// record `run` wrote.
#[derive(Debug, Clone, clap::Args)]
pub struct ConfirmationsArgs {
    /// Blocks a decision must be buried under before it enters the record (default: 2, or 0 on a
    /// local dev chain, chain id 31337). `report` reads to the same depth.
    #[arg(long, env = "KEEPER_CONFIRMATIONS")]
    pub confirmations: Option<u64>,
}
#[derive(Debug, clap::Args)]
pub struct DemoArgs {
    #[command(flatten)]
    pub anvil: AnvilArgs,
    /// Directory results are written to.
    #[arg(long, default_value = "results")]
    pub results: PathBuf,
    /// Only the attested gate's chain and record (<results>/attested/); the relayed record in
    /// <results>/ is left as it is.
    #[arg(long)]
    pub attested_only: bool,
    /// Only the consensus gate's chain and record (<results>/consensus/); the other records
    /// are left as they are.
    #[arg(long, conflicts_with = "attested_only")]
    pub consensus_only: bool,
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
    /// Seconds the floor runs beside a live keeper, its memory read every minute (issue 34).
    #[arg(long, default_value_t = 600)]
    pub floor_live_secs: u64,
    /// Output file.
    #[arg(long, default_value = "results/bench/keeper.md")]
    pub out: PathBuf,
    /// Run only the attested mode's section and print it (the output file is left as it is:
    /// a partial report never replaces the whole one).
    #[arg(long)]
    pub attested_only: bool,
    /// Run only the one-cycle section over --rss-markets markets (the cycle step by step, and
    /// its book reads) and print it; the output file is left as it is.
    #[arg(long, conflicts_with = "attested_only")]
    pub cycle_only: bool,
    /// Run only the throughput section (the mixed workload at --markets and at --rss-markets
    /// markets, keeper against pre-built batches) and print it; the output file is left as it
    /// is.
    #[arg(long, conflicts_with_all = ["attested_only", "cycle_only"])]
    pub throughput_only: bool,
    /// Run only the bundled language model's section (its latency, memory, and the cycle with
    /// one slot, one per core with continuous batching and without) and print it; the output
    /// file is left as it is.
    #[arg(long, conflicts_with_all = ["attested_only", "cycle_only", "throughput_only"])]
    pub model_only: bool,
    /// With --cycle-only: anvil keeps every state instead of only the latest
    /// (`--prune-history`, the default), to tell anvil's cost per block from the keeper's.
    #[arg(long, requires = "cycle_only")]
    pub full_history: bool,
    /// With --cycle-only: anvil keeps the latest N states (`--prune-history N`), as a node
    /// that serves recent reads and shallow reorgs does, instead of only the latest.
    #[arg(long, value_name = "N", requires = "cycle_only", conflicts_with = "full_history",
        value_parser = clap::value_parser!(u32).range(1..))]
    pub recent_history: Option<u32>,
}
impl ChainArgs {
    pub fn to_config(&self) -> Result<ChainConfig> {
        let raw = self.rpc_url.as_deref().ok_or(ConfigError::MissingRpc)?;
        let rpc_url =
            raw.parse().map_err(|source| ConfigError::BadRpc { url: raw.to_string(), source })?;
        let rpc_url = http_only("--rpc-url", RPC_EXAMPLE, rpc_url)?;
        Ok(ChainConfig { rpc_url, expected_chain_id: self.chain_id })
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
    fn urls_that_are_not_http_are_config_errors_for_rpc_and_inference_alike() {
        // Each of these was accepted before: the run started, and every due market became an
        // off-chain row ("builder error: relative URL without a base") while the breaker opened.
        let run = |url: &str| {
            let args = Args::try_parse_from([
                "keeper",
                "run",
                "--rpc-url",
                "http://127.0.0.1:8545",
                "--model",
                "openai",
                "--openai-model",
                "m",
                "--openai-url",
                url,
            ]);
            let Ok(Args { command: Command::Run(run), .. }) = args else { panic!("parses") };
            run.to_config().map(|_| ()).map_err(|e| crate::error_chain(&e))
        };
        let e = run("127.0.0.1:18082").unwrap_err();
        assert!(e.starts_with("--openai-url \"127.0.0.1:18082\" is not a valid URL"), "{e}");
        let e = run("http//x y").unwrap_err();
        assert!(e.starts_with("--openai-url \"http//x y\" is not a valid URL"), "{e}");
        let e = run("ftp://127.0.0.1/v1").unwrap_err();
        assert!(e.contains("is not an http(s) URL (its scheme is \"ftp\")"), "{e}");
        assert!(run("http://127.0.0.1:8080").is_ok());
        assert!(run("https://inference.example/v1").is_ok());
        let chain = ChainArgs { rpc_url: Some("ws://127.0.0.1:8545".into()), chain_id: None };
        let e = crate::error_chain(&chain.to_config().unwrap_err());
        assert_eq!(
            e,
            "--rpc-url \"ws://127.0.0.1:8545/\" is not an http(s) URL (its scheme is \"ws\"): use \
             e.g. http://127.0.0.1:8545"
        );
    }

    #[test]
    fn bundled_model_threads_and_attestor_wait_all_parse_and_zero_threads_is_refused() {
        let run = |extra: &[&str]| {
            let mut argv = vec!["keeper", "run", "--rpc-url", "http://127.0.0.1:8545"];
            argv.extend_from_slice(extra);
            let Ok(Args { command: Command::Run(run), .. }) = Args::try_parse_from(argv) else {
                panic!("parses")
            };
            run.to_config()
        };
        let cfg = run(&["--model", "bundled", "--model-threads", "1", "--attestor-wait-all"])
            .expect("a valid configuration");
        assert!(
            matches!(cfg.model, ModelConfig::Bundled { threads: Some(1), .. }),
            "{:?}",
            cfg.model
        );
        assert!(cfg.attestor_wait_all);
        // The default: the kit's thread count (not restated here), and the keeper goes as soon
        // as k agree.
        let cfg = run(&["--model", "bundled"]).expect("a valid configuration");
        assert!(matches!(cfg.model, ModelConfig::Bundled { threads: None, .. }), "{:?}", cfg.model);
        assert!(!cfg.attestor_wait_all);
        let cfg = run(&["--model", "bundled", "--model-slots", "3"]).unwrap();
        assert!(
            matches!(cfg.model, ModelConfig::Bundled { slots: Some(3), .. }),
            "{:?}",
            cfg.model
        );
        let e = run(&["--model", "bundled", "--model-slots", "0"]).unwrap_err();
        assert!(e.to_string().contains("--model-slots 0"), "{e}");
        let e = run(&["--model", "bundled", "--model-threads", "0"]).unwrap_err();
        assert!(matches!(e, ConfigError::ZeroModelThreads), "{e}");
    }

    #[test]
    fn a_malformed_rpc_url_is_named_with_the_parsers_reason() {
        let chain = ChainArgs { rpc_url: Some("127.0.0.1:8545".into()), chain_id: None };
        let e = chain.to_config().unwrap_err();
        assert!(matches!(&e, ConfigError::BadRpc { url, .. } if url == "127.0.0.1:8545"), "{e}");
        // The parser's own reason stays underneath, whole.
        assert_eq!(
            crate::error_chain(&e),
            "--rpc-url \"127.0.0.1:8545\" is not a valid URL: use e.g. http://127.0.0.1:8545: \
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
        // The mode: no signers is relayed (all zeros) and takes no setting; signers are
        // sorted, each once, and the threshold defaults to a majority (3 of 4: 4 / 2 + 1).
        let relayed = attestor_setting(&[], None, None, None).unwrap();
        assert!(relayed.signers.is_empty());
        assert_eq!((relayed.threshold, relayed.maxReadAge, relayed.maxSlippageBps), (0, 0, 0));
        assert!(matches!(
            attestor_setting(&[], Some(1), None, None),
            Err(ConfigError::AttestorSettingWithoutAttestors("--attestor-threshold"))
        ));
        let four = attestor_setting(&[a(4), a(2), a(3), a(1)], None, None, Some(50)).unwrap();
        assert_eq!(four.signers, vec![a(1), a(2), a(3), a(4)]);
        assert_eq!((four.threshold, four.maxReadAge, four.maxSlippageBps), (3, 5, 50));
        assert!(matches!(
            attestor_setting(&[a(2), a(2)], None, None, None),
            Err(ConfigError::DuplicateAttestor(x)) if x == a(2)
        ));
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
