//! `keeper bench`: throughput of the keeper against a baseline of pre-built `submitVerdict`
//! transactions sent back to back (same run, same anvil), peak RSS of `keeper run --once` over
//! many markets, the bundled language model's latency and memory and what it costs a cycle
//! against the builtin model, the attested mode's keeper against the relayed one, and the
//! gate's gas figures from real receipts. Writes results/bench/keeper.md.

pub mod attested;
pub mod cycle;
pub mod floor;
pub mod gas;
pub mod history;
pub mod memory;
pub mod model;
pub mod throughput;

use crate::{
    chain::follower::{BlockRef, FollowError, Follower},
    chain::reads::{CollectError, MarketInfo, MarketState},
    chain::sender::{self, CallFailed},
    chain::short,
    dev::world::{confirm, World, WorldError},
    domain::config::QuotePolicy,
    inference::Model,
    kit::bindings::IRiskGate::{self, Quote},
    kit::compile,
};
use alloy::{
    network::{EthereumWallet, TransactionBuilder},
    primitives::{Address, Bytes, B256, U256},
    providers::Provider as _,
    rpc::types::TransactionRequest,
    sol_types::SolCall,
    transports::TransportError,
};
use futures::StreamExt;
use std::{
    fmt::Write as _,
    path::{Path, PathBuf},
    time::Instant,
};
use tokio_util::sync::CancellationToken;

