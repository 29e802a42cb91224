//! The bot as an engine that owns four stages, in the shape of paradigmxyz/artemis: each stage
//! is its own struct with its own state, takes values and returns values (its results and its
//! failures), and never reaches into another's fields. [`Engine::cycle`] is the whole decision
//! flow on one screen:
//!
//! 1. **view** ([`Collector::follow`]): check the blocks already read are still the chain's
//!    (rewind and rescan if a reorg replaced them), scan confirmed blocks for markets and the
//!    gate's logs, and re-derive the record from them; the executor then settles its journal
//!    against that view ([`Executor::settle`]): confirmed, re-sent at the same nonce with
//!    bumped fees, replaced, reverted or reopened.
//! 2. **due books** ([`Collector::open_markets`], [`Strategy::due`], [`Collector::read`]):
//!    open markets the gate trusts, within its horizon, with a checked question, not pending,
//!    due for a re-ask and not held back by the inference breaker, read through the BookLens.
//! 3. **answers** ([`Strategy::asks`]): the model is asked about every book concurrently; each
//!    answer is quoted against the book the model was shown.
//! 4. **submissions** ([`Executor::submit`]): each answer signed, journalled, then sent the
//!    moment it arrives, while slower asks are still being answered; a waiting ask is admitted
//!    with a fresh read ([`Collector::reread`]) only between submissions.
//! 5. **settled** ([`Executor::await_mined`]): this cycle's transactions, their decisions
//!    decoded from their own receipts.
//! 6. **positions** ([`Collector::positions_due`], [`Executor::close`]): final markets
//!    redeemed, stale positions written off, each the keeper's own journalled transaction.
//! 7. **record** ([`Recorder::write`]): follow again and re-write the record from confirmed chain
//!    logs plus the journal.
//!
//! Failures that never reach the chain are [`crate::domain::decision::Failure`] values; the executor journals them the
//! moment a stage hands them over. State that matters is re-derived from the chain and the
//! journal on every start. The long-running loop around the cycle is [`crate::commands::run`].
//!
//! The engine layer: the [`Engine`], its four stages and the cycle, and the [`quote`] its
//! strategy stage puts on each answer.
//!
//! May import: chain, inference, record, domain, kit.

mod collector;
mod executor;
pub mod health;
pub mod quote;
mod recorder;
mod strategy;

pub use collector::{Book, Closing, Collector, Found, Resume};
pub use executor::{Closed, ExecPolicy, Executor, Settled, SubmitTimes};
pub use recorder::{Recorder, Reopened, StrategyKept, Written};
pub use strategy::{Asks, Due, Strategy, SHUTDOWN_DROPPED};

use crate::{
    chain,
    chain::follower,
    chain::journal,
    chain::reads,
    domain::config::QuotePolicy,
    domain::decision::{Answer, BlockRef, ChainRecord, Submitted},
    inference as model,
    inference::Model,
    record,
};
use alloy::{primitives::Address, providers::DynProvider, signers::local::PrivateKeySigner};
use std::{
    path::PathBuf,
    time::{Duration, Instant},
};
use tokio_util::sync::CancellationToken;

