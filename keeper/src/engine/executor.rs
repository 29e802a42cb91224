//! The executor: every transaction the keeper sends, and the journal that follows them. It
//! owns the key's sender, the journal, the cycle's fees and one tracker for submissions and the
//! keeper's own calls (`redeem`, `writeOff`) alike: each journalled before it is sent, typed by
//! [`OwnKind`], re-signed at its own nonce with bumped fees when stuck, and recovered after a
//! restart. Failures handed to it by the other stages are journalled as off-chain rows.

use super::{collector::Closing, GateRef, Result};
use crate::{
    chain::attestation,
    chain::follower::{self, Step},
    chain::journal::{
        Entry, Journal, Outcome, OwnCall, OwnKind, QuoteSent, Submission, Tracked, TrackedOwn,
    },
    chain::sender::{self as tx, BroadcastError, ExecError, Fees, Mined, Refusal, Sender},
    domain::decision::{
        gate_verdict, Annotation, Answer, Attestations, BlockRef, ChainRecord, Failure, Submitted,
    },
    kit::bindings::{
        verdict,
        IRiskGate::{self, Quote},
    },
};
use alloy::{
    primitives::{Address, Bytes, B256, U256},
    providers::{DynProvider, Provider},
    rpc::types::TransactionReceipt,
    signers::local::PrivateKeySigner,
    sol_types::SolCall,
};
use futures::{stream, StreamExt};
use std::{
    collections::{HashMap, HashSet},
    time::{Duration, Instant},
};
use tracing::{info, warn};

/// How the executor sends.
#[derive(Debug, Clone, Copy)]
pub struct ExecPolicy {
    /// How long a sent transaction may wait for inclusion before it is re-sent at the same
    /// nonce with bumped fees; also how long a cycle waits for its own transactions.
    pub resend_after: Duration,
    /// Print what would be sent instead of sending it.
    pub dry_run: bool,
    /// Receipts polled at once.
    pub concurrency: usize,
    /// Wait for each submission's receipt before sending the next (the demo's: on a node that
    /// mines a block per arriving transaction, submissions sent back to back land one block
    /// each or several to a block depending on timing, which would make the record depend on
    /// the machine's load). The bot pipelines them.
    pub one_at_a_time: bool,
    /// On an attested gate, its `maxReadAge`: an answer whose read would be older than this in
    /// the next block is not sent (the gate would publish 21 for the gas).
    pub read_window: Option<u64>,
    /// The most decisions one `submitVerdicts` transaction carries (1: every answer is its own
    /// `submitVerdict`).
    pub batch_max: usize,
    /// How long the cycle holds an answer for others to join its batch.
    pub batch_window: Duration,
}

/// A batch held against the gas budget.
enum Sized {
    Fits { input: Bytes, gas: u64, fees: Fees },
    TooBig { gas: u64, budget: u64 },
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
    /// Pending submissions a reorg removed and no node holds: closed, their markets due again.
    pub abandoned: usize,
    pub gaps_filled: usize,
}

impl Settled {
    /// Adds a later settling's counts; awaiting confirmations is the later one's.
    pub fn add(&mut self, later: Settled) {
        self.confirmed += later.confirmed;
        self.resent += later.resent;
        self.replaced += later.replaced;
        self.reverted += later.reverted;
        self.reorged += later.reorged;
        self.abandoned += later.abandoned;
        self.gaps_filled += later.gaps_filled;
        self.awaiting_confirmations = later.awaiting_confirmations;
    }
}

/// Positions the keeper's own calls closed (mined and succeeded).
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Closed {
    pub redeemed: usize,
    pub written_off: usize,
}

impl Closed {
    pub fn add(&mut self, more: Closed) {
        self.redeemed += more.redeemed;
        self.written_off += more.written_off;
    }

    fn count(&mut self, what: OwnKind) {
        match what {
            OwnKind::Redeem => self.redeemed += 1,
            OwnKind::WriteOff => self.written_off += 1,
        }
    }
}

/// Where one cycle's submissions spent their time, summed over them: the pre-send checks (the
/// head, the read window, the deadline), fees and the gas estimate, signing, the journal's
/// write (on disk before sending), and the broadcast.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SubmitTimes {
    /// Broadcasts made (a send retried after a stale nonce counts twice).
    pub sent: usize,
    pub checks: Duration,
    pub estimate: Duration,
    pub sign: Duration,
    pub journal: Duration,
    pub broadcast: Duration,
}

impl SubmitTimes {
    /// The parts by name, in order.
    pub fn named(&self) -> [(&'static str, Duration); 5] {
        [
            ("checks", self.checks),
            ("fees_and_gas_estimate", self.estimate),
            ("sign", self.sign),
            ("journal", self.journal),
            ("broadcast", self.broadcast),
        ]
    }
}

pub struct Executor {
    provider: DynProvider,
    gate: GateRef,
    keeper: Address,
    signer: Option<PrivateKeySigner>,
    /// Created on first use from the signer (a dry run has none).
    sender: Option<Sender>,
    journal: Journal,
    /// Fees for new submissions, read once per cycle (a re-send reads its own).
    fees: Option<Fees>,
    /// The gas one batch may use, read once per cycle ([`Executor::batch_gas_budget`]).
    batch_budget: Option<u64>,
    /// Where this cycle's submissions spent their time.
    submit_times: SubmitTimes,
    /// When this process last sent each pending transaction, by journal id (absent after a
    /// restart: due now).
    last_sent: HashMap<u64, Instant>,
    /// The newest head settled against: off-chain rows with no block of their own carry it.
    head: BlockRef,
    policy: ExecPolicy,
    /// Off-chain rows journalled by this process.
    offchain_recorded: usize,
}

impl Executor {
    pub fn new(
        provider: DynProvider,
        gate: GateRef,
        keeper: Address,
        signer: Option<PrivateKeySigner>,
        journal: Journal,
        policy: ExecPolicy,
    ) -> Self {
        Self {
            provider,
            gate,
            keeper,
            signer,
            sender: None,
            journal,
            fees: None,
            batch_budget: None,
            submit_times: SubmitTimes::default(),
            last_sent: HashMap::new(),
            head: BlockRef::default(),
            policy,
            offchain_recorded: 0,
        }
    }

