//! The collector: what the chain says. It follows the chain (reorg check, scan of confirmed
//! blocks), holds the gate's facts, the markets known final, the chain time of each market's
//! latest decision, and the hot part of the record: the gate's logs whose rows are not yet in
//! the feed, or whose position is still open, decoded into a [`ChainRecord`]. Logs whose rows
//! the recorder has appended for good leave memory ([`Collector::prune`]), so memory does not
//! grow with the history. It reads books, never sends, and never writes to disk: what it found
//! since the last write is handed to the recorder as [`Found`].

use super::{GateRef, Result};
use crate::{
    chain::follower::{self, Cursor, Follower, Known, Step},
    chain::reads::{self, MarketInfo, MarketState, Question},
    domain::decision::{
        BlockRef, ChainRecord, Failure, GateFacts, TransportDetail, TxGas, Unanswered,
        WhyUnanswered,
    },
    domain::grid,
    kit::bindings::IBinaryMarket,
    record::feed::{self, FeedKey},
};
use alloy::{
    primitives::{Address, B256},
    providers::DynProvider,
    rpc::types::Log,
};
use std::collections::{HashMap, HashSet};
use tracing::warn;

/// A book read for an ask: the market's state as of `read`, and the chain time the next block
/// will carry (quotes' deadlines count from it).
#[derive(Debug, Clone)]
pub struct Book {
    pub state: MarketState,
    pub read: BlockRef,
    pub send_time: u64,
}

/// What the collector found since the recorder last saved: new logs and markets, new
/// decision times, the follower's cursor, and the oldest block a reorg rewound to.
#[derive(Debug, Clone, Default)]
pub struct Found {
    pub logs: Vec<Log>,
    pub markets: Vec<Known>,
    pub asked: Vec<(Address, u64)>,
    /// Decision times a reorg took back: each market's time as it was before the removed
    /// blocks (0: never asked), saved before `asked`.
    pub unasked: Vec<(Address, u64)>,
    pub cursor: Cursor,
    pub rewound_to: Option<u64>,
}

/// What a collector resumes from: the follower's cursor and markets, the hot logs (their
/// block times filled in) and each market's latest decision time.
#[derive(Debug, Clone, Default)]
pub struct Resume {
    pub cursor: Cursor,
    pub markets: Vec<Known>,
    pub hot: Vec<Log>,
    pub asked: Vec<(Address, u64)>,
}

/// Positions to close this cycle, in record order.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct Closing {
    /// Final markets where the gate holds a position: redeemed.
    pub redeem: Vec<Address>,
    /// Positions past `expiry + writeOffGrace`, with whether the market is final (then written
    /// off only if its `redeem` reverts).
    pub write_off: Vec<(Address, bool)>,
}

/// Changes of the re-ask times kept to undo after a reorg: a reorg deeper than this many
/// decisions restores the older ones as they were when they left (warned).
pub const RECENT_ASKS: usize = 4096;

pub struct Collector {
    provider: DynProvider,
    gate: GateRef,
    follower: Follower,
    facts: Option<GateFacts>,
    /// Chain time of every block that holds a hot log.
    times: HashMap<u64, u64>,
    /// Gas of every transaction that published a hot decision, filled by each
    /// [`Collector::follow`] (so after a resume, before the next write).
    gas: HashMap<B256, TxGas>,
    /// The hot logs, in chain order: what `record` is decoded from.
    hot: Vec<Log>,
    record: ChainRecord,
    /// Chain time of each market's latest decision (every decision seen, hot or not).
    last_asked: HashMap<Address, u64>,
    /// The latest changes of `last_asked`, (block, market, time before), so a reorg can take
    /// them back; as deep as the follower's checkpoints reach ([`RECENT_ASKS`] at most).
    recent_asks: std::collections::VecDeque<(u64, Address, u64)>,
    found: Found,
    final_markets: HashSet<Address>,
    /// Markets whose question could not be read or checked, already recorded as such (one row
    /// each per run, not one per cycle).
    questionless: HashSet<Address>,
    /// Markets whose grid the gate refuses whatever the book, already logged (once per run).
    untradable: HashSet<Address>,
    /// Markets read at once through the BookLens fallback.
    reads_at_once: usize,
}

