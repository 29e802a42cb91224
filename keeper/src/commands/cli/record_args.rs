//! `keeper report`'s and `keeper serve`'s arguments: where the record is read from and checked.

use super::*;

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
    /// Where the floor builds and keeps its own state of the gate when the results folder holds
    /// no keeper's state database (default: .cache/floor/<chain-id>/<gate>/ under --root).
    #[arg(long)]
    pub cache: Option<PathBuf>,
    /// Build the floor's own state even when the results folder holds a keeper's (which it
    /// would otherwise read): its feed still gives the labels and off-chain rows the first time.
    #[arg(long)]
    pub own_state: bool,
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
            cache: self.cache.as_deref().map(from_cwd),
            own_state: self.own_state,
        })
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