#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error(transparent)]
    Chain(#[from] chain::ChainError),
    #[error(transparent)]
    Collect(#[from] reads::CollectError),
    #[error(transparent)]
    Follow(#[from] follower::FollowError),
    #[error(transparent)]
    Record(#[from] record::RecordError),
    #[error(transparent)]
    Journal(#[from] journal::JournalError),
    #[error(transparent)]
    Inference(#[from] model::InferenceError),
    #[error(transparent)]
    Exec(#[from] crate::chain::sender::ExecError),
    #[error(transparent)]
    Panel(#[from] model::attestors::PanelError),
    #[error(
        "the node kept failing for {secs} s, past --max-outage (its last failure follows); every \
         row is on disk"
    )]
    Outage {
        secs: u64,
        /// The last failure: what the node was still answering when the keeper gave up.
        #[source]
        last: Box<RunError>,
    },
}

impl crate::domain::exit::Classify for RunError {
    fn fault(&self) -> crate::domain::exit::Fault {
        use crate::domain::exit::Fault::Runtime;
        match self {
            Self::Chain(e) => e.fault(),
            Self::Collect(e) => e.fault(),
            Self::Follow(e) => e.fault(),
            Self::Record(e) => e.fault(),
            Self::Journal(e) => e.fault(),
            Self::Inference(e) => e.fault(),
            Self::Exec(e) => e.fault(),
            Self::Panel(e) => e.fault(),
            // Given up on a node that kept failing: whatever the last failure was, the run ran.
            Self::Outage { .. } => Runtime,
        }
    }
}

impl RunError {
    /// Errors that come from the local disk, not from the node: retrying cannot help, and a
    /// keeper that cannot journal must not send.
    pub(crate) fn is_local(&self) -> bool {
        // The recorder never touches the node: all its errors are the disk's.
        matches!(self, Self::Journal(_) | Self::Record(_))
    }
}

pub type Result<T> = std::result::Result<T, RunError>;

/// The most decisions one `submitVerdicts` transaction carries by default. A hundred ABSTAINs
/// use about 1.5M gas (`make bench-batch`), far under any block's limit; a batch that would
/// not fit half the block gas limit is halved until it does.
pub const DEFAULT_BATCH_MAX: usize = 100;

/// How long an answer is held by default for others to join its batch. The builtin rules
/// answer a whole cycle within it; the bundled model, answering about one ask a second per
/// slot, sends its answers about as they come, so a quote's deadline is not spent waiting.
pub const DEFAULT_BATCH_WINDOW: Duration = Duration::from_millis(250);

/// The gate an engine works for, and where its history starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GateRef {
    pub chain_id: u64,
    pub gate: Address,
    pub factory: Address,
    /// The first block scanned for markets and the gate's logs (its deploy block).
    pub from_block: u64,
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
    /// the follower, under the same [`crate::domain::decision::DecisionId`].
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
    /// What the record's write did (appended rows, bytes written).
    pub written: Written,
    /// Wall time of each step of the cycle, in order (issue 37's profile).
    pub steps: StepTimes,
    /// Of `steps.ask_and_submit`, what the submissions took, summed over them.
    pub submits: SubmitTimes,
}

/// Wall time of each step of one cycle: where a cycle's time goes.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct StepTimes {
    /// Follow the chain to the head (new blocks, markets, decisions) and settle the journal.
    pub follow: Duration,
    /// Choose the due markets and read their books.
    pub read: Duration,
    /// Ask the model (or the attestors) and sign, journal and send each answer as it arrives.
    pub ask_and_submit: Duration,
    /// Wait for this cycle's transactions to be mined and decode their receipts.
    pub mined: Duration,
    /// Redeem and write off positions due.
    pub close: Duration,
    /// Follow to the head again and settle what was mined.
    pub follow_end: Duration,
    /// Write the record (feed, RESULTS.md, chart).
    pub write: Duration,
}

impl StepTimes {
    /// The steps by name, in order.
    pub fn named(&self) -> [(&'static str, Duration); 7] {
        [
            ("follow", self.follow),
            ("read", self.read),
            ("ask_and_submit", self.ask_and_submit),
            ("mined", self.mined),
            ("close", self.close),
            ("follow_end", self.follow_end),
            ("write", self.write),
        ]
    }

    pub fn total(&self) -> Duration {
        self.named().iter().map(|(_, d)| *d).sum()
    }

    /// `follow 12 ms, read 3 ms, …` for a log line.
    pub fn line(&self) -> String {
        self.named()
            .iter()
            .map(|(n, d)| format!("{n} {} ms", d.as_millis()))
            .collect::<Vec<_>>()
            .join(", ")
    }
}

/// The keeper: four stages, each owning its state.
pub struct Engine {
    collector: Collector,
    strategy: Strategy,
    executor: Executor,
    /// None for a dry run or a keeper that keeps no record.
    recorder: Option<Recorder>,
    /// The newest confirmed block the collector has followed to: the record's horizon.
    safe: BlockRef,
}

impl Engine {
    /// Starts building an engine for `gate`, reading and sending through `provider`.
    pub fn builder(provider: DynProvider, gate: GateRef) -> EngineBuilder {
        EngineBuilder {
            provider,
            gate,
            keeper: Address::ZERO,
            signer: None,
            results: None,
            resume: false,
            confirmations: 0,
            log_range: follower::DEFAULT_LOG_RANGE,
            concurrency: 32,
            reask_secs: 3_600,
            quote: QuotePolicy::default(),
            dry_run: false,
            strategy_text: String::new(),
            model: Model::Builtin,
            panel: None,
            resend_after: Duration::from_secs(30),
            one_at_a_time: false,
            batch_max: DEFAULT_BATCH_MAX,
            batch_window: DEFAULT_BATCH_WINDOW,
        }
    }

    pub fn collector(&self) -> &Collector {
        &self.collector
    }

    pub fn strategy(&self) -> &Strategy {
        &self.strategy
    }

    pub fn executor(&self) -> &Executor {
        &self.executor
    }

    /// The stages, to drive one by one (the demo's scripted steps, tests).
    pub fn stages(&mut self) -> (&mut Collector, &mut Strategy, &mut Executor) {
        (&mut self.collector, &mut self.strategy, &mut self.executor)
    }

    /// Follows the chain one step and settles the journal against it, re-sending nothing.
    pub async fn follow(&mut self) -> Result<follower::Step> {
        let step = self.collector.follow().await?;
        self.executor.settle(&step, self.collector.record(), false).await?;
        self.safe = step.safe;
        Ok(step)
    }

    /// Writes the record (appends to the feed what became final, re-renders the pages, saves
    /// the state), if there is one; then what went into the feed leaves memory.
    pub fn write_results(&mut self) -> Result<Option<Written>> {
        let Self { collector, strategy, executor, recorder, safe } = self;
        let Some(recorder) = recorder.as_mut() else {
            // No record: what was found is not kept anywhere.
            collector.take_found();
            return Ok(None);
        };
        if collector.facts().is_none() {
            return Ok(None);
        }
        let found = collector.take_found();
        let facts = collector.facts().expect("checked above");
        let deep = found.rewound_to.filter(|&fork| recorder.in_feed().is_some_and(|k| k.0 > fork));
        let written = recorder.write(
            facts,
            collector.record(),
            executor.journal(),
            &StrategyKept { text: strategy.text(), health: strategy.health_state() },
            found,
            *safe,
        )?;
        if deep.is_some() {
            // The feed was cut back below rows whose logs had left memory: take the whole
            // history back from the store and keep hot what the feed now lacks.
            collector.rehydrate(recorder.logs_up_to(u64::MAX)?, recorder.in_feed())?;
        }
        // Marked cold in the store now, not at the next write: a process that stops after this
        // one (a `--once` run, a floor's first start) must not leave a state whose next start
        // loads the whole history as hot.
        let cooled = collector.prune(recorder.in_feed())?;
        recorder.cool(&cooled)?;
        executor.retire(|tx| recorder.published(tx));
        Ok(Some(written))
    }

    /// The whole record as the chain holds it, confirmed blocks only (for the demo and tests;
    /// the engine itself holds only the hot part, [`Collector::record`]).
    pub fn record(&self) -> Result<ChainRecord> {
        match self.recorder.as_ref().and_then(|r| r.store()) {
            Some(store) => {
                let mut logs = store.all_logs(u64::MAX).map_err(record::RecordError::from)?;
                let saved: std::collections::HashSet<(u64, u64)> = logs
                    .iter()
                    .map(|l| (l.block_number.unwrap_or_default(), l.log_index.unwrap_or_default()))
                    .collect();
                for l in self.collector.record_logs() {
                    let k = (l.block_number.unwrap_or_default(), l.log_index.unwrap_or_default());
                    if !saved.contains(&k) {
                        logs.push(l.clone());
                    }
                }
                logs.sort_by_key(|l| (l.block_number, l.log_index));
                Ok(self.collector.decode_all(&logs)?)
            }
            None => Ok(self.collector.record().clone()),
        }
    }

    /// Asks `model` from the next cycle on: the strategy's own ([`Strategy::set_model`]).
    pub fn set_model(&mut self, model: Model) {
        self.strategy.set_model(model);
    }

    /// One full cycle with the strategy's model: view → due books → answers → submissions (each sent the
    /// moment it arrives) → settled → positions → record.
    pub async fn cycle(
        &mut self,
        scenario: Option<&str>,
        cancel: &CancellationToken,
    ) -> Result<CycleReport> {
        let off_before = self.executor.new_cycle();
        let mut times = StepTimes::default();
        let mut lap = Instant::now();
        let mut mark = |slot: &mut Duration| {
            *slot = lap.elapsed();
            lap = Instant::now();
        };
        let Self { collector, strategy, executor, safe, .. } = self;
        // View: the chain, the record re-derived from it, the journal settled against it.
        let step = collector.follow().await?;
        // The confirmed view the record is written against if this cycle ends early (the node
        // gone before its closing follow): the rows it journals up to this block are written
        // on the way out, not left to the journal alone (faults f6 under load).
        *safe = step.safe;
        let mut settled = executor.settle(&step, collector.record(), true).await?;
        mark(&mut times.follow);
        // Due books. Quotes' deadlines, the backoff and the breaker run on the chain time the
        // next block will carry.
        let send_time = collector.next_block_time(step.head).await;
        let (open, unreadable) = collector.open_markets(step.head);
        executor.offchain(unreadable)?;
        let pending = executor.journal().pending_markets();
        let due = strategy.due(open, collector.last_asked(), &pending, step.head.time, send_time);
        let (books, unread) = collector.read(&due.ask, step.head).await;
        executor.offchain(unread)?;
        mark(&mut times.read);
        // Answers, each submitted as it arrives; a waiting ask is admitted between submissions.
        let asked = books.len();
        let mut asks = strategy.asks(scenario, cancel);
        asks.send(books, step.head, send_time);
        // Answers are held for up to the batch window from the first one held (or until
        // `batch_max` are), then sent together.
        let (window, batch_max) = executor.batching();
        let mut ids = Vec::new();
        let mut held: Vec<Answer> = Vec::new();
        let mut since: Option<Instant> = None;
        loop {
            let next = match since {
                Some(t0) if window != Duration::MAX => {
                    // Held answers go out when the window closes, answered or not.
                    let left = window.saturating_sub(t0.elapsed());
                    match tokio::time::timeout(left, asks.next()).await {
                        Ok(next) => next,
                        Err(_) => {
                            since = None;
                            ids.extend(executor.submit_batch(std::mem::take(&mut held)).await?);
                            continue;
                        }
                    }
                }
                _ => asks.next().await,
            };
            let Some(done) = next else { break };
            match done {
                Some(Ok(answer)) => {
                    strategy.answered(answer.market);
                    held.push(answer);
                    since.get_or_insert_with(Instant::now);
                    if held.len() >= batch_max || window.is_zero() {
                        since = None;
                        ids.extend(executor.submit_batch(std::mem::take(&mut held)).await?);
                    }
                }
                Some(Err(u)) => executor.offchain([strategy.unanswered(
                    u,
                    step.head,
                    send_time,
                    asks.note(),
                )])?,
                None => {}
            }
            if let Some(waiting) = asks.waiting() {
                match collector.reread(waiting, step.head).await {
                    Ok(book) => asks.send_one(book),
                    Err(u) => executor.offchain([strategy.unanswered(
                        u,
                        step.head,
                        send_time,
                        asks.note(),
                    )])?,
                }
            }
        }
        drop(asks);
        ids.extend(executor.submit_batch(held).await?);
        mark(&mut times.ask_and_submit);
        // Settled: this cycle's transactions, decoded from their own receipts.
        let mined = executor.await_mined(&ids).await?;
        mark(&mut times.mined);
        // Positions as recorded at the start of the cycle: one filled just now sits in a market
        // that was open when read, so it is redeemed by a later cycle.
        let mut closed = executor.settle_own().await?;
        let closing = collector.positions_due(step.head.time, &executor.own_busy()).await;
        closed.add(executor.close(closing).await?);
        mark(&mut times.close);
        // Record.
        let end = collector.follow().await?;
        settled.add(executor.settle(&end, collector.record(), false).await?);
        mark(&mut times.follow_end);
        self.safe = end.safe;
        let written = self.write_results()?.unwrap_or_default();
        times.write = lap.elapsed();
        let (collector, executor) = (&self.collector, &self.executor);
        Ok(CycleReport {
            markets_known: collector.market_count(),
            asked,
            submitted: ids.len(),
            mined,
            offchain_failures: executor.offchain_recorded() - off_before,
            backing_off: due.backing_off,
            held_back: due.held,
            redeemed: closed.redeemed,
            written_off: closed.written_off,
            head: end.head.number,
            safe: end.safe.number,
            pending: executor.journal().pending().count(),
            settled,
            rewound_to: step.rewound_to.or(end.rewound_to),
            written,
            steps: times,
            submits: self.executor.submit_times(),
        })
    }
}

/// Builds an [`Engine`] in one place: every knob has a default, and [`EngineBuilder::build`]
/// opens the journal and the feed already on disk when asked to resume.
#[must_use]
pub struct EngineBuilder {
    provider: DynProvider,
    gate: GateRef,
    keeper: Address,
    signer: Option<PrivateKeySigner>,
    results: Option<PathBuf>,
    resume: bool,
    confirmations: u64,
    log_range: u64,
    concurrency: usize,
    reask_secs: u64,
    quote: QuotePolicy,
    dry_run: bool,
    strategy_text: String,
    model: Model,
    panel: Option<model::attestors::Panel>,
    resend_after: Duration,
    one_at_a_time: bool,
    batch_max: usize,
    batch_window: Duration,
}

impl EngineBuilder {
    /// The keeper address a dry run simulates as (a signer sets it itself).
    pub fn keeper(mut self, keeper: Address) -> Self {
        self.keeper = keeper;
        self
    }

    /// The key transactions are signed with; the keeper address becomes its address.
    pub fn signer(mut self, signer: PrivateKeySigner) -> Self {
        self.keeper = signer.address();
        self.signer = Some(signer);
        self
    }

    /// Where the record is written (none: no record).
    pub fn results(mut self, dir: Option<PathBuf>) -> Self {
        self.results = dir;
        self
    }

    /// Opens the results folder's journal (creating it) and the feed already there, so a
    /// restart follows what an earlier run sent. Without it the journal stays in memory.
    pub fn resume(mut self) -> Self {
        self.resume = true;
        self
    }

    /// Blocks a decision must be buried under before it enters the record.
    pub fn confirmations(mut self, n: u64) -> Self {
        self.confirmations = n;
        self
    }

    /// The most blocks one `eth_getLogs` spans.
    pub fn log_range(mut self, range: u64) -> Self {
        self.log_range = range.max(1);
        self
    }

    /// Reads and asks in flight at once (asks also capped at the server's slots).
    pub fn concurrency(mut self, n: usize) -> Self {
        self.concurrency = n;
        self
    }

    /// Chain seconds before a market is asked again.
    pub fn reask_secs(mut self, secs: u64) -> Self {
        self.reask_secs = secs;
        self
    }

    pub fn quote(mut self, policy: QuotePolicy) -> Self {
        self.quote = policy;
        self
    }

    /// Reads and asks, but prints what would be sent instead of sending it.
    pub fn dry_run(mut self, dry: bool) -> Self {
        self.dry_run = dry;
        self
    }

    /// Each submission's receipt awaited before the next is sent ([`ExecPolicy::one_at_a_time`]):
    /// the demo's, so its record does not depend on how a loaded machine times its sends.
    pub fn one_at_a_time(mut self, on: bool) -> Self {
        self.one_at_a_time = on;
        self
    }

    /// The most decisions one `submitVerdicts` transaction carries (1: one transaction per
    /// answer); default [`DEFAULT_BATCH_MAX`].
    pub fn batch_max(mut self, n: usize) -> Self {
        self.batch_max = n.max(1);
        self
    }

    /// How long an answer is held for others to join its batch; default
    /// [`DEFAULT_BATCH_WINDOW`]. Zero sends each answer as it arrives (what a cycle has left at
    /// its end still goes together), [`Duration::MAX`] holds every answer of a cycle for one
    /// send at its end (the demo's: its batches then do not depend on timing).
    pub fn batch_window(mut self, window: Duration) -> Self {
        self.batch_window = window;
        self
    }

    /// Who answers (default: the builtin rules); [`Engine::set_model`] changes it later.
    pub fn model(mut self, model: Model) -> Self {
        self.model = model;
        self
    }

    /// An attested gate's attestors, asked instead of the model ([`Strategy::set_panel`]).
    pub fn panel(mut self, panel: Option<model::attestors::Panel>) -> Self {
        self.panel = panel;
        self
    }

    pub fn strategy_text(mut self, text: String) -> Self {
        self.strategy_text = text;
        self
    }

    /// How long a sent transaction may wait for inclusion before it is re-sent at the same
    /// nonce with bumped fees; also how long a cycle waits for its own transactions.
    pub fn resend_after(mut self, after: Duration) -> Self {
        self.resend_after = after;
        self
    }

    /// The engine. With [`EngineBuilder::resume`] (and not a dry run) it opens the results
    /// folder's journal and feed: a feed of another chain or gate is refused.
    pub fn build(self) -> Result<Engine> {
        let gate = self.gate;
        let mut journal = journal::Journal::in_memory();
        let mut recorder = match (&self.results, self.dry_run) {
            (Some(dir), false) => Some(Recorder::new(dir.clone())),
            _ => None,
        };
        let (mut resume, mut health) = (None, None);
        if let (Some(r), true) = (recorder.as_mut(), self.resume) {
            let reopened = r.open(gate.chain_id, gate.gate)?;
            (journal, resume, health) = (reopened.journal, reopened.resume, reopened.health);
        }
        let mut collector = Collector::new(
            self.provider.clone(),
            gate,
            self.confirmations,
            self.log_range,
            self.concurrency,
        );
        let mut strategy = Strategy::new(
            self.model,
            self.strategy_text,
            self.quote,
            self.reask_secs,
            self.concurrency,
        );
        let read_window = self.panel.as_ref().and_then(|p| p.max_read_age());
        let policy = ExecPolicy {
            resend_after: self.resend_after,
            dry_run: self.dry_run,
            concurrency: self.concurrency,
            one_at_a_time: self.one_at_a_time,
            read_window,
            batch_max: self.batch_max,
            batch_window: self.batch_window,
        };
        if let Some(saved) = resume {
            collector.resume(saved)?;
        }
        if let Some(saved) = health {
            strategy.restore_health(saved);
        }
        if let Some(panel) = self.panel {
            strategy.set_panel(panel);
        }
        let mut executor =
            Executor::new(self.provider, gate, self.keeper, self.signer, journal, policy);
        if let Some(r) = recorder.as_ref() {
            // Entries read again after the checkpoint whose rows are already in the feed. The
            // off-chain rows stay: the first write stores them (a rebuilt state has none yet).
            executor.retire_published(|tx| r.published(tx));
        }
        Ok(Engine { collector, strategy, executor, recorder, safe: BlockRef::default() })
    }
}