impl Collector {
    pub fn new(
        provider: DynProvider,
        gate: GateRef,
        confirmations: u64,
        log_range: u64,
        reads_at_once: usize,
    ) -> Self {
        let mut follower = Follower::new(gate.gate, gate.factory, gate.from_block, confirmations);
        follower.log_range = log_range.max(1);
        Self {
            provider,
            gate,
            follower,
            facts: None,
            times: HashMap::new(),
            gas: HashMap::new(),
            hot: Vec::new(),
            record: ChainRecord::default(),
            last_asked: HashMap::new(),
            // Allocated whole once (4096 x 40 bytes): a buffer that grew with the record
            // was the long-run test's one source of heap growth.
            recent_asks: std::collections::VecDeque::with_capacity(RECENT_ASKS),
            found: Found::default(),
            final_markets: HashSet::new(),
            questionless: HashSet::new(),
            untradable: HashSet::new(),
            reads_at_once,
        }
    }

    /// The hot part of the record: rows not yet in the feed, and open positions.
    pub fn record(&self) -> &ChainRecord {
        &self.record
    }

    /// Chain time of each market's latest decision.
    pub fn last_asked(&self) -> &HashMap<Address, u64> {
        &self.last_asked
    }

    /// Resumes where a saved state stopped: the next [`Collector::follow`] scans only the
    /// blocks after it (and rewinds first if a reorg replaced its newest checkpoint).
    pub fn resume(&mut self, saved: Resume) -> Result<()> {
        self.follower.resume(saved.cursor, saved.markets);
        self.last_asked = saved.asked.into_iter().collect();
        self.hot = saved.hot;
        self.times =
            self.hot.iter().filter_map(|l| Some((l.block_number?, l.block_timestamp?))).collect();
        self.decode()
    }

    /// Takes what was found since the last call, for the recorder to save.
    pub fn take_found(&mut self) -> Found {
        let mut found = std::mem::take(&mut self.found);
        found.markets = self.follower.take_new_markets();
        found.cursor = self.follower.cursor();
        found
    }

    /// Logs become cold once their rows are in the feed (`in_feed` up to and including that
    /// key) and no open position needs them: they leave memory (the store keeps them). Returns
    /// them by (block, log index), for the store to mark cold.
    pub fn prune(&mut self, in_feed: Option<FeedKey>) -> Result<Vec<(u64, u64)>> {
        let Some(key) = in_feed else { return Ok(Vec::new()) };
        let (hot, cooled) = feed::split_hot(std::mem::take(&mut self.hot), key);
        self.hot = hot;
        let blocks: HashSet<u64> = self.hot.iter().filter_map(|l| l.block_number).collect();
        self.times.retain(|b, _| blocks.contains(b));
        self.retain_gas();
        self.decode()?;
        Ok(cooled)
    }

    /// Takes `logs` (all the logs up to a deep reorg's fork, from the store) as the whole
    /// history, and keeps hot only what `in_feed` and the open positions need.
    pub fn rehydrate(&mut self, logs: Vec<Log>, in_feed: Option<FeedKey>) -> Result<()> {
        let (hot, _) = match in_feed {
            Some(key) => feed::split_hot(logs, key),
            None => (logs, Vec::new()),
        };
        self.hot = hot;
        self.times =
            self.hot.iter().filter_map(|l| Some((l.block_number?, l.block_timestamp?))).collect();
        self.decode()
    }

    /// The hot logs, in chain order.
    pub fn record_logs(&self) -> &[Log] {
        &self.hot
    }

