//! The bot, as a pipeline of typed stages (collector → strategy → executor → recorder), one
//! file each:
//!
//! 1. **follow** ([`follow`], collector; [`crate::follower`]): check the blocks already read are
//!    still the chain's (rewind and rescan if a reorg replaced them), scan confirmed blocks for
//!    markets and the gate's logs, and settle the journal's pending submissions against the
//!    chain: confirm the mined ones, re-send stuck ones at the same nonce with bumped fees, mark
//!    replaced ones.
//! 2. **read** ([`read`]): every due market (open, trusted resolver, inside the horizon, no
//!    pending submission, not asked within the re-ask interval) is read through the BookLens.
//! 3. **ask** ([`ask`], strategy): the model is asked about every market concurrently; each
//!    answer is quoted against the book the model was shown and handed on as soon as it arrives.
//! 4. **submit** ([`submit`], executor): signed, journalled to disk, then sent, one by one as
//!    answers arrive, each at its own nonce; the decisions decoded from their own receipts.
//! 5. **positions** ([`positions`]): redeem final markets, write off stale positions.
//! 6. **record** ([`record`]): follow again and re-write the record from confirmed chain logs
//!    plus the journal.
//!
//! [`Keeper::cycle`] below runs them in that order. Each stage returns what it produced and
//! what failed; failures that never reach the chain are off-chain rows, journalled the moment
//! they happen. State that matters is re-derived from the chain and the journal on every start.

mod ask;
mod follow;
pub mod health;
mod positions;
mod read;
mod record;
mod submit;

