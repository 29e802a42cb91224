//! The bot, as a pipeline of typed stages (collector → strategy → executor → recorder):
//!
//! 1. **follow** (collector, [`crate::follower`]): check the blocks already read are still the
//!    chain's (rewind and rescan if a reorg replaced them), scan confirmed blocks for markets and
//!    the gate's logs, and settle the journal's pending submissions against the chain: confirm
//!    the mined ones, re-send stuck ones at the same nonce with bumped fees, mark replaced ones.
//! 2. **read**: every due market (open, trusted resolver, inside the horizon, no pending
//!    submission, not asked within the re-ask interval) is read concurrently.
//! 3. **ask** (strategy): the model is asked about every market concurrently; each answer is
//!    quoted against the book the model was shown and handed on as soon as it arrives.
//! 4. **submit** (executor): signed, journalled to disk, then sent, one by one as answers
//!    arrive, each at its own nonce.
//! 5. **record**: redeem final markets, write off stale positions, follow again and re-write the
//!    record from confirmed chain logs plus the journal.
//!
//! Each stage returns what it produced and what failed; failures that never reach the chain are
//! off-chain rows, journalled the moment they happen. State that matters is re-derived from the
//! chain and the journal on every start.

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
    strategy::{prompt::strategy_hash, Model, Prompt},
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
    Outage { secs: u64 },
}