    /// Decodes `logs` (block times filled in) as this gate's record.
    pub fn decode_all(&self, logs: &[Log]) -> Result<ChainRecord> {
        let labels = self.facts.as_ref().map_or(&[][..], |f| &f.labels[..]);
        let times: HashMap<u64, u64> =
            logs.iter().filter_map(|l| Some((l.block_number?, l.block_timestamp?))).collect();
        Ok(feed::decode_logs(logs, self.gate.chain_id, self.gate.gate, labels, &times, &self.gas)?)
    }

    fn decode(&mut self) -> Result<()> {
        let labels = self.facts.as_ref().map_or(&[][..], |f| &f.labels[..]);
        let (chain_id, gate) = (self.gate.chain_id, self.gate.gate);
        self.record = feed::decode_logs(&self.hot, chain_id, gate, labels, &self.times, &self.gas)?;
        Ok(())
    }

    /// Keeps the gas of the hot logs' transactions only.
    fn retain_gas(&mut self) {
        let txs: HashSet<B256> = self.hot.iter().filter_map(|l| l.transaction_hash).collect();
        self.gas.retain(|t, _| txs.contains(t));
    }

    pub fn facts(&self) -> Option<&GateFacts> {
        self.facts.as_ref()
    }

    pub fn provider(&self) -> &DynProvider {
        &self.provider
    }

    pub fn markets(&self) -> Vec<MarketInfo> {
        self.follower.markets().cloned().collect()
    }

    pub fn market_count(&self) -> usize {
        self.follower.market_count()
    }

    /// Follows the chain one step (reorg check, scan of confirmed blocks) and re-derives the
    /// record from the gate's logs; reads the gate's facts the first time.
    pub async fn follow(&mut self) -> Result<Step> {
        let step = self.follower.step(&self.provider).await?;
        if let Some(fork) = step.rewound_to {
            warn!(
                fork_block = fork,
                "chain reorganised: blocks after {fork} were replaced; rescanned"
            );
            self.times.retain(|&b, _| b <= fork);
            let kept = |l: &Log| l.block_number.is_some_and(|b| b <= fork);
            self.hot.retain(kept);
            self.found.logs.retain(kept);
            self.retain_gas();
            // The removed blocks' decisions never happened: their markets' re-ask times go
            // back to what they were before them.
            while let Some(&(block, market, before)) = self.recent_asks.back() {
                if block <= fork {
                    break;
                }
                self.recent_asks.pop_back();
                if before == 0 {
                    self.last_asked.remove(&market);
                } else {
                    self.last_asked.insert(market, before);
                }
                self.found.asked.retain(|(m, _)| *m != market);
                self.found.unasked.push((market, before));
            }
            self.found.rewound_to = Some(self.found.rewound_to.map_or(fork, |r| r.min(fork)));
        }
        if self.facts.is_none() {
            let g = self.gate;
            let facts = reads::gate_facts(
                &self.provider,
                g.gate,
                g.chain_id,
                g.from_block,
                step.head.number,
                self.follower.log_range,
            )
            .await?;
            self.facts = Some(facts);
        }
        let mut fresh = self.follower.take_fresh();
        let known = std::mem::take(&mut self.times);
        self.times = reads::block_times(&self.provider, &fresh, known).await?;
        for log in &mut fresh {
            let block = log.block_number.unwrap_or_default();
            log.block_timestamp = log.block_timestamp.or_else(|| self.times.get(&block).copied());
            if let Some(market) = feed::decision_market(log) {
                let time = log.block_timestamp.unwrap_or_default();
                let last = self.last_asked.entry(market).or_insert(0);
                // Full: the oldest leaves first, so the buffer never outgrows its first
                // allocation (memory stays flat over a long run).
                if self.recent_asks.len() == RECENT_ASKS {
                    self.recent_asks.pop_front();
                }
                self.recent_asks.push_back((block, market, *last));
                *last = (*last).max(time);
                self.found.asked.push((market, time));
            }
        }
        self.found.logs.extend(fresh.iter().cloned());
        self.hot.extend(fresh);
        // Every hot decision's, not only the fresh ones': after a resume or a deep reorg the
        // hot logs came from the store, which keeps no receipts.
        reads::tx_gas(&self.provider, &self.hot, &mut self.gas).await?;
        self.decode()?;
        Ok(step)
    }