    pub fn journal(&self) -> &Journal {
        &self.journal
    }

    /// How answers are batched: the window an answer is held for others to join it, and the
    /// most one batch carries.
    pub fn batching(&self) -> (Duration, usize) {
        (self.policy.batch_window, self.policy.batch_max)
    }

    /// The address transactions are sent (or, in a dry run, simulated) from.
    pub fn keeper(&self) -> Address {
        self.keeper
    }

    /// A new cycle: fees are read afresh. Returns the off-chain rows journalled so far.
    pub fn new_cycle(&mut self) -> usize {
        self.fees = None;
        self.batch_budget = None;
        self.submit_times = SubmitTimes::default();
        self.offchain_recorded
    }

    /// Where this cycle's submissions spent their time so far.
    pub fn submit_times(&self) -> SubmitTimes {
        self.submit_times
    }

    /// Off-chain rows journalled by this process.
    pub fn offchain_recorded(&self) -> usize {
        self.offchain_recorded
    }

    /// Retires from the journal's memory what the record now keeps: confirmed submissions
    /// whose transaction `published` says is in the feed, ended ones, settled own calls, and
    /// the off-chain rows the recorder has stored (all it was handed).
    pub fn retire(&mut self, published: impl Fn(&str) -> bool) {
        let stored = self.journal.offchain_entries().last().map(|(at, _)| *at);
        self.journal.retire(
            |t| t.outcome.and_then(|(_, tx)| tx).is_some_and(|tx| published(&tx.to_string())),
            stored,
        );
    }

    /// Retires from the journal's memory the confirmed submissions whose transaction
    /// `published` says is in the feed, ended ones and settled own calls; its off-chain rows stay
    /// until the recorder has stored them ([`Executor::retire`] after a write). At start, before
    /// any write, they are not stored yet: a state rebuilt from the journal needs them all.
    pub fn retire_published(&mut self, published: impl Fn(&str) -> bool) {
        self.journal.retire(
            |t| t.outcome.and_then(|(_, tx)| tx).is_some_and(|tx| published(&tx.to_string())),
            None,
        );
    }

    /// Markets where one of the keeper's own calls is pending.
    pub fn own_busy(&self) -> HashSet<Address> {
        self.journal.own_pending().map(|o| o.call.market).collect()
    }

    /// Whether one of the keeper's own calls is pending in `market`.
    fn own_pending_in(&self, market: Address) -> bool {
        self.journal.own_pending().any(|o| o.call.market == market)
    }

    /// Journals `failures` as off-chain rows, each the moment it is handed over.
    pub fn offchain(&mut self, failures: impl IntoIterator<Item = Failure>) -> Result<()> {
        for f in failures {
            let row = f.into_row(self.gate.chain_id, self.gate.gate, self.head);
            self.journal.append(Entry::Offchain(row))?;
            self.offchain_recorded += 1;
        }
        Ok(())
    }

    fn failed(
        &mut self,
        market: Address,
        at: Option<BlockRef>,
        hash: Option<alloy::primitives::B256>,
        error: String,
        note: Annotation,
    ) -> Result<()> {
        self.offchain([Failure::new(market, at, error).about(hash, note)])
    }

    /// The sender, created on first use from the signer.
    async fn sender(&mut self) -> Result<&mut Sender> {
        if self.sender.is_none() {
            let signer = self.signer.clone().ok_or(ExecError::NoSigner)?;
            let floor = self.journal.pending_nonce_floor();
            let s = Sender::new(self.provider.clone(), signer, self.gate.chain_id, floor).await?;
            self.sender = Some(s);
        }
        Ok(self.sender.as_mut().expect("just set"))
    }

    async fn resync(&mut self) -> Result<()> {
        let floor = self.journal.pending_nonce_floor();
        self.sender().await?.resync(floor).await?;
        Ok(())
    }

    // --- submissions