impl RunError {
    /// Errors that come from the local disk, not from the node: retrying cannot help, and a
    /// keeper that cannot journal must not send.
    fn is_local(&self) -> bool {
        match self {
            Self::Journal(_) => true,
            Self::Record(_) => true,
            _ => false,
        }
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
    prompt_hash: B256,
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
    pub offchain_failures: usize,
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
    final_markets: HashSet<Address>,
    /// Notes of decisions made before the journal existed, from the feed on disk.
    legacy_notes: BTreeMap<DecisionId, RowNote>,
    facts: Option<GateFacts>,
    times: HashMap<u64, u64>,
    last_step: follower::Step,
    /// Fees for new submissions, read once per cycle (a re-send reads its own).
    fees: Option<Fees>,
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
            final_markets: HashSet::new(),
            legacy_notes: BTreeMap::new(),
            facts: None,
            times: HashMap::new(),
            last_step: follower::Step::default(),
            fees: None,
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
        let links = feed::check_links_in(&dir, self.chain_id, self.gate)?;
        for problem in &links.problems {
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
        self.journal.pending().map(|t| t.sub.nonce + 1).max().unwrap_or(0)
    }

    // ---------------------------------------------------------------- stage 1: follow

    /// Collector stage: follows the chain one step (reorg check, scan of confirmed blocks),
    /// re-derives the record, and settles pending submissions against it.
    pub async fn follow(&mut self) -> Result<follower::Step> {
        let step = self.follower.step(&self.provider).await?;
        if let Some(fork) = step.rewound_to {
            warn!(
                fork_block = fork,
                "chain reorganised: blocks after {fork} were replaced; rescanned"
            );
            self.times.retain(|&b, _| b <= fork);
        }
        if self.facts.is_none() {
            self.facts = Some(
                collectors::gate_facts(
                    &self.provider,
                    self.gate,
                    self.chain_id,
                    self.from_block,
                    step.head.number,
                    self.follower.log_range,
                )
                .await?,
            );
        }
        let logs = self.follower.gate_logs();
        let known = std::mem::take(&mut self.times);
        self.times = collectors::block_times(&self.provider, logs, known).await?;
        let labels = self.facts.as_ref().map_or(&[][..], |f| &f.labels[..]);
        self.record = feed::decode_logs(logs, self.chain_id, self.gate, labels, &self.times)?;
        self.last_step = step.clone();
        Ok(step)
    }

    /// Settles the journal against the chain as of the last follow step:
    /// - a submission whose `Decision` is in a confirmed block is confirmed;
    /// - one whose confirmed decision a reorg removed is reopened, and abandoned if the node no
    ///   longer knows any of its transactions (its market is then due again);
    /// - one mined and reverted is an off-chain row;
    /// - one whose nonce another transaction used (as of the confirmed block) is replaced;
    /// - one still unmined after `resend_after`, or unknown to the node, is re-sent at the same
    ///   nonce with bumped fees; a nonce gap below pending submissions is filled.
    pub async fn settle(&mut self) -> Result<Settled> {
        self.settle_with(true).await
    }

    /// [`Keeper::settle`]; with `resend` false, stuck transactions are left as they are (the end
    /// of a cycle that has just waited for its own transactions re-sends nothing: the next
    /// cycle's settle does, so one re-send happens per cycle at most).
    async fn settle_with(&mut self, resend: bool) -> Result<Settled> {
        let mut out = Settled::default();
        if self.dry_run || self.signer.is_none() {
            return Ok(out);
        }
        let step = self.last_step.clone();
        let recorded = self.record.txs();
        if step.rewound_to.is_some() {
            let gone: Vec<u64> = self
                .journal
                .submissions()
                .filter(|t| matches!(t.outcome, Some((Outcome::Confirmed, _))))
                .filter(|t| !t.attempts.iter().any(|a| recorded.contains(&a.tx)))
                .map(|t| t.sub.id)
                .collect();
            for id in gone {
                self.journal.append(Entry::Reopened { id })?;
                self.last_sent.remove(&id);
                out.reorged += 1;
            }
        }
        let pending: Vec<journal::Tracked> = self.journal.pending().cloned().collect();
        if pending.is_empty() {
            return Ok(out);
        }
        // Nonces used as of the newest confirmed block: a submission whose nonce another
        // transaction used there is provably replaced. A node that keeps no state that far back
        // (a pruned one) cannot say: nothing is declared replaced until it can.
        let nonce_used_at_safe = match self.sender().await?.nonce_at(step.safe.number).await {
            Ok(n) => n,
            Err(e) => {
                tracing::debug!(error = %crate::error_chain(&e), "nonce at the confirmed block unavailable");
                0
            }
        };
        // Receipts of every pending submission not yet in the record, polled at once (bounded).
        let (rpc, gate, seen) = (&self.provider, self.gate, &recorded);
        let polled: Vec<(journal::Tracked, Result<Option<Mined>>)> = stream::iter(pending)
            .map(|t| async move {
                if t.attempts.iter().any(|a| seen.contains(&a.tx)) {
                    return (t, Ok(None));
                }
                let mined = mined(rpc, gate, &t).await;
                (t, mined)
            })
            .buffered(self.concurrency.max(1))
            .collect()
            .await;
        let mut stuck = Vec::new();
        for (t, mined) in polled {
            let mined = mined?;
            let id = t.sub.id;
            if let Some(a) = t.attempts.iter().find(|a| recorded.contains(&a.tx)) {
                self.journal.append(Entry::Done {
                    id,
                    outcome: Outcome::Confirmed,
                    tx: Some(a.tx),
                })?;
                self.last_sent.remove(&id);
                out.confirmed += 1;
                continue;
            }
            match mined {
                Some(m) if m.block() > step.safe.number => out.awaiting_confirmations += 1,
                Some(Mined::Reverted { tx, block }) => {
                    let why = self.revert_reason(&t.sub).await;
                    self.offchain(
                        t.sub.market,
                        Some(t.sub.prompt_hash),
                        format!("tx {tx} (nonce {}) reverted in block {block}: {why}", t.sub.nonce),
                        t.sub.note.clone(),
                    )?;
                    self.journal.append(Entry::Done {
                        id,
                        outcome: Outcome::Reverted,
                        tx: Some(tx),
                    })?;
                    out.reverted += 1;
                }
                // Mined in a confirmed block but its log is not in the record yet (the scan
                // stops at the safe block read before this receipt): confirmed next step.
                Some(_) => out.awaiting_confirmations += 1,
                None if nonce_used_at_safe > t.sub.nonce => {
                    // Re-read once: a receipt that appeared since is ours after all.
                    let mut ours = false;
                    for a in &t.attempts {
                        ours |= executor::receipt(&self.provider, a.tx).await?.is_some();
                    }
                    if ours {
                        out.awaiting_confirmations += 1;
                        continue;
                    }
                    warn!(market = %t.sub.market, nonce = t.sub.nonce, "submission replaced: another transaction used its nonce");
                    self.offchain(
                        t.sub.market,
                        Some(t.sub.prompt_hash),
                        format!(
                            "not published: nonce {} was used by a transaction that is not this submission's",
                            t.sub.nonce
                        ),
                        t.sub.note.clone(),
                    )?;
                    self.journal.append(Entry::Done {
                        id,
                        outcome: Outcome::Replaced,
                        tx: None,
                    })?;
                    out.replaced += 1;
                }
                None => stuck.push(t),
            }
        }
        for t in stuck {
            let id = t.sub.id;
            let known = {
                let mut k = false;
                for a in &t.attempts {
                    k |= executor::known(&self.provider, a.tx).await?;
                }
                k
            };
            let reopened = t.reopened;
            if reopened && !known {
                // Its decision left the chain with a reorg and no node holds it: the market is
                // asked again with a fresh read, and its nonce is free for that.
                self.journal.append(Entry::Done { id, outcome: Outcome::NotSent, tx: None })?;
                continue;
            }
            if !resend {
                continue;
            }
            let due = match self.last_sent.get(&id) {
                Some(at) => at.elapsed() >= self.resend_after || !known,
                None => true,
            };
            if due && self.resend(&t).await? {
                out.resent += 1;
            }
        }
        out.gaps_filled = self.fill_gaps().await?;
        if out.reorged > 0 {
            let floor = self.pending_nonce_floor();
            self.sender().await?.resync(floor).await?;
        }
        Ok(out)
    }

    /// Re-signs a pending submission at its own nonce with bumped fees and sends it; the new
    /// transaction is journalled first. Returns whether it was sent.
    async fn resend(&mut self, t: &journal::Tracked) -> Result<bool> {
        let now = executor::current_fees(&self.provider).await?;
        let fees = executor::bumped(Fees::from(t.latest()), now);
        let quote =
            Quote { maxPricePaid: t.sub.quote.max_price_paid, deadline: t.sub.quote.deadline };
        let input = executor::submit_calldata(t.sub.market, &t.sub.raw, t.sub.prompt_hash, &quote);
        let gate = self.gate;
        let signed = self
            .sender()
            .await?
            .sign(gate, input, t.sub.gas, t.sub.nonce, fees, U256::ZERO)
            .await?;
        self.journal.append(Entry::Resend { id: t.sub.id, attempt: signed.attempt })?;
        self.last_sent.insert(t.sub.id, Instant::now());
        match self.sender().await?.broadcast(&signed).await {
            Ok(()) => {
                info!(market = %t.sub.market, nonce = t.sub.nonce, tx = %signed.attempt.tx, max_fee = fees.max_fee_per_gas, "re-sent at the same nonce with bumped fees");
                Ok(true)
            }
            Err(BroadcastError::Refused(r)) => {
                // NonceTooLow: an attempt was mined (or another tx used the nonce): settled
                // next step. Underpriced: bumped again next time. Either way, still pending.
                warn!(market = %t.sub.market, nonce = t.sub.nonce, refusal = %r, "replacement refused");
                Ok(false)
            }
            Err(BroadcastError::Transport(e)) => Err(ExecError::Rpc(e).into()),
        }
    }

    /// Fills nonce gaps: when the node's pending nonce is below a pending submission's and no
    /// submission uses it, a transaction the node dropped (or a refused send) left a hole that
    /// holds every later transaction back.
    async fn fill_gaps(&mut self) -> Result<usize> {
        let mut filled = 0;
        loop {
            let nonces: HashSet<u64> = self.journal.pending().map(|t| t.sub.nonce).collect();
            let Some(&top) = nonces.iter().max() else { return Ok(filled) };
            let sender = self.sender().await?;
            let next = sender.pending_nonce().await?;
            if next >= top || nonces.contains(&next) || filled >= nonces.len() {
                return Ok(filled);
            }
            let fees = executor::current_fees(sender.rpc()).await?;
            let tx = sender.fill_gap(next, fees).await?;
            warn!(nonce = next, %tx, "filled a nonce gap below pending submissions");
            filled += 1;
        }
    }

    async fn revert_reason(&self, sub: &Submission) -> String {
        let quote = Quote { maxPricePaid: sub.quote.max_price_paid, deadline: sub.quote.deadline };
        executor::simulate_submit(
            &self.provider,
            self.gate,
            self.keeper_addr,
            sub.market,
            &sub.raw,
            sub.prompt_hash,
            &quote,
        )
        .await
        .err()
        .map_or_else(|| "reverted on chain".to_string(), |e| crate::error_chain(&e))
    }

    /// Whether the gate trusts `market`'s resolver: the predicate of its `isTrustedResolver`,
    /// applied to the gate's immutable `trustedResolvers()` read once with its facts.
    pub fn resolver_trusted(&self, market: &MarketInfo) -> bool {
        self.facts.as_ref().is_some_and(|f| f.trusted_resolvers.contains(&market.resolver))
    }

    /// Markets worth asking about now: open (not known final, not expired), resolved by a
    /// resolver the gate trusts (any other is refused by rule 12 whatever the model says),
    /// within the gate's horizon (rule 13), with no pending submission, and due for a new ask.
    pub fn due_markets(&self, now_sec: u64) -> Vec<MarketInfo> {
        let last = self.record.last_decision_times();
        let pending = self.journal.pending_markets();
        let horizon = self.facts.as_ref().map_or(u64::MAX, |f| u64::from(f.bounds.maxHorizon));
        self.follower
            .markets()
            .filter(|m| !self.final_markets.contains(&m.address) && m.expiry > now_sec)
            .filter(|m| self.resolver_trusted(m) && m.expiry - now_sec <= horizon)
            .filter(|m| !pending.contains(&m.address))
            .filter(|m| match last.get(&m.address) {
                Some(t) => now_sec.saturating_sub(*t) >= self.reask_secs,
                None => true,
            })
            .cloned()
            .collect()
    }

    // ---------------------------------------------------------------- stage 2: read

    /// Reads markets, dropping final ones (remembered) and recording read failures.
    pub async fn read_open(
        &mut self,
        due: &[MarketInfo],
        head: BlockRef,
    ) -> Result<Vec<MarketState>> {
        // Batched through the deployless BookLens (one eth_call per 200 markets; `make bench`
        // measures it about 9x faster than three calls per market), falling back per market.
        let reads = crate::lens::read_markets(&self.provider, due, self.concurrency).await;
        let mut states = Vec::new();
        for (info, r) in reads {
            match r {
                Ok(st) if st.finalized => {
                    self.final_markets.insert(info.address);
                }
                Ok(st) => states.push(st),
                Err(e) => {
                    let e = crate::error_chain(&e);
                    warn!(market = %info.address, error = %e, "book read failed; skipping this market this cycle");
                    self.offchain_at(
                        head,
                        info.address,
                        None,
                        format!("book read failed: {e}"),
                        Annotation::default(),
                    )?;
                }
            }
        }
        Ok(states)
    }

    // ---------------------------------------------------------------- stage 3: ask

    /// The annotation every row answered by `model` carries.
    pub fn note(&self, model: &Model, scenario: Option<&str>) -> Annotation {
        Annotation {
            provider: Some(model.name().to_string()),
            model: Some(model.model()),
            strategy_hash: Some(strategy_hash(&self.strategy_text).to_string()),
            scenario: scenario.map(str::to_string),
        }
    }

    /// Asks about every state concurrently; yields each answer (or failure) as it arrives. A
    /// cancelled ask yields nothing: a shutdown is not a failure.
    fn asks<'a>(
        &self,
        states: Vec<MarketState>,
        model: &'a Model,
        head: BlockRef,
        scenario: Option<&str>,
        cancel: &'a CancellationToken,
    ) -> impl futures::Stream<Item = std::result::Result<Answer, Unanswered>> + 'a {
        let note = self.note(model, scenario);
        let strategy = self.strategy_text.clone();
        let policy = self.quote;
        stream::iter(states)
            .map(move |st| {
                let (strategy, note) = (strategy.clone(), note.clone());
                async move {
                    let prompt = Prompt::render(&strategy, &st, head.time);
                    let prompt_hash = prompt.hash();
                    let market = st.info.address;
                    let ans = tokio::select! {
                        _ = cancel.cancelled() => return None,
                        r = model.ask(&prompt, &st) => r,
                    };
                    Some(match ans {
                        Ok(raw) => Ok(Answer {
                            market,
                            quote: policy.quote(&raw, &st, head.time),
                            raw,
                            prompt_hash,
                            note,
                            read: head,
                        }),
                        Err(e) => Err(Unanswered {
                            market,
                            prompt_hash,
                            error: crate::error_chain(&e),
                            detail: e.detail(),
                        }),
                    })
                }
            })
            .buffer_unordered(self.concurrency.max(1))
            .filter_map(futures::future::ready)
    }

    /// Asks about every state and collects the answers (the demo's scripted steps, which act
    /// between asking and submitting). Failures are off-chain rows.
    pub async fn ask_all(
        &mut self,
        states: Vec<MarketState>,
        model: &Model,
        head: BlockRef,
        scenario: Option<&str>,
        cancel: &CancellationToken,
    ) -> Result<Vec<Answer>> {
        let results: Vec<_> = self.asks(states, model, head, scenario, cancel).collect().await;
        let mut answers = Vec::new();
        for r in results {
            match r {
                Ok(a) => answers.push(a),
                Err(u) => self.unanswered(head, model, scenario, u)?,
            }
        }
        // In market order, so a scripted run submits in a fixed order.
        answers.sort_by_key(|a| a.market);
        Ok(answers)
    }

    fn unanswered(
        &mut self,
        head: BlockRef,
        model: &Model,
        scenario: Option<&str>,
        u: Unanswered,
    ) -> Result<()> {
        warn!(market = %u.market, error = %u.error, "no answer; nothing submitted");
        let note = self.note(model, scenario);
        let mut row = self.offchain_row(head, u.market, Some(u.prompt_hash), u.error, note);
        row.transport = u.detail;
        self.journal.append(Entry::Offchain(row))?;
        Ok(())
    }

    // ---------------------------------------------------------------- stage 4: submit

    /// Executor stage for one answer: signs it at the next nonce, journals it, then sends it.
    /// Returns the submission id when it is in flight (a refusal is an off-chain row). A dry
    /// run prints what the gate would publish instead.
    pub async fn submit_one(&mut self, a: Answer) -> Result<Option<u64>> {
        if self.dry_run {
            let sim = executor::simulate_submit(
                &self.provider,
                self.gate,
                self.keeper_addr,
                a.market,
                &a.raw,
                a.prompt_hash,
                &a.quote,
            )
            .await;
            let line = serde_json::json!({
                "dry_run": true,
                "market": a.market.to_checksum(None),
                "raw": a.raw,
                "prompt_hash": a.prompt_hash.to_string(),
                "quote": {
                    "max_price_paid": a.quote.maxPricePaid.to_string(),
                    "deadline": a.quote.deadline,
                },
                "would_publish_reason": sim.as_ref().ok(),
                "would_revert": sim.as_ref().err().map(|e| crate::error_chain(e)),
            });
            println!("{line}");
            return Ok(None);
        }
        let fees = match self.fees {
            Some(f) => Ok(f),
            None => executor::current_fees(&self.provider).await,
        };
        let fees = match fees {
            Ok(f) => {
                self.fees = Some(f);
                f
            }
            Err(e) => {
                self.offchain_at(
                    a.read,
                    a.market,
                    Some(a.prompt_hash),
                    format!("not sent: {e}"),
                    a.note,
                )?;
                return Ok(None);
            }
        };
        let gas = executor::submit_gas_limit(&a.raw);
        let input = executor::submit_calldata(a.market, &a.raw, a.prompt_hash, &a.quote);
        let gate = self.gate;
        let id = self.journal.next_id();
        for retry in 0..2 {
            let sender = self.sender().await?;
            let nonce = sender.take_nonce();
            let signed = sender.sign(gate, input.clone(), gas, nonce, fees, U256::ZERO).await?;
            let sub = Submission {
                id,
                market: a.market,
                nonce,
                prompt_hash: a.prompt_hash,
                raw: a.raw.clone(),
                quote: QuoteSent {
                    max_price_paid: a.quote.maxPricePaid,
                    deadline: a.quote.deadline,
                },
                gas,
                first: signed.attempt,
                read_block: a.read.number,
                read_time: a.read.time,
                note: a.note.clone(),
            };
            // On disk before it is sent: a crash from here on leaves a pending submission that
            // a restart follows, never a decision the keeper does not know it made.
            self.journal.append(Entry::Submit(sub))?;
            self.last_sent.insert(id, Instant::now());
            let sender = self.sender().await?;
            match sender.broadcast(&signed).await {
                Ok(()) => return Ok(Some(id)),
                // The node may hold it: pending, followed by settle like any other.
                Err(BroadcastError::Transport(e)) => {
                    warn!(market = %a.market, nonce, error = %crate::error_chain(&*e), "send failed in transport; the submission stays pending and is followed");
                    return Ok(Some(id));
                }
                Err(BroadcastError::Refused(r)) => {
                    sender.give_back(nonce);
                    self.journal.append(Entry::Done { id, outcome: Outcome::NotSent, tx: None })?;
                    if r == Refusal::NonceTooLow && retry == 0 {
                        // Our view of the nonce was stale: resynchronise and sign again.
                        let floor = self.pending_nonce_floor();
                        self.sender().await?.resync(floor).await?;
                        continue;
                    }
                    warn!(market = %a.market, nonce, refusal = %r, "node refused the submission; nothing is in flight");
                    self.offchain_at(
                        a.read,
                        a.market,
                        Some(a.prompt_hash),
                        format!("not sent: the node refused it: {r}"),
                        a.note.clone(),
                    )?;
                    if !matches!(r, Refusal::NonceTooLow) {
                        let floor = self.pending_nonce_floor();
                        self.sender().await?.resync(floor).await?;
                    }
                    return Ok(None);
                }
            }
        }
        Ok(None)
    }

    /// Waits up to `resend_after` for the transactions of `ids` to be mined, and returns the
    /// decisions they published, decoded from their own receipts.
    pub async fn await_mined(&mut self, ids: &[u64]) -> Result<Vec<Submitted>> {
        let deadline = Instant::now() + self.resend_after;
        let mut out = Vec::new();
        let mut delay = Duration::from_millis(10);
        let mut left: Vec<journal::Tracked> =
            ids.iter().filter_map(|id| self.journal.get(*id).cloned()).collect();
        let (rpc, gate) = (&self.provider, self.gate);
        while !left.is_empty() {
            // Every pending one polled at once (bounded), latest attempt first.
            let polled: Vec<(journal::Tracked, Result<Option<Mined>>)> = stream::iter(left)
                .map(|t| async move {
                    let mined = mined(rpc, gate, &t).await;
                    (t, mined)
                })
                .buffer_unordered(self.concurrency.max(1))
                .collect()
                .await;
            let mut still = Vec::new();
            for (t, r) in polled {
                match r? {
                    Some(Mined::Decision(d)) => {
                        out.push(Submitted { id: t.sub.id, decision: d.id, reason: d.event.reason })
                    }
                    Some(_) => {}
                    None => still.push(t),
                }
            }
            left = still;
            if left.is_empty() || Instant::now() >= deadline {
                break;
            }
            tokio::time::sleep(delay).await;
            delay = (delay * 2).min(Duration::from_millis(250));
        }
        out.sort_by_key(|s| s.id);
        Ok(out)
    }

    /// Submits answers one by one, waits for them to be mined, follows the chain so the
    /// record holds them, and returns the decisions they published (the demo's scripted steps).
    pub async fn submit(&mut self, answers: Vec<Answer>) -> Result<Vec<Submitted>> {
        let mut ids = Vec::new();
        self.fees = None;
        for a in answers {
            if let Some(id) = self.submit_one(a).await? {
                ids.push(id);
            }
        }
        let done = self.await_mined(&ids).await?;
        self.follow().await?;
        self.settle_with(false).await?;
        Ok(done)
    }

    // ---------------------------------------------------------------- stage 5: positions

    /// Redeems every open position whose market is final. Returns how many were redeemed.
    pub async fn redeem_final(&mut self) -> Result<usize> {
        let open = self.record.open_positions(true);
        let mut redeemed = 0;
        for m in open {
            let fin =
                crate::bindings::IBinaryMarket::new(m, &self.provider).finalized().call().await;
            if !matches!(fin, Ok(true)) {
                continue;
            }
            self.final_markets.insert(m);
            if self.dry_run {
                println!("{}", serde_json::json!({"dry_run": true, "would_redeem": m.to_string()}));
                continue;
            }
            let input = match executor::redeem_calldata(&self.provider, self.gate, m).await {
                Ok(i) => i,
                Err(e) => {
                    warn!(market = %m, error = %crate::error_chain(&e), "redeem refused in simulation");
                    continue;
                }
            };
            if self.own_call(m, "redeem", input, executor::REDEEM_GAS).await? {
                redeemed += 1;
            }
        }
        Ok(redeemed)
    }

    /// Writes off the gate's positions whose market is still not final at `expiry +
    /// writeOffGrace` as of chain time `now_sec`. Returns how many were written off.
    pub async fn write_off_stale(&mut self, now_sec: u64) -> Result<usize> {
        let Some(grace) = self.facts.as_ref().map(|f| u64::from(f.bounds.writeOffGrace)) else {
            return Ok(0);
        };
        let expiry: HashMap<Address, u64> =
            self.follower.markets().map(|m| (m.address, m.expiry)).collect();
        // Strictly after: the next block's time is at least `now_sec + 1`, and the gate wants
        // `block.timestamp > expiry + writeOffGrace`.
        let stale: Vec<Address> = self
            .record
            .open_positions(false)
            .into_iter()
            .filter(|m| expiry.get(m).is_some_and(|&exp| now_sec >= exp.saturating_add(grace)))
            .collect();
        let mut written = 0;
        for m in stale {
            let fin =
                crate::bindings::IBinaryMarket::new(m, &self.provider).finalized().call().await;
            if !matches!(fin, Ok(false)) {
                continue; // final: redeem_final closes it; unreadable: try again next cycle
            }
            if self.dry_run {
                println!(
                    "{}",
                    serde_json::json!({"dry_run": true, "would_write_off": m.to_string()})
                );
                continue;
            }
            let input = match executor::write_off_calldata(&self.provider, self.gate, m).await {
                Ok(i) => i,
                Err(e) => {
                    warn!(market = %m, error = %crate::error_chain(&e), "writeOff refused in simulation");
                    continue;
                }
            };
            if self.own_call(m, "writeOff", input, executor::WRITE_OFF_GAS).await? {
                written += 1;
            }
        }
        Ok(written)
    }

    /// Sends one of the keeper's own calls and waits for it; a failure is logged (the position
    /// is looked at again next cycle).
    async fn own_call(
        &mut self,
        market: Address,
        what: &str,
        input: alloy::primitives::Bytes,
        gas: u64,
    ) -> Result<bool> {
        let gate = self.gate;
        let wait = self.resend_after;
        match self.sender().await?.call_and_wait(gate, input, gas, wait).await {
            Ok(r) if r.status() => Ok(true),
            Ok(r) => {
                warn!(%market, tx = %r.transaction_hash, "{what} reverted");
                Ok(false)
            }
            Err(e) => {
                warn!(%market, error = %crate::error_chain(&e), "{what} not confirmed; tried again next cycle");
                let floor = self.pending_nonce_floor();
                self.sender().await?.resync(floor).await?;
                Ok(false)
            }
        }
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
        let due = self.due_markets(step.head.time);
        let states = self.read_open(&due, step.head).await?;
        let asked = states.len();
        let mut ids = Vec::new();
        let mut arrivals = Box::pin(self.asks(states, model, step.head, scenario, cancel));
        while let Some(r) = arrivals.next().await {
            match r {
                Ok(a) => {
                    if let Some(id) = self.submit_one(a).await? {
                        ids.push(id);
                    }
                }
                Err(u) => self.unanswered(step.head, model, scenario, u)?,
            }
        }
        drop(arrivals);
        self.await_mined(&ids).await?;
        // Positions as recorded at the start of the cycle: one filled just now sits in a market
        // that was open when read, so it is redeemed by a later cycle.
        let redeemed = self.redeem_final().await?;
        let written_off = self.write_off_stale(step.head.time).await?;
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
            offchain_failures: self.journal.offchain().len() - off_before,
            redeemed,
            written_off,
            head: end.head.number,
            safe: end.safe.number,
            pending: self.journal.pending().count(),
            settled,
            rewound_to: step.rewound_to.or(end.rewound_to),
        })
    }

    fn offchain_row(
        &self,
        head: BlockRef,
        market: Address,
        prompt_hash: Option<B256>,
        error: String,
        note: Annotation,
    ) -> OffchainRow {
        OffchainRow {
            chain_id: self.chain_id,
            gate: self.gate.to_checksum(None),
            block: head.number,
            time: head.time,
            market: market.to_checksum(None),
            prompt_hash: prompt_hash.map(|h| h.to_string()),
            error,
            transport: feed::TransportDetail::default(),
            note,
        }
    }

    /// Journals an off-chain row now, at the last head read.
    fn offchain(
        &mut self,
        market: Address,
        prompt_hash: Option<B256>,
        error: String,
        note: Annotation,
    ) -> Result<()> {
        let head = self.last_step.head;
        self.offchain_at(head, market, prompt_hash, error, note)
    }

    fn offchain_at(
        &mut self,
        head: BlockRef,
        market: Address,
        prompt_hash: Option<B256>,
        error: String,
        note: Annotation,
    ) -> Result<()> {
        let row = self.offchain_row(head, market, prompt_hash, error, note);
        self.journal.append(Entry::Offchain(row))?;
        Ok(())
    }

    // ---------------------------------------------------------------- stage 6: record

    /// Notes of the record's decisions: from the journal (the submission whose transaction
    /// published it), else from the feed written before the journal existed.
    fn notes(&self) -> BTreeMap<DecisionId, RowNote> {
        let mut notes = BTreeMap::new();
        for d in &self.record.decided {
            let from_journal = self
                .journal
                .by_tx(d.id.tx)
                .map(|t| RowNote { note: t.sub.note.clone(), raw: Some(t.sub.raw.clone()) });
            if let Some(n) = from_journal.or_else(|| self.legacy_notes.get(&d.id).cloned()) {
                notes.insert(d.id, n);
            }
        }
        notes
    }

    /// Every off-chain row so far (each journalled when it happened).
    pub fn offchain_rows(&self) -> &[OffchainRow] {
        self.journal.offchain()
    }

    /// All feed rows: confirmed chain rows with their notes, plus off-chain rows.
    fn rows(&self) -> Vec<feed::FeedRow> {
        feed::merge(&self.record, &self.notes(), self.journal.offchain())
    }

    /// Writes the record (feed, head hash, chart, RESULTS.md) atomically.
    pub fn write_results(&self) -> Result<()> {
        let (Some(dir), Some(facts)) = (&self.results, &self.facts) else { return Ok(()) };
        recorder::write_record(dir, facts, &self.record, &self.rows())?;
        Ok(())
    }
}