    /// The chain time the block after `head` will carry.
    pub async fn next_block_time(&self, head: BlockRef) -> u64 {
        follower::next_block_time(&self.provider, &head).await
    }

    /// Whether the gate trusts `market`'s resolver: the predicate of its `isTrustedResolver`,
    /// applied to the gate's immutable `trustedResolvers()` read once with its facts.
    pub fn resolver_trusted(&self, market: &MarketInfo) -> bool {
        self.facts.as_ref().is_some_and(|f| f.trusted_resolvers.contains(&market.resolver))
    }

    /// Whether the gate trusts `market`'s creator: the predicate of its `isTrustedCreator`,
    /// applied to the gate's immutable `trustedCreators()` read once with its facts, and to the
    /// creator the factory announced (`MarketCreated`, or `creatorOf` for an older market).
    pub fn creator_trusted(&self, market: &MarketInfo) -> bool {
        self.facts.as_ref().is_some_and(|f| f.trusted_creators.contains(&market.creator))
    }

    /// Markets worth asking about at chain time `head.time`: open (not known final, not
    /// expired), resolved by a resolver the gate trusts (any other is refused by rule 12
    /// whatever the model says) and created by a creator it trusts (rule 19), within the gate's
    /// horizon (rule 13), with a question the keeper read and checked (the prompt states it).
    /// So spam markets (anyone can create a market naming a trusted resolver) cost no inference
    /// and no transaction. Each market left out for its question is a failure, once per run.
    pub fn open_markets(&mut self, head: BlockRef) -> (Vec<MarketInfo>, Vec<Failure>) {
        let now = head.time;
        let horizon = self.facts.as_ref().map_or(u64::MAX, |f| u64::from(f.bounds.maxHorizon));
        let open: Vec<MarketInfo> = self
            .follower
            .markets()
            .filter(|m| !self.final_markets.contains(&m.address) && m.expiry > now)
            .filter(|m| self.resolver_trusted(m) && self.creator_trusted(m))
            .filter(|m| m.expiry - now <= horizon)
            .cloned()
            .collect();
        let mut keep = Vec::with_capacity(open.len());
        let mut failures = Vec::new();
        for m in open {
            // A grid the gate refuses whatever the book (rules 6, 7, 20): asking would only
            // spend an ask and a transaction on a known refusal. Said once per market.
            if let Some(r) = self
                .facts
                .as_ref()
                .and_then(|f| grid::refusal(&f.bounds, m.lot_size, m.min_quantity))
            {
                if self.untradable.insert(m.address) {
                    warn!(market = %m.address, rule = r.rule(), "not asked: the gate refuses every buy in this market: {r}");
                }
                continue;
            }
            match &m.question {
                Question::Checked(_) => keep.push(m),
                Question::Unreadable(why) => {
                    if self.questionless.insert(m.address) {
                        let why = format!("not asked: the market's question is unreadable ({why})");
                        warn!(market = %m.address, "{why}");
                        failures.push(Failure::new(m.address, Some(head), why));
                    }
                }
            }
        }
        (keep, failures)
    }

    /// Reads the books of `due` at `head`, dropping final markets (remembered, never asked
    /// again); a failed read is a failure.
    pub async fn read(
        &mut self,
        due: &[MarketInfo],
        head: BlockRef,
    ) -> (Vec<MarketState>, Vec<Failure>) {
        // Batched through the deployless BookLens (one eth_call per 200 markets; `make bench`
        // measures it about 9x faster than three calls per market), falling back per market.
        let reads =
            crate::chain::lens::read_markets(&self.provider, due, head.number, self.reads_at_once)
                .await;
        let mut states = Vec::new();
        let mut failures = Vec::new();
        for (info, r) in reads {
            match r {
                Ok(st) if st.finalized => {
                    self.final_markets.insert(info.address);
                }
                Ok(st) => states.push(st),
                Err(e) => {
                    let e = crate::error_chain(&e);
                    warn!(market = %info.address, error = %e, "book read failed; skipping this market this cycle");
                    failures.push(Failure::new(
                        info.address,
                        Some(head),
                        format!("book read failed: {e}"),
                    ));
                }
            }
        }
        (states, failures)
    }