#[derive(Debug, thiserror::Error)]
pub enum BenchError {
    #[error(transparent)]
    World(#[from] WorldError),
    #[error(transparent)]
    Run(#[from] crate::engine::RunError),
    #[error(transparent)]
    Compile(#[from] compile::CompileError),
    #[error(transparent)]
    Anvil(#[from] crate::kit::anvil::AnvilError),
    #[error(transparent)]
    Chain(#[from] crate::chain::ChainError),
    #[error(transparent)]
    Record(#[from] crate::record::RecordError),
    /// The bundled language model's server did not start (or its lock did not read).
    #[error(transparent)]
    Llm(#[from] riskgate_kit::llm::LlmError),
    /// The bundled language model failed an ask.
    #[error(transparent)]
    Inference(#[from] crate::inference::InferenceError),
    /// A contract call or transaction refused, named, with its decoded revert.
    #[error(transparent)]
    Call(#[from] CallFailed),
    /// A checked condition that did not hold (a count, a reason, an exit status).
    #[error("bench step {step}: {what}")]
    Check { step: String, what: String },
    #[error("bench: {what} failed")]
    Rpc {
        what: &'static str,
        #[source]
        source: Box<TransportError>,
    },
    #[error("bench: {what} failed")]
    Follow {
        what: &'static str,
        #[source]
        source: Box<FollowError>,
    },
    #[error("bench: reading the {what} failed")]
    Collect {
        what: String,
        #[source]
        source: Box<CollectError>,
    },
    #[error("bench: reading the fees failed")]
    Fees(#[source] Box<sender::ExecError>),
    #[error("bench: the gas of a baseline batch could not be estimated")]
    Estimate(#[source] Box<sender::ExecError>),
    #[error("bench: signing a baseline transaction failed")]
    Sign(#[source] Box<dyn std::error::Error + Send + Sync>),
    #[error("bench: an undecodable Decision log")]
    Decode(#[source] alloy::sol_types::Error),
    #[error("bench: building the lens call failed")]
    Lens(#[source] Box<crate::chain::lens::LensError>),
    #[error("bench: gasUsed {hex:?} of the lens call's trace is not hex")]
    GasHex {
        hex: String,
        #[source]
        source: std::num::ParseIntError,
    },
    #[error("bench: cannot {what}")]
    Io {
        what: String,
        #[source]
        source: std::io::Error,
    },
    #[error("bench: waiting for the keeper process failed")]
    Join(#[source] tokio::task::JoinError),
}

/// The bench measures: whatever fails in it, it failed while running.
impl crate::domain::exit::Classify for BenchError {
    fn fault(&self) -> crate::domain::exit::Fault {
        crate::domain::exit::Fault::Runtime
    }
}

pub type Result<T> = std::result::Result<T, BenchError>;

/// Markets of the attested mode's comparison: each decided once by the relayed keeper and once
/// through three attestor processes.
const ATTESTED_MARKETS: usize = 100;
/// States the attested section's anvil keeps: more than the blocks one cycle mines.
const ATTESTED_STATES: usize = 1_000;

/// A failed check of `step`, saying what was found.
/// One keeper cycle over `n` due markets, which must submit all `n` (`what` names it in the
/// error), and its wall time in seconds.
pub(super) async fn timed_cycle(
    k: &mut crate::engine::Engine,
    n: usize,
    what: &str,
) -> Result<(f64, crate::engine::CycleReport)> {
    let cancel = CancellationToken::new();
    let t = Instant::now();
    let report = k.cycle(None, &cancel).await?;
    let secs = t.elapsed().as_secs_f64();
    if report.submitted != n {
        return Err(check(what, format!("submitted {} of {n}", report.submitted)));
    }
    Ok((secs, report))
}

pub(super) fn check(step: &str, what: String) -> BenchError {
    BenchError::Check { step: step.to_string(), what }
}

pub(super) fn rpc_err(what: &'static str) -> impl Fn(TransportError) -> BenchError {
    move |e| BenchError::Rpc { what, source: Box::new(e) }
}

fn follow_err(what: &'static str) -> impl Fn(FollowError) -> BenchError {
    move |e| BenchError::Follow { what, source: Box::new(e) }
}

pub(super) fn io_err(what: impl Into<String>) -> impl FnOnce(std::io::Error) -> BenchError {
    let what = what.into();
    move |source| BenchError::Io { what, source }
}

/// The chain head as the keeper reads it.
async fn head(w: &World) -> Result<BlockRef> {
    crate::chain::follower::head(&w.keeper_rpc).await.map_err(follow_err("reading the chain head"))
}

/// The bench's own bounds: the price band [0.05, 0.95], lots of 10 units and 600 s of headroom
/// (the mixed workload's BUY_DOWN at 0.98 is refused by the band, reason 5), with the position
/// caps and the drawdown bound opened wide, so that the throughput run measures the keeper, not
/// the gate's limits.
fn bench_params() -> IRiskGate::Params {
    IRiskGate::Params {
        minPrice: U256::from(50_000u64),
        maxPrice: U256::from(950_000u64),
        maxSize: U256::from(10_000_000u64),
        minHeadroom: 600,
        maxConcurrent: 255,
        maxNotional: U256::from(1_000_000_000_000u64),
        maxHorizon: 86_400,
        maxDrawdown: U256::from(1_000_000_000_000u64),
        writeOffGrace: 3_600,
        minFillBps: 2_500,
    }
}

/// The gate's markets, discovered as the keeper discovers them (its follower, from the deploy
/// block, in creation order).
async fn discover(w: &World) -> Result<Vec<MarketInfo>> {
    let mut follower =
        Follower::new(w.deployment.gate, w.deployment.factory, w.deployment.deploy_block, 0);
    follower.step(&w.keeper_rpc).await.map_err(follow_err("discovering the markets"))?;
    Ok(follower.markets().cloned().collect())
}

/// The quote the keeper sends for each `(market, answer)`, made as the keeper makes it: the
/// market discovered by the follower, its book read through the lens at the head
/// (`Collector::read`), and the answer quoted at the chain time of that head with the
/// keeper's policy (`Engine::builder`: `QuotePolicy::default()`, 50 bps and 60 s).
async fn keeper_quotes(w: &World, asks: &[(Address, &str)]) -> Result<Vec<Quote>> {
    let known = discover(w).await?;
    let infos = asks
        .iter()
        .map(|(m, _)| {
            known
                .iter()
                .find(|i| i.address == *m)
                .cloned()
                .ok_or_else(|| check("keeper quotes", format!("market {m} not discovered")))
        })
        .collect::<Result<Vec<_>>>()?;
    let read = head(w).await?;
    let policy = QuotePolicy::default();
    let reads =
        crate::chain::lens::read_markets(&w.keeper_rpc, &infos, read.number, READ_CONCURRENCY)
            .await;
    reads
        .into_iter()
        .zip(asks)
        .map(|((info, state), (_, raw))| {
            let state = state.map_err(|e| BenchError::Collect {
                what: format!("book of {}", info.address),
                source: Box::new(e),
            })?;
            Ok(policy.quote(raw, &state, read.time))
        })
        .collect()
}

/// Markets the live keeper beside the floor re-asks every cycle.
const FLOOR_LIVE_MARKETS: usize = 26;

/// Progress on a long step: every this many markets seeded.
const PROGRESS_EVERY: usize = 100;
/// A day of chain time: every bench market expires this far after it is seeded, inside the
/// gate's horizon (`maxHorizon` 86,400 s) once any time has passed.
const DAY_SECS: u64 = 86_400;
/// Grid of every bench market: tick 0.01, lot 100 (10,000 × 100 = 1e6), with the smallest
/// minimum size rule 20 allows (`World::fillable_min_qty`).
const TICK: u64 = 10_000;
const LOT: u64 = 100;
/// Per-market reads in flight at once (the keeper's default `--concurrency`).
const READ_CONCURRENCY: usize = 32;
/// Receipt polls in flight in the baseline, as in the keeper (`max(concurrency, 8)` at the
/// default `--concurrency` 32).
const RECEIPT_CONCURRENCY: usize = 32;
/// Each read figure is the median of this many runs.
const READ_RUNS: usize = 3;

/// Markets whose book (bid 0.48 / ask 0.52) makes the builtin model abstain.
pub(super) async fn seed_abstain_markets(w: &World, n: usize) -> Result<Vec<Address>> {
    let expiry = w.chain_time().await? + DAY_SECS;
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let m = w.create_market(TICK, LOT, w.fillable_min_qty(LOT), expiry).await?;
        w.ask(m, 520_000, 1_000_000).await?;
        out.push(m);
        progress("abstain markets", i + 1, n);
    }
    Ok(out)
}

fn progress(what: &str, done: usize, of: usize) {
    if done.is_multiple_of(PROGRESS_EVERY) || done == of {
        eprintln!("bench:   {done}/{of} {what} seeded");
    }
}

/// The median of `runs` timings of `f`, with its last result.
async fn median_secs<T, F, Fut>(runs: usize, mut f: F) -> (f64, T)
where
    F: FnMut() -> Fut,
    Fut: std::future::Future<Output = T>,
{
    let mut times = Vec::with_capacity(runs);
    let mut last = None;
    for _ in 0..runs.max(1) {
        let t = Instant::now();
        last = Some(f().await);
        times.push(t.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    let mid = times[times.len() / 2];
    (mid, last.expect("at least one run"))
}

pub(super) fn verdict(ok: bool) -> &'static str {
    if ok {
        "meets target"
    } else {
        "MISSES target"
    }
}

/// The bot's batch window for every keeper the bench runs (the test world's keeper holds a
/// cycle's answers to its end instead, for records that never depend on timing).
pub(crate) const BOT_WINDOW: std::time::Duration = crate::engine::DEFAULT_BATCH_WINDOW;

/// `keeper bench`: the anvil binary and the output file (relative to the project root), and the
/// market counts of the throughput and the memory runs.
#[derive(Debug, Clone)]
pub struct BenchConfig {
    pub anvil: PathBuf,
    pub markets: usize,
    pub rss_markets: usize,
    /// Record sizes (decisions, ascending) the long-run figures are measured at.
    pub record_sizes: Vec<usize>,
    /// Seconds the floor runs beside a live keeper.
    pub floor_live_secs: u64,
    pub out: PathBuf,
    /// Only the attested section, printed, not written.
    pub attested_only: bool,
    /// Only the one-cycle section, printed, not written.
    pub cycle_only: bool,
    /// Only the throughput section, printed, not written.
    pub throughput_only: bool,
    /// Only the bundled model's section, printed, not written.
    pub model_only: bool,
    /// How much history the one-cycle section's anvil keeps: only the latest state (the
    /// default), the latest N, or every state (issue 37: anvil's pruned mode slows as its state
    /// grows, `script/anvil-growth.py`).
    pub history: crate::kit::anvil::History,
}

/// The command line's `keeper bench` arguments, resolved.
impl From<&crate::commands::cli::BenchArgs> for BenchConfig {
    fn from(a: &crate::commands::cli::BenchArgs) -> Self {
        Self {
            anvil: a.anvil.anvil.clone(),
            markets: a.markets,
            rss_markets: a.rss_markets,
            record_sizes: a.record_sizes.clone(),
            floor_live_secs: a.floor_live_secs,
            out: a.out.clone(),
            attested_only: a.attested_only,
            cycle_only: a.cycle_only,
            throughput_only: a.throughput_only,
            model_only: a.model_only,
            history: match (a.full_history, a.recent_history) {
                (true, _) => crate::kit::anvil::History::Full,
                (false, Some(n)) => crate::kit::anvil::History::Recent(n),
                (false, None) => crate::kit::anvil::History::Pruned,
            },
        }
    }
}

pub async fn run(args: &BenchConfig, root: &Path) -> Result<()> {
    let anvil_bin = root.join(&args.anvil);
    let tmp = tempfile::tempdir().map_err(io_err("create a temporary folder"))?;
    let artifacts = compile::compile(root)?;
    let tmp_before = memory::anvil_tmp();

    // The figures read only the latest state; anvil need not keep older ones.
    let prune = ["--prune-history".to_string()];
    // Attestors read the market at its read block: those states must still be held (a real
    // node keeps its recent ones).
    let recent = ["--prune-history".to_string(), ATTESTED_STATES.to_string()];
    if args.attested_only {
        eprintln!("bench: the attested mode only, {ATTESTED_MARKETS} markets");
        let anvil = crate::kit::anvil::Anvil::start(&anvil_bin, None, &recent).await?;
        let w = World::deploy_on(anvil, artifacts.clone(), &bench_params()).await?;
        let att =
            attested::attested(&w, root, ATTESTED_MARKETS, &tmp.path().join("attested")).await;
        w.stop().await;
        let mut md = String::new();
        attested::write_attested(&mut md, &att?);
        print!("{md}");
        return Ok(());
    }
    if args.cycle_only {
        use crate::kit::anvil::Anvil;
        let history = args.history;
        eprintln!("bench: one cycle over {} markets only, anvil {history:?}", args.rss_markets);
        let anvil = Anvil::builder(&anvil_bin).history(history).start().await?;
        let w = World::deploy_on(anvil, artifacts.clone(), &bench_params()).await?;
        let big = cycle::big_cycle(&w, args.rss_markets, &tmp.path().join("cycle")).await;
        w.stop().await;
        let mut md = String::new();
        cycle::write_cycle(&mut md, &big?);
        print!("{md}");
        return Ok(());
    }
    if args.model_only {
        let llm = model::llm_figures(&anvil_bin, &artifacts, root, &tmp.path().join("llm")).await?;
        let mut md = String::new();
        model::write_llm(&mut md, &llm);
        print!("{md}");
        return Ok(());
    }
    if args.throughput_only {
        let tps = throughput::at_sizes(
            &anvil_bin,
            &artifacts,
            &[args.markets, args.rss_markets],
            tmp.path(),
        )
        .await?;
        let mut md = String::new();
        throughput::write_throughput(&mut md, &tps);
        print!("{md}");
        return Ok(());
    }
    eprintln!("bench: gas figures from receipts");
    let anvil = crate::kit::anvil::Anvil::start(&anvil_bin, None, &prune).await?;
    let w = World::deploy_on(anvil, artifacts.clone(), &bench_params()).await?;
    let gas = gas::gas(&w).await;
    w.stop().await;
    let gas = gas?;

    let sizes = [args.markets, args.rss_markets];
    let tp = throughput::at_sizes(&anvil_bin, &artifacts, &sizes, tmp.path()).await?;

    eprintln!("bench: the attested mode, {} markets", ATTESTED_MARKETS);
    let anvil = crate::kit::anvil::Anvil::start(&anvil_bin, None, &recent).await?;
    let w = World::deploy_on(anvil, artifacts.clone(), &bench_params()).await?;
    let att = attested::attested(&w, root, ATTESTED_MARKETS, &tmp.path().join("attested")).await;
    w.stop().await;
    let att = att?;

    eprintln!(
        "bench: one cycle, book reads and peak RSS of `keeper run --once`, {} markets",
        args.rss_markets
    );
    let anvil = crate::kit::anvil::Anvil::start(&anvil_bin, None, &prune).await?;
    let w = World::deploy_on(anvil, artifacts.clone(), &bench_params()).await?;
    let big = cycle::big_cycle(&w, args.rss_markets, &tmp.path().join("cycle")).await;
    let rss = match big {
        Ok(_) => {
            eprintln!("bench:   keeper run --once over {} markets", args.rss_markets);
            Some(memory::peak_rss(&w, root, &tmp.path().join("rss")).await)
        }
        Err(_) => None,
    };
    w.stop().await;
    let big = big?;
    let (rss_kib, rss_secs) = rss.unwrap_or_else(|| Err(check("rss", "not run".into())))?;

    eprintln!("bench: the record at {:?} decisions", args.record_sizes);
    let anvil = crate::kit::anvil::Anvil::start(&anvil_bin, None, &prune).await?;
    let w = World::deploy_on(anvil, artifacts.clone(), &bench_params()).await?;
    let t_long = Instant::now();
    let long =
        history::record_figures(&w, root, &tmp.path().join("longrun"), &args.record_sizes).await;
    w.stop().await;
    let long = long?;
    eprintln!("bench:   the record's part took {:.1} s", t_long.elapsed().as_secs_f64());

    eprintln!("bench: the floor beside a live keeper, {} s", args.floor_live_secs);
    let anvil = crate::kit::anvil::Anvil::start(&anvil_bin, None, &prune).await?;
    let w = World::deploy_on(anvil, artifacts.clone(), &bench_params()).await?;
    let live = history::floor_live(
        &w,
        root,
        &tmp.path().join("live"),
        FLOOR_LIVE_MARKETS,
        args.floor_live_secs,
        60,
    )
    .await
    .map_err(|e| crate::error_chain(&e));
    w.stop().await;

    eprintln!(
        "bench: the bundled language model: {} asks, then one cycle over {} markets against the builtin model's",
        model::LLM_ASKS,
        model::LLM_MARKETS
    );
    let t_llm = Instant::now();
    let llm = model::llm_figures(&anvil_bin, &artifacts, root, &tmp.path().join("llm")).await?;
    eprintln!("bench:   the bundled model's part took {:.1} s", t_llm.elapsed().as_secs_f64());
    let tmp_after = memory::anvil_tmp();

    let mut md = String::new();
    let _ = writeln!(md, "# Keeper benchmark\n");
    let _ = writeln!(md, "Written by `make bench` (`keeper bench`) against anvil from the pinned toolchain (every anvil with `--prune-history`) on this machine ({} cores).\n", std::thread::available_parallelism().map(|n| n.get()).unwrap_or(1));
    throughput::write_throughput(&mut md, &tp);
    attested::write_attested(&mut md, &att);
    cycle::write_cycle(&mut md, &big);
    memory::write_memory(&mut md, args.rss_markets, rss_kib, rss_secs);
    history::write_record(&mut md, &long);
    match &long.floor {
        Ok(f) => floor::write_floor(&mut md, f),
        Err(e) => {
            let _ = writeln!(md, "## The floor\n\nNot measured: {e}.\n");
        }
    }
    floor::write_live(&mut md, &live);
    model::write_llm(&mut md, &llm);
    memory::write_anvil_tmp(&mut md, tmp_before, tmp_after);
    gas::write_gas(&mut md, &gas);
    let out = root.join(&args.out);
    crate::record::write_atomic(&out, md.as_bytes())?;
    print!("{md}");
    Ok(())
}