/// The receipt of whichever of a submission's transactions was mined (latest attempt first),
/// decoded; `None` while none is.
async fn mined(rpc: &DynProvider, gate: Address, t: &journal::Tracked) -> Result<Option<Mined>> {
    for a in t.attempts.iter().rev() {
        if let Some(r) = executor::receipt(rpc, a.tx).await? {
            return Ok(Some(executor::decode_receipt(gate, &r)));
        }
    }
    Ok(None)
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
    let (reader, chain_id) = chain::connect_checked(&cfg.chain).await?;
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
    let model = Model::from_config(&cfg.model, cfg.inference_timeout)?;
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

async fn run_loop(
    keeper: &mut Keeper,
    model: &Model,
    cfg: &RunConfig,
    cancel: &CancellationToken,
) -> Result<()> {
    let mut outage_since: Option<Instant> = None;
    let mut backoff = BACKOFF_FIRST;
    loop {
        if cancel.is_cancelled() {
            info!(
                "stopping on a signal; pending submissions stay in the journal for the next start"
            );
            return Ok(());
        }
        match keeper.cycle(model, None, cancel).await {
            Ok(r) => {
                outage_since = None;
                backoff = BACKOFF_FIRST;
                info!(
                    head = r.head,
                    confirmed_to = r.safe,
                    markets = r.markets_known,
                    asked = r.asked,
                    submitted = r.submitted,
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
            Err(e) => {
                let since = *outage_since.get_or_insert_with(Instant::now);
                let down = since.elapsed();
                if let Some(max) = cfg.max_outage {
                    if down >= max {
                        warn!(error = %crate::error_chain(&e), down_secs = down.as_secs(), "giving up: past --max-outage");
                        return Err(RunError::Outage { secs: down.as_secs() });
                    }
                }
                warn!(error = %crate::error_chain(&e), retry_in_ms = backoff.as_millis() as u64, down_secs = down.as_secs(), "cycle failed; retrying");
                if cancel.is_cancelled() {
                    continue;
                }
                let wait = match cfg.max_outage {
                    Some(max) => {
                        backoff.min(max.saturating_sub(down)).max(Duration::from_millis(50))
                    }
                    None => backoff,
                };
                tokio::select! {
                    _ = cancel.cancelled() => {}
                    _ = tokio::time::sleep(wait) => {}
                }
                backoff = (backoff * 2).min(BACKOFF_CAP);
            }
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