    /// The book of a waiting ask at the moment it is admitted: the chain's newest block and,
    /// if the chain moved since `head`, its market's book at that block, with the next block's
    /// chain time. The engine calls it between submissions, never while one is being sent, so
    /// the block it names is not superseded by the keeper's own transactions before it is read.
    /// (A node that keeps no state but the newest, anvil with `--prune-history`, still refuses a
    /// block another sender superseded in between: the read is then tried again at the newer
    /// head.)
    pub async fn reread(
        &self,
        st: MarketState,
        head: BlockRef,
    ) -> std::result::Result<Book, Unanswered> {
        const ATTEMPTS: usize = 5;
        let market = st.info.address;
        let fail = |e: super::RunError| Unanswered {
            market,
            prompt_hash: None,
            error: format!("book read before the ask failed: {}", crate::error_chain(&e)),
            detail: TransportDetail::default(),
            cause: WhyUnanswered::Read,
        };
        let mut attempt = 0;
        let (state, read) = loop {
            attempt += 1;
            let now = follower::head(&self.provider).await.map_err(|e| fail(e.into()))?;
            if now.number == head.number {
                break (st, now);
            }
            match reads::read_market(&self.provider, &st.info, now.number).await {
                Ok(fresh) => break (fresh, now),
                Err(_) if attempt < ATTEMPTS => continue,
                Err(e) => return Err(fail(e.into())),
            }
        };
        let send_time = follower::next_block_time(&self.provider, &read).await;
        Ok(Book { state, read, send_time })
    }

    /// Positions to close at chain time `now`, as recorded: final markets to redeem, and
    /// positions still open at `expiry + writeOffGrace` to write off. Markets in `busy` (an own
    /// call of the keeper's is pending there) are left to that call.
    pub async fn positions_due(&mut self, now: u64, busy: &HashSet<Address>) -> Closing {
        let mut out = Closing::default();
        // `finalized()` read once per market: a position can be both redeemable and stale.
        let mut finalized: HashMap<Address, bool> = HashMap::new();
        for m in self.record.open_positions(true) {
            if busy.contains(&m) {
                continue; // followed at its own nonce by the executor
            }
            let fin = IBinaryMarket::new(m, &self.provider).finalized().call().await;
            if let Ok(f) = &fin {
                finalized.insert(m, *f);
            }
            if matches!(fin, Ok(true)) {
                self.final_markets.insert(m);
                out.redeem.push(m);
            }
        }
        let Some(grace) = self.facts.as_ref().map(|f| u64::from(f.bounds.writeOffGrace)) else {
            return out;
        };
        let expiry: HashMap<Address, u64> =
            self.follower.markets().map(|m| (m.address, m.expiry)).collect();
        // Strictly after: the next block's time is at least `now + 1`, and the gate wants
        // `block.timestamp > expiry + writeOffGrace`.
        let stale = self
            .record
            .open_positions(false)
            .into_iter()
            .filter(|m| expiry.get(m).is_some_and(|&exp| now >= exp.saturating_add(grace)));
        for m in stale {
            if busy.contains(&m) {
                continue;
            }
            let fin = match finalized.get(&m) {
                Some(&fin) => fin,
                None => match IBinaryMarket::new(m, &self.provider).finalized().call().await {
                    Ok(fin) => fin,
                    Err(_) => continue, // unreadable: looked at again next cycle
                },
            };
            out.write_off.push((m, fin));
        }
        out
    }
}