use crate::{
    bindings::IRiskGate::Quote,
    chain,
    collectors::{self, MarketInfo, MarketState},
    config::RunConfig,
    executor::{self, BroadcastError, ExecError, Fees, Mined, Refusal, Sender},
    follower::{self, BlockRef, Follower},
    journal::{self, Entry, Journal, Outcome, QuoteSent, Submission},
    quote::QuotePolicy,
    recorder::{
        self,
        feed::{self, Annotation, ChainRecord, DecisionId, OffchainRow, RowNote},
        GateFacts, FEED_FILE,
    },
    strategy::{
        prompt::{strategy_hash, ReadAt},
        Model, Prompt,
    },
};
use alloy::{
    primitives::{Address, B256, U256},
    providers::DynProvider,
    signers::local::PrivateKeySigner,
};
use futures::{stream, StreamExt};
use std::{
    collections::{BTreeMap, HashMap, HashSet},
    path::{Path, PathBuf},
    time::{Duration, Instant},
};
use tokio_util::sync::CancellationToken;
use tracing::{info, warn};

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Chain(#[from] chain::ChainError),
    #[error(transparent)]
    Collect(#[from] collectors::CollectError),
    #[error(transparent)]
    Follow(#[from] follower::FollowError),
    #[error(transparent)]
    Record(#[from] recorder::RecordError),
    #[error(transparent)]
    Journal(#[from] journal::JournalError),
    #[error(transparent)]
    Inference(#[from] crate::strategy::InferenceError),
    #[error(transparent)]
    Exec(#[from] ExecError),
    #[error(transparent)]
    Deploy(#[from] crate::deploy::DeployError),
    #[error("the node stayed unreachable for {secs} s, past --max-outage; every row is on disk")]
    Outage {
        secs: u64,
        /// The last failure: what the node was still answering when the keeper gave up.
        #[source]
        last: Box<RunError>,
    },
}

impl RunError {
    /// Errors that come from the local disk, not from the node: retrying cannot help, and a
    /// keeper that cannot journal must not send.
    fn is_local(&self) -> bool {
        // The recorder never touches the node: all its errors are the disk's.
        matches!(self, Self::Journal(_) | Self::Record(_))
    }
}

pub type Result<T> = std::result::Result<T, RunError>;

/// A model answer ready to submit, with the keeper's quote for it and the read it came from.
#[derive(Debug, Clone)]
pub struct Answer {
    pub market: Address,
    pub raw: String,
    pub prompt_hash: B256,
    pub quote: Quote,
    pub note: Annotation,
    pub read: BlockRef,
}

/// A market the model gave no answer about (inference failed): an off-chain row.
#[derive(Debug, Clone)]
struct Unanswered {
    market: Address,
    /// None when no prompt was rendered (the book read before it failed).
    prompt_hash: Option<B256>,
    /// The failure was the chain's or the market's, not the model's: the breaker ignores it.
    read_failed: bool,
    /// The failure with its whole cause chain, on one line.
    error: String,
    detail: feed::TransportDetail,
}

/// One submission that reached the chain: its `Decision`, decoded from the transaction's own
/// receipt, so the row keeps the identity it had from the read.
#[derive(Debug, Clone)]
pub struct Submitted {
    /// The submission's id in the journal.
    pub id: u64,
    /// The decision's identity on chain, as its row in the record carries it.
    pub decision: DecisionId,
    pub reason: u8,
}

/// What settling the journal against the chain did.
#[derive(Debug, Default, Clone)]
pub struct Settled {
    pub confirmed: usize,
    pub awaiting_confirmations: usize,
    pub resent: usize,
    pub replaced: usize,
    pub reverted: usize,
    pub reorged: usize,
    pub gaps_filled: usize,
}

/// What one cycle did.
#[derive(Debug, Default, Clone)]
pub struct CycleReport {
    pub markets_known: usize,
    pub asked: usize,
    /// Submissions signed, journalled and sent this cycle.
    pub submitted: usize,
    /// This cycle's submissions mined within the cycle, each with the `Decision` decoded from its
    /// own receipt. They enter the record only once confirmed (`--confirmations` deep), through
    /// the follower, under the same [`DecisionId`].
    pub mined: Vec<Submitted>,
    pub offchain_failures: usize,
    /// Due markets not asked this cycle because their last asks failed (per-market backoff).
    pub backing_off: usize,
    /// Due markets not asked because the inference breaker is open (or only probing).
    pub held_back: usize,
    pub redeemed: usize,
    pub written_off: usize,
    pub head: u64,
    /// Blocks confirmed into the record (`head - confirmations`).
    pub safe: u64,
    pub pending: usize,
    pub settled: Settled,
    pub rewound_to: Option<u64>,
}

/// The keeper's working state.
pub struct Keeper {
    pub provider: DynProvider,
    pub chain_id: u64,
    pub gate: Address,
    pub factory: Address,
    pub keeper_addr: Address,
    pub from_block: u64,
    pub concurrency: usize,
    pub reask_secs: u64,
    pub quote: QuotePolicy,
    pub dry_run: bool,
    pub strategy_text: String,
    pub results: Option<PathBuf>,
    /// How long a sent transaction may wait for inclusion before it is re-sent at the same nonce
    /// with bumped fees; also how long a cycle waits for its own transactions to be mined.
    pub resend_after: Duration,
    signer: Option<PrivateKeySigner>,
    sender: Option<Sender>,
    follower: Follower,
    journal: Journal,
    /// When this process last sent each pending submission (absent after a restart: due now).
    last_sent: HashMap<u64, Instant>,
    /// The keeper's own calls (redeem, writeOff) sent and not yet seen mined, by market: each is
    /// re-sent at its own nonce with bumped fees, never at a new one.
    own_pending: HashMap<Address, positions::OwnPending>,
    final_markets: HashSet<Address>,
    /// Markets whose question could not be read or checked, already recorded as such (one row
    /// each per run, not one per cycle).
    questionless: HashSet<Address>,
    /// Notes of decisions made before the journal existed, from the feed on disk.
    legacy_notes: BTreeMap<DecisionId, RowNote>,
    facts: Option<GateFacts>,
    times: HashMap<u64, u64>,
    last_step: follower::Step,
    /// Fees for new submissions, read once per cycle (a re-send reads its own).
    fees: Option<Fees>,
    /// Backoff per market and the breaker over the model (the ask stage's own state).
    pub health: health::InferenceHealth,
    pub record: ChainRecord,
}

impl Keeper {
    /// A keeper for `gate`, reading and sending through `provider`, keeping its journal in
    /// memory until [`Keeper::open_journal`] (a results folder) or a signer is given.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        provider: DynProvider,
        chain_id: u64,
        gate: Address,
        factory: Address,
        keeper_addr: Address,
        from_block: u64,
        results: Option<PathBuf>,
    ) -> Self {
        Self {
            provider,
            chain_id,
            gate,
            factory,
            keeper_addr,
            from_block,
            concurrency: 32,
            reask_secs: 3_600,
            quote: QuotePolicy::default(),
            dry_run: false,
            strategy_text: String::new(),
            results,
            resend_after: Duration::from_secs(30),
            signer: None,
            sender: None,
            follower: Follower::new(gate, factory, from_block, 0),
            journal: Journal::in_memory(),
            last_sent: HashMap::new(),
            own_pending: HashMap::new(),
            final_markets: HashSet::new(),
            questionless: HashSet::new(),
            legacy_notes: BTreeMap::new(),
            facts: None,
            times: HashMap::new(),
            last_step: follower::Step::default(),
            fees: None,
            health: health::InferenceHealth::default(),
            record: ChainRecord::default(),
        }
    }

    /// The key transactions are signed with (its address must be `keeper_addr`).
    pub fn with_signer(mut self, signer: PrivateKeySigner) -> Self {
        self.keeper_addr = signer.address();
        self.signer = Some(signer);
        self
    }

    /// Blocks a decision must be buried under before it enters the record.
    pub fn with_confirmations(mut self, n: u64) -> Self {
        self.follower.confirmations = n;
        self
    }

    pub fn set_log_range(&mut self, range: u64) {
        self.follower.log_range = range.max(1);
    }

    /// Opens the results folder's journal (creating it) and the feed already there: notes and
    /// off-chain rows of a feed written before the journal existed are kept, and a feed of
    /// another chain or gate is refused. Without a results folder the journal stays in memory.
    pub fn load_existing_feed(&mut self) -> Result<()> {
        let Some(dir) = self.results.clone() else { return Ok(()) };
        let rows = feed::read_feed_for(&dir.join(FEED_FILE), self.chain_id, self.gate)?;
        // The keeper re-links the whole feed on every write: a feed edited since it was last
        // written would be sealed silently. Say so before that happens.
        // A folder with neither file is a first start: nothing to check.
        let nothing_yet = !dir.join(FEED_FILE).exists() && !dir.join(recorder::HEAD_FILE).exists();
        let problems = if nothing_yet {
            Vec::new()
        } else {
            feed::check_links_in(&dir, self.chain_id, self.gate)?.problems
        };
        for problem in &problems {
            warn!(feed = %dir.join(FEED_FILE).display(), problem = %problem, "the feed on disk is not the one the keeper wrote last (edited, or a crash between feed.jsonl and feed.head); it is re-written from the chain and the journal");
        }
        let fresh = !dir.join(journal::JOURNAL_FILE).exists();
        self.journal = Journal::open(&dir)?;
        let (notes, off) = feed::split_feed(&rows);
        self.legacy_notes = notes;
        if fresh {
            // A feed from before the journal: its off-chain rows move into the journal, once.
            for row in off {
                self.journal.append(Entry::Offchain(row))?;
            }
        }
        Ok(())
    }

    pub fn markets(&self) -> Vec<MarketInfo> {
        self.follower.markets().cloned().collect()
    }

    pub fn journal(&self) -> &Journal {
        &self.journal
    }

    pub fn facts(&self) -> Option<&GateFacts> {
        self.facts.as_ref()
    }

    /// The sender, created on first use from the signer (a dry run has none).
    async fn sender(&mut self) -> Result<&mut Sender> {
        if self.sender.is_none() {
            let signer = self.signer.clone().ok_or(ExecError::NoSigner)?;
            let floor = self.pending_nonce_floor();
            let s = Sender::new(self.provider.clone(), signer, self.chain_id, floor).await?;
            self.sender = Some(s);
        }
        Ok(self.sender.as_mut().expect("just set"))
    }

    /// The lowest nonce above every pending submission's: new transactions never reuse a
    /// nonce a pending one may still be mined at.
    fn pending_nonce_floor(&self) -> u64 {
        let own = self.own_pending.values().map(|o| o.nonce + 1);
        self.journal.pending().map(|t| t.sub.nonce + 1).chain(own).max().unwrap_or(0)
    }

    // ---------------------------------------------------------------- the cycle

    /// One full cycle with `model`: follow, settle, read, ask (each answer submitted the moment
    /// it arrives, while slower ones are still being answered), wait for this cycle's
    /// transactions, redeem, write off, follow again and write the record.
    pub async fn cycle(
        &mut self,
        model: &Model,
        scenario: Option<&str>,
        cancel: &CancellationToken,
    ) -> Result<CycleReport> {
        let off_before = self.journal.offchain().len();
        self.fees = None;
        let step = self.follow().await?;
        let mut settled = self.settle().await?;
        // The chain time the next block will carry: the quotes' deadlines count from it, and
        // the inference backoff and breaker run on it.
        let send_time = follower::next_block_time(&self.provider, &step.head).await;
        let due = self.due_markets(step.head.time);
        let due = self.with_questions(due, step.head)?;
        let admitted = self.health.admit(due, send_time, |m| m.address);
        if admitted.held > 0 {
            match admitted.breaker {
                health::Breaker::Open { until } => info!(
                    held = admitted.held,
                    until, "inference breaker open: no market is asked before chain time {until}"
                ),
                _ => info!(held = admitted.held, "inference breaker probing: one market is asked"),
            }
        }
        let states = self.read_open(&admitted.ask, step.head).await?;
        let asked = states.len();
        let mut sink = ask::Sink::Submit(Vec::new());
        self.ask_each(states, model, step.head, send_time, scenario, cancel, &mut sink).await?;
        let ask::Sink::Submit(ids) = sink else { unreachable!("submitted above") };
        let mined = self.await_mined(&ids).await?;
        // Positions as recorded at the start of the cycle: one filled just now sits in a market
        // that was open when read, so it is redeemed by a later cycle.
        let (own_redeemed, own_written_off) = self.settle_own().await?;
        let redeemed = own_redeemed + self.redeem_final().await?;
        let written_off = own_written_off + self.write_off_stale(step.head.time).await?;
        let end = self.follow().await?;
        let again = self.settle_with(false).await?;
        settled.confirmed += again.confirmed;
        settled.resent += again.resent;
        settled.replaced += again.replaced;
        settled.reverted += again.reverted;
        settled.reorged += again.reorged;
        settled.gaps_filled += again.gaps_filled;
        settled.awaiting_confirmations = again.awaiting_confirmations;
        if !self.dry_run {
            self.write_results()?;
        }
        Ok(CycleReport {
            markets_known: self.follower.market_count(),
            asked,
            submitted: ids.len(),
            mined,
            offchain_failures: self.journal.offchain().len() - off_before,
            backing_off: admitted.backing_off,
            held_back: admitted.held,
            redeemed,
            written_off,
            head: end.head.number,
            safe: end.safe.number,
            pending: self.journal.pending().count(),
            settled,
            rewound_to: step.rewound_to.or(end.rewound_to),
        })
    }
}

/// Backoff between failed cycles: doubling from the first, capped, so an outage of any length
/// is waited out without hammering the node.
pub const BACKOFF_FIRST: Duration = Duration::from_millis(500);
pub const BACKOFF_CAP: Duration = Duration::from_secs(15);

/// Confirmations when `--confirmations` is not given: none on a local dev chain (anvil and
/// hardhat use chain id 31337, mine on demand and never reorganise by themselves), two on any
/// other network.
pub const DEV_CHAIN_ID: u64 = 31_337;
pub const DEFAULT_CONFIRMATIONS: u64 = 2;

pub fn default_confirmations(chain_id: u64) -> u64 {
    if chain_id == DEV_CHAIN_ID {
        0
    } else {
        DEFAULT_CONFIRMATIONS
    }
}

/// `keeper run`: the long-lived bot. Node failures are retried with a bounded backoff for as
/// long as `--max-outage` allows (forever by default); a shutdown signal ends it cleanly (exit
/// 0); whatever ends it, the record is written first, and every off-chain row is already in the
/// journal.
pub async fn run(cfg: RunConfig, root: &Path, cancel: CancellationToken) -> Result<()> {
    let Some((reader, chain_id)) = connect_waiting(&cfg, &cancel).await? else {
        info!("stopping on a signal before the node answered");
        return Ok(());
    };
    let saved = crate::deploy::load_saved(&reader, root, chain_id, cfg.log_range).await?;
    let gate = match (cfg.gate, &saved) {
        (Some(g), _) => g,
        (None, Some(d)) => d.gate,
        (None, None) => {
            return Err(chain::ChainError::NoSavedGate {
                chain_id,
                path: crate::deploy::saved_path(root, chain_id).display().to_string(),
            }
            .into())
        }
    };
    chain::check_gate(&reader, gate, chain_id).await?;
    let factory = collectors::gate_factory(&reader, gate).await?;
    let results =
        cfg.results.clone().unwrap_or_else(|| recorder::default_results_dir(root, chain_id, gate));
    let from_block = cfg
        .from_block
        .or_else(|| saved.as_ref().filter(|d| d.gate == gate).map(|d| d.deploy_block))
        .unwrap_or(0);
    let confirmations = cfg.confirmations.unwrap_or_else(|| default_confirmations(chain_id));
    // The bundled model's server, if any, lives until this function returns.
    let (model, _model_server) = Model::start(&cfg.model, cfg.inference_timeout, root).await?;
    let mut keeper = Keeper::new(
        reader.clone(),
        chain_id,
        gate,
        factory,
        Address::ZERO,
        from_block,
        Some(results.clone()),
    )
    .with_confirmations(confirmations);
    if cfg.dry_run {
        keeper.keeper_addr = crate::bindings::IRiskGate::new(gate, &reader)
            .keeper()
            .call()
            .await
            .map_err(|e| chain::ChainError::Call(Box::new(e)))?;
    } else {
        let signer = chain::load_signer(cfg.keystore.as_deref())?;
        chain::check_keeper_ready(&reader, gate, signer.address()).await?;
        keeper = keeper.with_signer(signer);
    }
    keeper.set_log_range(cfg.log_range);
    keeper.concurrency = cfg.concurrency;
    keeper.reask_secs = cfg.reask_secs;
    keeper.quote = cfg.quote;
    keeper.dry_run = cfg.dry_run;
    keeper.strategy_text = cfg.strategy_text.clone();
    keeper.resend_after = cfg.resend_after;
    if !cfg.dry_run {
        keeper.load_existing_feed()?;
    }
    info!(
        chain_id,
        %gate,
        keeper = %keeper.keeper_addr,
        provider = model.name(),
        model = %model.model(),
        confirmations,
        results = %results.display(),
        pending = keeper.journal().pending().count(),
        dry_run = cfg.dry_run,
        "keeper starting"
    );
    let outcome = run_loop(&mut keeper, &model, &cfg, &cancel).await;
    // Whatever ended the loop, the record on disk is brought up to date (the off-chain rows are
    // already in the journal; this only re-renders the feed from it).
    if !cfg.dry_run {
        if let Err(e) = keeper.write_results() {
            warn!(error = %crate::error_chain(&e), "could not re-write the record on exit; the journal holds every row");
        }
    }
    outcome
}

/// Whether a failure to reach the node looks like a node that is not up yet (connection refused,
/// reset or timed out; a gateway's 502/503/504), not like a setting that can never work (a TLS
/// certificate the keeper does not trust, a host that does not resolve): only the first is
/// waited for at start.
fn not_up_yet(e: &chain::ChainError) -> bool {
    use alloy::transports::{RpcError, TransportErrorKind};
    use std::io::ErrorKind::*;
    let chain::ChainError::Unreachable { source, .. } = e else { return false };
    if let RpcError::Transport(TransportErrorKind::HttpError(h)) = source.as_ref() {
        return matches!(h.status, 502..=504);
    }
    let mut next: Option<&(dyn std::error::Error + 'static)> = Some(e);
    while let Some(err) = next {
        if let Some(io) = err.downcast_ref::<std::io::Error>() {
            if matches!(
                io.kind(),
                ConnectionRefused | ConnectionReset | ConnectionAborted | TimedOut
            ) {
                return true;
            }
        }
        next = err.source();
    }
    false
}

/// An outage being waited out, at start or mid-run: a backoff doubling from [`BACKOFF_FIRST`] to
/// [`BACKOFF_CAP`], given up once the node has been unreachable for `--max-outage`.
struct Outage {
    since: Option<Instant>,
    backoff: Duration,
    max: Option<Duration>,
}

impl Outage {
    fn new(max: Option<Duration>) -> Self {
        Self { since: None, backoff: BACKOFF_FIRST, max }
    }

    /// The node answered: the next failure starts a new outage.
    fn over(&mut self) {
        self.since = None;
        self.backoff = BACKOFF_FIRST;
    }

    /// Counts failure `e` against the budget: past it, the error to exit with; else waits out
    /// the backoff (cut so the last try lands at the budget, never under 50 ms), or until a
    /// signal, logging `what`.
    async fn wait_out(
        &mut self,
        e: RunError,
        what: &'static str,
        cancel: &CancellationToken,
    ) -> Result<()> {
        let down = self.since.get_or_insert_with(Instant::now).elapsed();
        if self.max.is_some_and(|max| down >= max) {
            warn!(error = %crate::error_chain(&e), down_secs = down.as_secs(), "giving up: past --max-outage");
            return Err(RunError::Outage { secs: down.as_secs(), last: Box::new(e) });
        }
        warn!(error = %crate::error_chain(&e), retry_in_ms = self.backoff.as_millis() as u64, down_secs = down.as_secs(), "{what}");
        let wait = match self.max {
            Some(max) => self.backoff.min(max.saturating_sub(down)).max(Duration::from_millis(50)),
            None => self.backoff,
        };
        tokio::select! {
            _ = cancel.cancelled() => {}
            _ = tokio::time::sleep(wait) => {}
        }
        self.backoff = (self.backoff * 2).min(BACKOFF_CAP);
        Ok(())
    }
}

/// Connects to the node. Without `--max-outage` an unreachable node fails at once, with the
/// fix-it (at start a wrong URL and a node not up yet look alike, and a typo must not hang
/// silently). With it, a node that is not up yet is waited for as the run loop waits out an
/// outage (the same backoff, for at most `--max-outage`), so a keeper started beside its node
/// comes up once the node does. Anything else (a wrong chain id, a TLS failure) fails at once.
/// `None` when a signal arrived first.
async fn connect_waiting(
    cfg: &RunConfig,
    cancel: &CancellationToken,
) -> Result<Option<(DynProvider, u64)>> {
    let mut outage = Outage::new(cfg.max_outage);
    loop {
        match chain::connect_checked(&cfg.chain).await {
            Ok(c) => return Ok(Some(c)),
            Err(e @ chain::ChainError::Unreachable { .. })
                if cfg.max_outage.is_some() && not_up_yet(&e) =>
            {
                outage
                    .wait_out(e.into(), "node unreachable at start; waiting for it", cancel)
                    .await?;
                if cancel.is_cancelled() {
                    return Ok(None);
                }
            }
            Err(e) => return Err(e.into()),
        }
    }
}

async fn run_loop(
    keeper: &mut Keeper,
    model: &Model,
    cfg: &RunConfig,
    cancel: &CancellationToken,
) -> Result<()> {
    let mut outage = Outage::new(cfg.max_outage);
    loop {
        if cancel.is_cancelled() {
            info!(
                "stopping on a signal; pending submissions stay in the journal for the next start"
            );
            return Ok(());
        }
        match keeper.cycle(model, None, cancel).await {
            Ok(r) => {
                outage.over();
                info!(
                    head = r.head,
                    confirmed_to = r.safe,
                    markets = r.markets_known,
                    asked = r.asked,
                    submitted = r.submitted,
                    mined = r.mined.len(),
                    pending = r.pending,
                    confirmed = r.settled.confirmed,
                    resent = r.settled.resent,
                    replaced = r.settled.replaced,
                    reorged = r.settled.reorged,
                    offchain = r.offchain_failures,
                    redeemed = r.redeemed,
                    written_off = r.written_off,
                    "cycle done"
                );
                if cfg.once {
                    return Ok(());
                }
                tokio::select! {
                    _ = cancel.cancelled() => {}
                    _ = tokio::time::sleep(cfg.interval) => {}
                }
            }
            Err(e) if e.is_local() => return Err(e),
            Err(e) => outage.wait_out(e, "cycle failed; retrying", cancel).await?,
        }
    }
}

/// Cancels `token` on SIGINT or SIGTERM.
pub fn spawn_signal_handler(token: CancellationToken) {
    tokio::spawn(async move {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{signal, SignalKind};
            let Ok(mut term) = signal(SignalKind::terminate()) else { return };
            tokio::select! {
                _ = tokio::signal::ctrl_c() => {}
                _ = term.recv() => {}
            }
        }
        #[cfg(not(unix))]
        {
            let _ = tokio::signal::ctrl_c().await;
        }
        token.cancel();
    });
}