    /// An answer that was never signed: an off-chain row with the whole cause, asked again
    /// when due.
    fn not_sent(
        &mut self,
        a: Answer,
        cause: &(dyn std::error::Error + 'static),
    ) -> Result<Option<u64>> {
        let why = format!("not sent: {}", crate::error_chain(cause));
        self.failed(a.market, Some(a.read), Some(a.prompt_hash), why, a.note)?;
        Ok(None)
    }

    /// Prints what the gate would publish for `a` instead of sending it (a dry run).
    async fn dry_run(&self, a: &Answer) {
        let (input, call, _) = answer_call(a);
        let sim = tx::simulate_submit(&self.provider, self.gate.gate, self.keeper, &input, call);
        let sim = sim.await;
        let line = serde_json::json!({
            "dry_run": true,
            "market": a.market.to_checksum(None),
            "raw": a.raw,
            "prompt_hash": a.prompt_hash.to_string(),
            "read_block": a.read.number,
            "quote": {
                "max_price_paid": a.quote.maxPricePaid.to_string(),
                "deadline": a.quote.deadline,
            },
            "attestors": a.attested.as_ref().map(|at| &at.signers),
            "would_publish_reason": sim.as_ref().ok(),
            "would_revert": sim.as_ref().err().map(|e| crate::error_chain(e)),
        });
        println!("{line}");
    }

    /// The answers of `answers` that may be sent. One the chain would refuse as expired is
    /// never sent: an off-chain row says so, and the market is asked again when due (the gate
    /// publishes an ABSTAIN or an unparseable answer whenever it lands: a relayed one carries
    /// no deadline, and the deadline an attested one carries, signed, is not looked at). So is
    /// an attested one whose read would be older than the gate's `maxReadAge`. Both checks run
    /// on the head as it is now, read once for all of them.
    async fn sendable(&mut self, answers: Vec<Answer>) -> Result<Vec<Answer>> {
        let started = Instant::now();
        let read_window = self.policy.read_window;
        let window = |a: &Answer| read_window.filter(|_| a.attested.is_some());
        let expires = |a: &Answer| {
            a.quote.deadline != 0
                && matches!(gate_verdict(&a.raw), verdict::BUY_UP | verdict::BUY_DOWN)
        };
        let head = if answers.iter().any(|a| window(a).is_some() || expires(a)) {
            follower::head(&self.provider).await.ok()
        } else {
            None
        };
        let next = match &head {
            Some(h) if answers.iter().any(expires) => {
                Some(follower::next_block_time(&self.provider, h).await)
            }
            _ => None,
        };
        let mut out = Vec::with_capacity(answers.len());
        for a in answers {
            if let (Some(window), Some(head)) = (window(&a), &head) {
                let age = (head.number + 1).saturating_sub(a.read.number);
                if age > window {
                    let why = format!(
                        "not sent: the attested read of block {} would be {age} blocks old in \
                         the next block, more than the gate's maxReadAge {window}; the gate \
                         would refuse it (reason 21)",
                        a.read.number
                    );
                    warn!(market = %a.market, read = a.read.number, age, "attested read too old to send; not sent");
                    self.failed(a.market, Some(a.read), Some(a.prompt_hash), why, a.note)?;
                    continue;
                }
            }
            if let (true, Some(next)) = (expires(&a), next) {
                if next > a.quote.deadline {
                    let why = format!(
                        "not sent: expired before it could be sent: the next block's chain time \
                         {next} is past the quote's deadline {} (read at block {}, {} s \
                         earlier); the gate would refuse it (reason 16)",
                        a.quote.deadline,
                        a.read.number,
                        next.saturating_sub(a.read.time)
                    );
                    warn!(market = %a.market, deadline = a.quote.deadline, next, "answer expired before sending; not sent");
                    self.failed(a.market, Some(a.read), Some(a.prompt_hash), why, a.note)?;
                    continue;
                }
            }
            out.push(a);
        }
        self.submit_times.checks += started.elapsed();
        Ok(out)
    }

    /// Fees for this cycle's new submissions, read on first use.
    async fn cycle_fees(&mut self) -> std::result::Result<Fees, ExecError> {
        if let Some(f) = self.fees {
            return Ok(f);
        }
        let f = tx::current_fees(&self.provider).await?;
        self.fees = Some(f);
        Ok(f)
    }

    /// The gas one batch may be signed with: half the newest block's gas limit, read once per
    /// cycle. Half, so a batch never has to wait for an empty block to fit.
    async fn batch_gas_budget(&mut self) -> std::result::Result<u64, ExecError> {
        if let Some(b) = self.batch_budget {
            return Ok(b);
        }
        let b = tx::block_gas_limit(&self.provider).await? / 2;
        self.batch_budget = Some(b);
        Ok(b)
    }

    /// Signs one answer at the next nonce, journals it, then sends it. Returns the submission
    /// id when it is in flight (a refusal is an off-chain row). A dry run prints what the gate
    /// would publish instead.
    pub async fn submit(&mut self, a: Answer) -> Result<Option<u64>> {
        if self.policy.dry_run {
            self.dry_run(&a).await;
            return Ok(None);
        }
        match self.sendable(vec![a]).await?.pop() {
            Some(a) => self.submit_checked(a).await,
            None => Ok(None),
        }
    }

    /// [`Executor::submit`] of an answer [`Executor::sendable`] passed.
    async fn submit_checked(&mut self, a: Answer) -> Result<Option<u64>> {
        let started = Instant::now();
        let fees = match self.cycle_fees().await {
            Ok(f) => f,
            Err(e) => return self.not_sent(a, &e),
        };
        let (input, call, cap) = answer_call(&a);
        // Gas from the pending state's estimate plus the margin, capped at the worst case of one
        // IOC at the match cap. A call the estimate shows reverting is never signed: it is an
        // off-chain row with the decoded revert, and the market is asked again when due.
        let gas = tx::gas_for(&self.provider, call, self.keeper, self.gate.gate, &input, cap);
        let gas = match gas.await {
            Ok(g) => g,
            Err(e) => {
                warn!(market = %a.market, error = %crate::error_chain(&e), "submission not sent");
                return self.not_sent(a, &e);
            }
        };
        self.submit_times.estimate += started.elapsed();
        Ok(self.sign_and_send(vec![a], input, gas, fees).await?.pop())
    }

    /// Sends `answers` together, as batches, when the gate takes them so: more than one, all
    /// relayed (`submitVerdicts`) or all attested (`submitAttestedVerdicts`), and not a dry
    /// run. Each batch is sized by its own gas
    /// estimate against half the block gas limit (halved until it fits) and at most
    /// [`ExecPolicy::batch_max`] long, signed once, journalled in one line and sent; each of its
    /// decisions is a submission of its own with the batch's transaction. A batch the gate
    /// would refuse whole (an element naming a market it does not know, a gate without batches)
    /// goes out one answer at a time instead, each refused or sent on its own. Returns the ids
    /// in flight, in the answers' order.
    pub async fn submit_batch(&mut self, answers: Vec<Answer>) -> Result<Vec<u64>> {
        let attested = answers.iter().filter(|a| a.attested.is_some()).count();
        let one_by_one = self.policy.dry_run
            || self.policy.batch_max <= 1
            || (attested != 0 && attested != answers.len());
        if one_by_one || answers.len() <= 1 {
            let mut ids = Vec::new();
            for a in answers {
                ids.extend(self.submit(a).await?);
            }
            return Ok(ids);
        }
        let answers = self.sendable(answers).await?;
        let mut ids = Vec::new();
        let mut todo: std::collections::VecDeque<Vec<Answer>> = std::collections::VecDeque::new();
        let mut rest = answers;
        while !rest.is_empty() {
            let tail = rest.split_off(rest.len().min(self.policy.batch_max));
            todo.push_back(std::mem::replace(&mut rest, tail));
        }
        while let Some(mut group) = todo.pop_front() {
            if group.len() == 1 {
                ids.extend(self.submit_checked(group.pop().expect("one")).await?);
                continue;
            }
            let started = Instant::now();
            let sized = self.size_batch(&group).await;
            self.submit_times.estimate += started.elapsed();
            match sized {
                Ok(Sized::Fits { input, gas, fees }) => {
                    ids.extend(self.sign_and_send(group, input, gas, fees).await?);
                }
                Ok(Sized::TooBig { gas, budget }) => {
                    // Halves, in order, the first half first.
                    tracing::debug!(
                        len = group.len(),
                        gas,
                        budget,
                        "batch above the gas budget; halved"
                    );
                    let second = group.split_off(group.len() / 2);
                    todo.push_front(second);
                    todo.push_front(group);
                }
                Err(e @ ExecError::Rpc(_)) => {
                    warn!(len = group.len(), error = %crate::error_chain(&e), "batch not sent");
                    for a in group {
                        self.not_sent(a, &e)?;
                    }
                }
                Err(e) => {
                    warn!(len = group.len(), error = %crate::error_chain(&e), "the gate would refuse the batch whole; its answers go one at a time");
                    for a in group {
                        ids.extend(self.submit_checked(a).await?);
                    }
                }
            }
        }
        Ok(ids)
    }

    /// A batch's calldata and gas: its pending-state estimate plus the margin, capped at the
    /// sum of its elements' caps, held against the batch gas budget. The gate reverts a batch
    /// whole (`OrderGasShort`) rather than run an order on less than `ORDER_GAS`, so the
    /// estimate is the gas at which every order runs whole.
    async fn size_batch(&mut self, group: &[Answer]) -> std::result::Result<Sized, ExecError> {
        let fees = self.cycle_fees().await?;
        let budget = self.batch_gas_budget().await?;
        let (input, call, cap) = batch_call(group.iter().map(Call::answer));
        let (gate, keeper) = (self.gate.gate, self.keeper);
        let gas = tx::gas_for(&self.provider, call, keeper, gate, &input, cap).await?;
        Ok(if gas > budget {
            Sized::TooBig { gas, budget }
        } else {
            Sized::Fits { input, gas, fees }
        })
    }

    /// Signs `input` (one answer's call, or the batch of all of `answers`) at the next nonce,
    /// journals it in one line (a `submit`, or a `submit_batch` naming every answer), then
    /// sends it. Returns the ids in flight: all of them, or none when the node refused it (an
    /// off-chain row each).
    async fn sign_and_send(
        &mut self,
        answers: Vec<Answer>,
        input: Bytes,
        gas: u64,
        fees: Fees,
    ) -> Result<Vec<u64>> {
        let gate = self.gate.gate;
        let first_id = self.journal.next_id();
        let ids: Vec<u64> = (first_id..first_id + answers.len() as u64).collect();
        for retry in 0..2 {
            let started = Instant::now();
            let sender = self.sender().await?;
            let nonce = sender.take_nonce();
            let signed = sender.sign(gate, input.clone(), gas, nonce, fees, U256::ZERO).await?;
            self.submit_times.sign += started.elapsed();
            let started = Instant::now();
            let subs: Vec<Submission> = answers
                .iter()
                .zip(&ids)
                .map(|(a, &id)| Submission {
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
                    attested: a.attested.clone(),
                })
                .collect();
            // On disk before it is sent, in one line and one fsync however many decisions it
            // carries: a crash from here on leaves pending submissions that a restart follows,
            // never a decision the keeper does not know it made.
            let entry = match <[Submission; 1]>::try_from(subs) {
                Ok([one]) => Entry::Submit(one),
                Err(subs) => Entry::SubmitBatch { subs },
            };
            self.journal.append(entry)?;
            self.submit_times.journal += started.elapsed();
            self.last_sent.insert(first_id, Instant::now());
            let started = Instant::now();
            let sent = self.sender().await?.broadcast(&signed).await;
            self.submit_times.broadcast += started.elapsed();
            self.submit_times.sent += 1;
            let markets = || answers.iter().map(|a| a.market.to_string()).collect::<Vec<_>>();
            match sent {
                Ok(()) => {
                    if self.policy.one_at_a_time {
                        // Mined or not by then, it is followed like any other pending one.
                        let _ = tx::wait_receipt(
                            &self.provider,
                            signed.attempt.tx,
                            self.policy.resend_after,
                        )
                        .await;
                    }
                    return Ok(ids);
                }
                // The node may hold it: pending, followed by settle like any other.
                Err(BroadcastError::Transport(e)) => {
                    warn!(markets = ?markets(), nonce, error = %crate::error_chain(&*e), "send failed in transport; pending and followed");
                    return Ok(ids);
                }
                Err(BroadcastError::Refused(r)) => {
                    self.sender().await?.give_back(nonce);
                    self.last_sent.remove(&first_id);
                    let done = ids.iter().map(|&id| Entry::Done {
                        id,
                        outcome: Outcome::NotSent,
                        tx: None,
                    });
                    self.journal.append_all(done.collect())?;
                    if r == Refusal::NonceTooLow && retry == 0 {
                        // Our view of the nonce was stale: resynchronise and sign again.
                        self.resync().await?;
                        continue;
                    }
                    warn!(markets = ?markets(), nonce, refusal = %r, "node refused the submission; nothing is in flight");
                    for a in answers {
                        let why = format!("not sent: the node refused it: {r}");
                        self.failed(a.market, Some(a.read), Some(a.prompt_hash), why, a.note)?;
                    }
                    if !matches!(r, Refusal::NonceTooLow) {
                        self.resync().await?;
                    }
                    return Ok(Vec::new());
                }
            }
        }
        Ok(Vec::new())
    }

    /// Waits up to `resend_after` for the transactions of `ids` to be mined, and returns the
    /// decisions they published, decoded from their own receipts.
    pub async fn await_mined(&mut self, ids: &[u64]) -> Result<Vec<Submitted>> {
        let deadline = Instant::now() + self.policy.resend_after;
        let mut out = Vec::new();
        let mut delay = Duration::from_millis(10);
        let mut left: Vec<Tracked> =
            ids.iter().filter_map(|id| self.journal.get(*id).cloned()).collect();
        let (rpc, gate) = (&self.provider, self.gate.gate);
        while !left.is_empty() {
            // Every pending transaction polled once (bounded), a batch's for all its decisions.
            let polled = poll_mined(rpc, gate, left, self.policy.concurrency).await?;
            let mut still = Vec::new();
            for (t, m) in polled {
                match m {
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

    /// Settles the journal against the chain as `step` saw it and `record` holds it:
    /// - a submission whose `Decision` is in a confirmed block is confirmed;
    /// - one whose confirmed decision a reorg removed is reopened, and abandoned if the node no
    ///   longer knows any of its transactions (its market is then due again);
    /// - one mined and reverted is an off-chain row;
    /// - one whose nonce another transaction used (as of the confirmed block) is replaced;
    /// - with `resend`, one still unmined after `resend_after`, or unknown to the node, is
    ///   re-sent at the same nonce with bumped fees; a nonce gap below pending transactions is
    ///   filled. (The end of a cycle, which has just waited for its own transactions, re-sends
    ///   nothing: the next cycle's settle does, so one re-send happens per cycle at most.)
    pub async fn settle(
        &mut self,
        step: &Step,
        record: &ChainRecord,
        resend: bool,
    ) -> Result<Settled> {
        self.head = step.head;
        let mut out = Settled::default();
        if self.policy.dry_run || self.signer.is_none() {
            return Ok(out);
        }
        let recorded = record.txs();
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
            // Submissions whose rows were already in the feed have left the journal's memory,
            // so a reorg that removed them frees nonces nothing here knows of: the next nonce
            // is read from the node again (its pending count, or above every pending one), or
            // the next submission would park above a gap (f4).
            self.resync().await?;
        }
        let pending: Vec<Tracked> = self.journal.pending().cloned().collect();
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
        // Those whose decision is in the record are confirmed, in one journal write; the
        // receipts of the others are polled, once per transaction (bounded).
        let (seen, rest): (Vec<Tracked>, Vec<Tracked>) =
            pending.into_iter().partition(|t| t.attempts.iter().any(|a| recorded.contains(&a.tx)));
        let mut done = Vec::new();
        for t in seen {
            let a = t.attempts.iter().find(|a| recorded.contains(&a.tx)).expect("partitioned");
            let id = t.sub.id;
            done.push(Entry::Done { id, outcome: Outcome::Confirmed, tx: Some(a.tx) });
            self.last_sent.remove(&t.tx_group());
            out.confirmed += 1;
        }
        self.journal.append_all(done)?;
        let polled = poll_mined(&self.provider, self.gate.gate, rest, self.policy.concurrency);
        let polled = polled.await?;
        let mut stuck = Vec::new();
        // Why a batch reverted, replayed once for all its decisions; whether a receipt of its
        // transaction appeared after all, read once.
        let mut reverts: HashMap<u64, String> = HashMap::new();
        let mut mined_late: HashMap<u64, bool> = HashMap::new();
        for (t, mined) in polled {
            let id = t.sub.id;
            match mined {
                Some(m) if m.block() > step.safe.number => out.awaiting_confirmations += 1,
                Some(Mined::Reverted { tx, block, gas_used }) => {
                    let why = match reverts.get(&t.tx_group()) {
                        Some(why) => why.clone(),
                        None => {
                            let why = self.revert_reason(&t, block, gas_used).await;
                            reverts.insert(t.tx_group(), why.clone());
                            why
                        }
                    };
                    warn!(market = %t.sub.market, %tx, block, gas_used, revert = %why, "submission reverted on chain");
                    let row =
                        format!("tx {tx} (nonce {}) reverted in block {block}: {why}", t.sub.nonce);
                    let note = t.sub.note.clone();
                    self.failed(t.sub.market, None, Some(t.sub.prompt_hash), row, note)?;
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
                    let ours = match mined_late.get(&t.tx_group()) {
                        Some(&ours) => ours,
                        None => {
                            let ours = mined_receipt(&self.provider, &t).await?.is_some();
                            mined_late.insert(t.tx_group(), ours);
                            ours
                        }
                    };
                    if ours {
                        out.awaiting_confirmations += 1;
                        continue;
                    }
                    warn!(market = %t.sub.market, nonce = t.sub.nonce, "submission replaced: another transaction used its nonce");
                    let why = format!(
                        "not published: nonce {} was used by a transaction that is not this submission's",
                        t.sub.nonce
                    );
                    let note = t.sub.note.clone();
                    self.failed(t.sub.market, None, Some(t.sub.prompt_hash), why, note)?;
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
        // Per transaction (a batch's decisions share one): whether a node knows it, and whether
        // this pass has looked at re-sending it.
        let mut known_of: HashMap<u64, bool> = HashMap::new();
        let mut looked: HashSet<u64> = HashSet::new();
        for t in stuck {
            let (id, group) = (t.sub.id, t.tx_group());
            let known = match known_of.get(&group) {
                Some(&k) => k,
                None => {
                    let mut k = false;
                    for a in &t.attempts {
                        k |= tx::known(&self.provider, a.tx).await?;
                    }
                    known_of.insert(group, k);
                    k
                }
            };
            if (t.reopened || step.rewound_to.is_some()) && !known {
                // Its decision left the chain with a reorg (confirmed, or mined and not yet
                // confirmed) and no node holds it: the market is asked again with a fresh read,
                // and its nonce is free for that. Re-sending it instead would keep the nonce
                // floor above the gap the reorg opened, and fill the gap with self-transfers.
                self.journal.append(Entry::Done { id, outcome: Outcome::NotSent, tx: None })?;
                self.last_sent.remove(&group);
                out.abandoned += 1;
                continue;
            }
            if !resend || !looked.insert(group) {
                continue;
            }
            if (!known || self.resend_due(group)) && self.resend(&t).await? {
                out.resent += 1;
            }
        }
        // Gaps below the submissions still pending (known to a node) are filled; then, after a
        // reorg, the next nonce comes down to the node's count (or past the highest nonce still
        // pending): the nonces the reorg freed go to the submissions due this cycle.
        out.gaps_filled = self.fill_gaps().await?;
        if out.reorged > 0 || out.abandoned > 0 {
            self.resync().await?;
        }
        Ok(out)
    }

    /// Whether the transaction of journal id `id` has waited `resend_after` since this process
    /// last sent it (one sent before a restart is due at once).
    fn resend_due(&self, id: u64) -> bool {
        self.last_sent.get(&id).is_none_or(|at| at.elapsed() >= self.policy.resend_after)
    }

    /// Re-signs a pending submission's transaction (a batch's: all its decisions at once) at
    /// its own nonce with bumped fees and sends it; the new transaction is journalled first.
    /// Returns whether it was sent.
    async fn resend(&mut self, t: &Tracked) -> Result<bool> {
        let input = self.calldata_of(t);
        let what = if t.batch.is_empty() { "submission" } else { "batch" };
        let (group, sub) = (t.tx_group(), &t.sub);
        self.resend_at(group, sub.market, what, input, sub.gas, sub.nonce, t.latest()).await
    }

    /// The calldata of a submission's transaction, as signed: its own call, or the batch of
    /// every decision of its batch, in order.
    fn calldata_of(&self, t: &Tracked) -> Bytes {
        if t.batch.is_empty() {
            return calldata(&t.sub);
        }
        let members = t.batch.iter().filter_map(|id| self.journal.get(*id));
        batch_call(members.map(|m| Call::of(&m.sub))).0
    }

    /// Re-signs journal id `id` at `nonce` with fees bumped over `last`, journals the new
    /// attempt, then sends it. Returns whether the node took it.
    #[allow(clippy::too_many_arguments)]
    async fn resend_at(
        &mut self,
        id: u64,
        market: Address,
        what: &str,
        input: Bytes,
        gas: u64,
        nonce: u64,
        last: crate::chain::journal::Attempt,
    ) -> Result<bool> {
        let gate = self.gate.gate;
        let signed = self.sender().await?.sign_replacement(gate, input, gas, nonce, last).await?;
        self.journal.append(Entry::Resend { id, attempt: signed.attempt })?;
        self.last_sent.insert(id, Instant::now());
        match self.sender().await?.broadcast(&signed).await {
            Ok(()) => {
                info!(%market, nonce, tx = %signed.attempt.tx, max_fee = signed.attempt.max_fee_per_gas, "{what} re-sent at the same nonce with bumped fees");
                Ok(true)
            }
            Err(BroadcastError::Refused(r)) => {
                // NonceTooLow: an attempt was mined (or another tx used the nonce): settled
                // next step. Underpriced: bumped again next time. Either way, still pending.
                warn!(%market, nonce, refusal = %r, "{what}: replacement refused");
                Ok(false)
            }
            // It may have reached the node: followed like the others.
            Err(BroadcastError::Transport(e)) => {
                warn!(%market, nonce, error = %crate::error_chain(&*e), "{what}: re-send failed in transport");
                Ok(false)
            }
        }
    }

    /// Fills nonce gaps: when the node's pending nonce is below a pending transaction's and no
    /// pending transaction uses it, one the node dropped (or a refused send) left a hole that
    /// holds every later transaction back.
    async fn fill_gaps(&mut self) -> Result<usize> {
        let mut filled = 0;
        loop {
            let own = self.journal.own_pending().map(|o| o.call.nonce);
            let nonces: HashSet<u64> =
                self.journal.pending().map(|t| t.sub.nonce).chain(own).collect();
            let Some(&top) = nonces.iter().max() else { return Ok(filled) };
            let sender = self.sender().await?;
            let next = sender.pending_nonce().await?;
            if next >= top || nonces.contains(&next) || filled >= nonces.len() {
                return Ok(filled);
            }
            let fees = tx::current_fees(sender.rpc()).await?;
            let hash = sender.fill_gap(next, fees).await?;
            warn!(nonce = next, tx = %hash, "filled a nonce gap below pending transactions");
            filled += 1;
        }
    }

    /// Why a submission mined in `block` reverted: replayed with its own gas limit on that
    /// block's state, decoded ([`tx::replay_revert`]).
    async fn revert_reason(&self, t: &Tracked, block: u64, gas_used: u64) -> String {
        let input = self.calldata_of(t);
        tx::replay_revert(
            &self.provider,
            self.keeper,
            self.gate.gate,
            &input,
            t.sub.gas,
            block,
            gas_used,
        )
        .await
    }

    // --- the keeper's own calls

    /// Follows the keeper's own calls still pending (this run's and, after a restart, the
    /// journal's): one whose attempt is mined is done; one whose nonce another transaction
    /// used is replaced (its position is looked at afresh); one not mined after
    /// `--resend-after` is re-signed at its own nonce with bumped fees. Returns the positions
    /// closed.
    pub async fn settle_own(&mut self) -> Result<Closed> {
        let mut done = Closed::default();
        let pending: Vec<TrackedOwn> = self.journal.own_pending().cloned().collect();
        if pending.is_empty() {
            return Ok(done);
        }
        // The key's mined nonce count, read once and BEFORE the receipts: a nonce it shows used
        // by a block whose receipt of ours is then not found was used by another transaction.
        let used_below = self
            .provider
            .get_transaction_count(self.keeper)
            .await
            .map_err(|e| ExecError::Rpc(Box::new(e)))?;
        for own in pending {
            let OwnCall { id, what, market, nonce, .. } = own.call;
            let mut mined = None;
            for a in &own.attempts {
                if let Some(r) = tx::receipt(&self.provider, a.tx).await? {
                    mined = Some(r);
                    break;
                }
            }
            if let Some(r) = mined {
                if self.own_mined(&own.call, &r).await? {
                    done.count(what);
                }
                continue;
            }
            if used_below > nonce {
                // Mined nonces include ours, but none of our attempts: another transaction of
                // this key took it. Nothing of ours can be mined at it any more.
                warn!(%market, nonce, "{what}: its nonce was used by another transaction; looked at afresh");
                self.journal.append(Entry::Done { id, outcome: Outcome::Replaced, tx: None })?;
                self.last_sent.remove(&id);
                continue;
            }
            if !self.resend_due(id) {
                continue;
            }
            let (input, gas) = (own.call.input.clone(), own.call.gas);
            self.resend_at(id, market, what.function(), input, gas, nonce, own.latest()).await?;
        }
        Ok(done)
    }

    /// Redeems and writes off the positions of `closing`, each the keeper's own call; a market
    /// where one is already pending is left to it. Returns the positions closed.
    pub async fn close(&mut self, closing: Closing) -> Result<Closed> {
        let mut done = Closed::default();
        let gate = self.gate.gate;
        for m in closing.redeem {
            if self.own_pending_in(m) {
                continue;
            }
            if self.policy.dry_run {
                println!("{}", serde_json::json!({"dry_run": true, "would_redeem": m.to_string()}));
                continue;
            }
            match tx::redeem_calldata(&self.provider, gate, self.keeper, m).await {
                Ok((input, gas)) => {
                    if self.own_call(m, OwnKind::Redeem, input, gas).await? {
                        done.redeemed += 1;
                    }
                }
                Err(e) => {
                    warn!(market = %m, error = %crate::error_chain(&e), "redeem not sent: its estimate reverts");
                }
            }
        }
        for (m, is_final) in closing.write_off {
            if self.own_pending_in(m) {
                continue;
            }
            // Final: redeem closes it, unless the market cannot pay (its redeem reverts): v2.1
            // writes such a position off like an unresolved one.
            if is_final {
                let input = IRiskGate::redeemCall { market: m }.abi_encode();
                let redeem =
                    tx::estimate(&self.provider, "redeem", self.keeper, gate, &input.into()).await;
                // Redeemable, or already closed (redeemed this cycle): nothing to write off.
                match redeem {
                    Err(ExecError::WouldRevert { revert, .. })
                        if !revert.starts_with("NoOpenPosition") => {}
                    _ => continue,
                }
            }
            if self.policy.dry_run {
                println!(
                    "{}",
                    serde_json::json!({"dry_run": true, "would_write_off": m.to_string()})
                );
                continue;
            }
            match tx::write_off_calldata(&self.provider, gate, self.keeper, m).await {
                Ok((input, gas)) => {
                    if self.own_call(m, OwnKind::WriteOff, input, gas).await? {
                        done.written_off += 1;
                    }
                }
                Err(e) => {
                    warn!(market = %m, error = %crate::error_chain(&e), "writeOff not sent: its estimate reverts");
                }
            }
        }
        Ok(done)
    }

    /// Sends one of the keeper's own calls at the next nonce, journalled before it is sent,
    /// and waits up to `--resend-after` for it. One not mined by then stays pending and is
    /// followed by [`Executor::settle_own`]: re-sent at the same nonce, never at a new one.
    /// Returns whether it was mined and succeeded (a failure is an off-chain row; the position
    /// is looked at again next cycle).
    async fn own_call(
        &mut self,
        market: Address,
        what: OwnKind,
        input: Bytes,
        gas: u64,
    ) -> Result<bool> {
        let gate = self.gate.gate;
        let fees = tx::current_fees(&self.provider).await?;
        let id = self.journal.next_id();
        let sender = self.sender().await?;
        let nonce = sender.take_nonce();
        let signed = sender.sign(gate, input.clone(), gas, nonce, fees, U256::ZERO).await?;
        let call = OwnCall { id, what, market, nonce, input, gas, first: signed.attempt };
        // On disk before it is sent: a restart follows it at its own nonce.
        self.journal.append(Entry::Own(call.clone()))?;
        self.last_sent.insert(id, Instant::now());
        let sender = self.sender().await?;
        match sender.broadcast(&signed).await {
            Ok(()) => {}
            // The node may hold it: followed like one it accepted.
            Err(BroadcastError::Transport(e)) => {
                warn!(%market, nonce, error = %crate::error_chain(&*e), "{what}: send failed in transport; followed at its nonce");
            }
            Err(BroadcastError::Refused(r)) => {
                sender.give_back(nonce);
                self.journal.append(Entry::Done { id, outcome: Outcome::NotSent, tx: None })?;
                self.last_sent.remove(&id);
                warn!(%market, nonce, refusal = %r, "{what}: the node refused it; tried again next cycle");
                self.resync().await?;
                return Ok(false);
            }
        }
        match tx::wait_receipt(&self.provider, signed.attempt.tx, self.policy.resend_after).await {
            Ok(r) => self.own_mined(&call, &r).await,
            Err(e) => {
                warn!(%market, nonce, error = %crate::error_chain(&e), "{what} not mined yet; re-sent at the same nonce if it stays stuck");
                Ok(false)
            }
        }
    }

    /// One of the keeper's own calls was mined: done in the journal. Reverted (status 0), it is
    /// an off-chain row with the revert, replayed with the call's own gas limit on its block's
    /// state and decoded. Returns whether it succeeded.
    async fn own_mined(&mut self, call: &OwnCall, r: &TransactionReceipt) -> Result<bool> {
        let (id, what, market, hash) = (call.id, call.what, call.market, r.transaction_hash);
        self.last_sent.remove(&id);
        if r.status() {
            self.journal.append(Entry::Done { id, outcome: Outcome::Confirmed, tx: Some(hash) })?;
            return Ok(true);
        }
        self.journal.append(Entry::Done { id, outcome: Outcome::Reverted, tx: Some(hash) })?;
        let block = r.block_number.unwrap_or_default();
        let why = tx::replay_revert(
            &self.provider,
            self.keeper,
            self.gate.gate,
            &call.input,
            call.gas,
            block,
            r.gas_used,
        )
        .await;
        warn!(%market, tx = %hash, block, gas_used = r.gas_used, revert = %why, "{what} reverted on chain");
        let row = format!("{what} tx {hash} reverted in block {block}: {why}");
        self.failed(market, None, None, row, Annotation::default())?;
        Ok(false)
    }
}

/// The quote a submission was sent with.
fn quote_sent(sub: &Submission) -> Quote {
    Quote { maxPricePaid: sub.quote.max_price_paid, deadline: sub.quote.deadline }
}

/// A single submission's calldata, as signed.
fn calldata(sub: &Submission) -> Bytes {
    Call::of(sub).single().0
}

/// [`Call::single`] of an answer.
fn answer_call(a: &Answer) -> (Bytes, &'static str, u64) {
    Call::answer(a).single()
}

/// What one decision's call is made of, from an answer about to be sent or a journalled
/// submission being re-sent.
struct Call<'a> {
    market: Address,
    raw: &'a str,
    prompt_hash: B256,
    read_block: u64,
    quote: Quote,
    attested: Option<&'a Attestations>,
}

impl<'a> Call<'a> {
    /// An answer about to be sent.
    fn answer(a: &'a Answer) -> Self {
        Call {
            market: a.market,
            raw: &a.raw,
            prompt_hash: a.prompt_hash,
            read_block: a.read.number,
            quote: a.quote.clone(),
            attested: a.attested.as_ref(),
        }
    }

    /// A journalled submission, as it was signed.
    fn of(sub: &'a Submission) -> Self {
        Call {
            market: sub.market,
            raw: &sub.raw,
            prompt_hash: sub.prompt_hash,
            read_block: sub.read_block,
            quote: quote_sent(sub),
            attested: sub.attested.as_ref(),
        }
    }

    /// The call on its own: its data, the entry point's name, and the most gas it is signed
    /// with. A relayed answer is `submitVerdict`; an attested one `submitAttested` with every
    /// signed answer and the read they signed appended.
    fn single(&self) -> (Bytes, &'static str, u64) {
        match self.attested {
            None => (
                tx::submit_calldata(
                    self.market,
                    self.raw,
                    self.prompt_hash,
                    self.read_block,
                    &self.quote,
                ),
                "submitVerdict",
                tx::submit_gas_cap(self.raw),
            ),
            Some(at) => {
                let read = attestation::Read {
                    prompt_hash: self.prompt_hash,
                    best_bid: at.best_bid,
                    best_ask: at.best_ask,
                };
                let data = attestation::submit_calldata(
                    self.market,
                    self.read_block,
                    &at.raws,
                    &at.sigs,
                    self.quote.clone(),
                    &read,
                );
                (data, "submitAttested", tx::submit_attested_gas_cap(&at.raws))
            }
        }
    }
}

/// A batch's call, its elements in the order the gate decides them: its data, the entry
/// point's name, and the most gas it is signed with (the elements' own caps, summed). Relayed
/// answers are one `submitVerdicts`; attested ones (the caller never mixes the two) one
/// `submitAttestedVerdicts`, each element its single call's data after the selector, so the
/// attestors' signatures are the same either way.
fn batch_call<'a>(calls: impl IntoIterator<Item = Call<'a>>) -> (Bytes, &'static str, u64) {
    let calls: Vec<Call<'a>> = calls.into_iter().collect();
    if calls.first().is_some_and(|c| c.attested.is_some()) {
        let (mut elements, mut cap) = (Vec::with_capacity(calls.len()), 0u64);
        for c in &calls {
            let (data, _, gas) = c.single();
            elements.push(data.slice(4..));
            cap = cap.saturating_add(gas);
        }
        return (attestation::submit_batch_calldata(elements), "submitAttestedVerdicts", cap);
    }
    let cap = tx::submit_batch_gas_cap(calls.iter().map(|c| c.raw));
    let elements = calls
        .into_iter()
        .map(|c| tx::batch_element(c.market, c.raw, c.prompt_hash, c.read_block, &c.quote))
        .collect();
    (tx::submit_batch_calldata(elements), "submitVerdicts", cap)
}

/// The receipt of whichever of a submission's transactions was mined (latest attempt first);
/// `None` while none is.
async fn mined_receipt(rpc: &DynProvider, t: &Tracked) -> Result<Option<TransactionReceipt>> {
    for a in t.attempts.iter().rev() {
        if let Some(r) = tx::receipt(rpc, a.tx).await? {
            return Ok(Some(r));
        }
    }
    Ok(None)
}

/// What the chain says of each of `tracked`: their transactions' receipts polled once each (a
/// batch's decisions share one), `concurrency` at a time, and decoded for each decision's
/// market; `None` while its transaction is not mined.
async fn poll_mined(
    rpc: &DynProvider,
    gate: Address,
    tracked: Vec<Tracked>,
    concurrency: usize,
) -> Result<Vec<(Tracked, Option<Mined>)>> {
    let mut groups: std::collections::BTreeMap<u64, Vec<Tracked>> = Default::default();
    for t in tracked {
        groups.entry(t.tx_group()).or_default().push(t);
    }
    let polled: Vec<(Vec<Tracked>, Result<Option<TransactionReceipt>>)> =
        stream::iter(groups.into_values())
            .map(|g| async move {
                let r = mined_receipt(rpc, &g[0]).await;
                (g, r)
            })
            .buffered(concurrency.max(1))
            .collect()
            .await;
    let mut out = Vec::new();
    for (group, receipt) in polled {
        let receipt = receipt?;
        for t in group {
            let m =
                receipt.as_ref().map(|r| tx::decode_receipt(gate, t.position(), t.sub.market, r));
            out.push((t, m));
        }
    }
    Ok(out)
}
