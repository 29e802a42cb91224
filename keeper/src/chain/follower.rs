//! The follower: the collector that keeps the keeper's view of the chain honest. It reads only
//! confirmed blocks (`confirmations` below the head), remembers the hash of every block it
//! scanned to, and on each step checks that the chain still has them. When a block it read is
//! gone (a reorganisation), it rewinds to the newest block still on the chain and rescans from
//! there: logs and markets from the removed blocks are dropped, so a decision that left the
//! chain leaves the record.
//!
//! Markets are discovered from the factory itself: `MarketCreated` logs from the first block
//! scanned, and `marketCount`/`marketAt` for any older market the logs do not reach (a gate
//! deployed on an existing factory still sees the markets created before it).

use crate::{
    chain::reads::{self, CollectError, MarketInfo, Question},
    kit::bindings::{IBinaryMarket, IMarketFactory},
};
use alloy::{
    eips::{BlockId, BlockNumberOrTag},
    primitives::{Address, B256, U256},
    providers::{DynProvider, Provider},
    rpc::types::Log,
    sol_types::SolEvent,
};
use futures::{stream, StreamExt, TryStreamExt};
use std::collections::{BTreeMap, HashSet};

#[derive(Debug, thiserror::Error)]
pub enum FollowError {
    #[error(transparent)]
    Collect(#[from] CollectError),
    #[error("factory {factory} call at block {block} failed")]
    Factory {
        factory: Address,
        block: u64,
        #[source]
        source: Box<alloy::contract::Error>,
    },
}

/// Following the chain fails at run time.
impl crate::domain::exit::Classify for FollowError {
    fn fault(&self) -> crate::domain::exit::Fault {
        crate::domain::exit::Fault::Runtime
    }
}

pub type Result<T> = std::result::Result<T, FollowError>;

pub use crate::domain::decision::BlockRef;

/// The most blocks one `eth_getLogs` spans unless `--log-range` says otherwise.
pub const DEFAULT_LOG_RANGE: u64 = 5_000;

/// How many scanned-to block hashes are kept for finding a fork point. A reorganisation deeper
/// than this many steps rescans from the first block.
pub const CHECKPOINTS_KEPT: usize = 256;

/// Factory reads of older markets in flight at once.
const DISCOVERY_CONCURRENCY: usize = 16;

/// A market and the block from which the keeper knows it (its creation log's block, or the
/// block it was read at through `marketAt`).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct Known {
    pub info: MarketInfo,
    pub seen_at: u64,
}

/// What one step of the follower found.
#[derive(Debug, Clone, Default)]
pub struct Step {
    pub head: BlockRef,
    /// The newest block the record may hold (`head - confirmations`).
    pub safe: BlockRef,
    /// Set when blocks the keeper had read were replaced: the newest block still on the chain
    /// (everything after it was rescanned).
    pub rewound_to: Option<u64>,
    pub new_markets: usize,
}

pub struct Follower {
    pub gate: Address,
    pub factory: Address,
    pub from_block: u64,
    pub log_range: u64,
    pub confirmations: u64,
    checkpoints: BTreeMap<u64, B256>,
    scanned_to: Option<u64>,
    markets: Vec<Known>,
    /// The gate's logs scanned since [`Follower::take_fresh`] last took them.
    fresh: Vec<Log>,
    /// Markets found since [`Follower::take_new_markets`] last took them.
    new_markets: Vec<Known>,
}

/// What a follower needs to resume where it stopped without rescanning: its checkpoints and
/// scan cursor (the markets are kept one by one, see [`Follower::take_new_markets`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Cursor {
    pub checkpoints: Vec<(u64, B256)>,
    pub scanned_to: Option<u64>,
}

impl Follower {
    pub fn new(gate: Address, factory: Address, from_block: u64, confirmations: u64) -> Self {
        Self {
            gate,
            factory,
            from_block,
            log_range: DEFAULT_LOG_RANGE,
            confirmations,
            checkpoints: BTreeMap::new(),
            scanned_to: None,
            markets: Vec::new(),
            fresh: Vec::new(),
            new_markets: Vec::new(),
        }
    }

    /// Where the follower stands, to be saved and given back to [`Follower::resume`].
    pub fn cursor(&self) -> Cursor {
        Cursor {
            checkpoints: self.checkpoints.iter().map(|(&n, &h)| (n, h)).collect(),
            scanned_to: self.scanned_to,
        }
    }

    /// Resumes from a saved cursor and the markets known then: the next step checks the newest
    /// checkpoint against the chain (rewinding if a reorg replaced it) and scans only the
    /// blocks after the cursor.
    pub fn resume(&mut self, cursor: Cursor, markets: Vec<Known>) {
        self.checkpoints = cursor.checkpoints.into_iter().collect();
        self.scanned_to = cursor.scanned_to;
        self.markets = markets;
        self.markets.sort_by_key(|k| k.info.index);
    }

    /// The gate's logs scanned since the last call, in chain order.
    pub fn take_fresh(&mut self) -> Vec<Log> {
        std::mem::take(&mut self.fresh)
    }

    /// The markets found since the last call.
    pub fn take_new_markets(&mut self) -> Vec<Known> {
        std::mem::take(&mut self.new_markets)
    }

    pub fn markets(&self) -> impl Iterator<Item = &MarketInfo> {
        self.markets.iter().map(|k| &k.info)
    }

    pub fn market_count(&self) -> usize {
        self.markets.len()
    }

    pub fn scanned_to(&self) -> Option<u64> {
        self.scanned_to
    }

    /// One step: check the blocks already read are still the chain's, rewind if not, then scan
    /// up to the newest confirmed block.
    pub async fn step(&mut self, rpc: &DynProvider) -> Result<Step> {
        let head = block(rpc, BlockNumberOrTag::Latest).await?;
        let rewound_to = self.check_reorg(rpc, head.number).await?;
        let safe_number = head.number.saturating_sub(self.confirmations);
        let safe = if safe_number == head.number {
            head
        } else {
            block(rpc, BlockNumberOrTag::Number(safe_number)).await?
        };
        let mut step = Step { head, safe, rewound_to, new_markets: 0 };
        let from = self.scanned_to.map_or(self.from_block, |b| b + 1);
        if from <= safe.number {
            let before = self.markets.len();
            self.scan_factory(rpc, from, safe.number, head.number).await?;
            let logs = reads::gate_logs(rpc, self.gate, from, safe.number, self.log_range).await?;
            self.fresh.extend(logs);
            self.scanned_to = Some(safe.number);
            step.new_markets = self.markets.len() - before;
        }
        self.checkpoints.insert(safe.number, safe.hash);
        while self.checkpoints.len() > CHECKPOINTS_KEPT {
            self.checkpoints.pop_first();
        }
        Ok(step)
    }

    /// Compares the newest checkpoint with the chain; on a mismatch, walks back to the newest
    /// checkpoint the chain still has and drops everything read after it. Any change to a block
    /// changes every later block's hash, so one comparison proves the whole prefix unchanged.
    async fn check_reorg(&mut self, rpc: &DynProvider, head: u64) -> Result<Option<u64>> {
        let Some((&top, &top_hash)) = self.checkpoints.last_key_value() else { return Ok(None) };
        if top <= head && hash_at(rpc, top).await? == Some(top_hash) {
            return Ok(None);
        }
        let mut fork: Option<u64> = None;
        for (&n, &h) in self.checkpoints.iter().rev() {
            if n <= head && hash_at(rpc, n).await? == Some(h) {
                fork = Some(n);
                break;
            }
        }
        self.rewind(fork);
        Ok(Some(fork.unwrap_or_else(|| self.from_block.saturating_sub(1))))
    }

    /// Forgets everything read after block `keep` (all of it when `None`).
    pub fn rewind(&mut self, keep: Option<u64>) {
        match keep {
            Some(n) => {
                self.checkpoints.retain(|&b, _| b <= n);
                self.fresh.retain(|l| l.block_number.is_some_and(|b| b <= n));
                self.markets.retain(|m| m.seen_at <= n);
                self.new_markets.retain(|m| m.seen_at <= n);
                self.scanned_to = Some(n);
            }
            None => {
                self.checkpoints.clear();
                self.fresh.clear();
                self.markets.clear();
                self.new_markets.clear();
                self.scanned_to = None;
            }
        }
    }

    /// Markets created in `[from, to]` from the factory's logs, then any index below
    /// `marketCount()` (as of `to`) still unknown, read through `marketAt`. A node that keeps no
    /// state for block `to` (a pruned one) is read at `head` instead; the markets found are then
    /// tagged with `head`, so a reorg below it forgets them and they are read again.
    async fn scan_factory(
        &mut self,
        rpc: &DynProvider,
        from: u64,
        to: u64,
        head: u64,
    ) -> Result<()> {
        let logs = reads::logs_in_ranges(
            rpc,
            self.factory,
            vec![IMarketFactory::MarketCreated::SIGNATURE_HASH],
            from,
            to,
            self.log_range,
        )
        .await?;
        for log in logs {
            // A log that does not decode (a question that is not UTF-8) leaves its index
            // unknown, so `marketAt` below finds the market and records why it is not asked.
            let Ok(ev) = IMarketFactory::MarketCreated::decode_log(&log.inner) else { continue };
            if self.markets.iter().any(|k| k.info.address == ev.market) {
                continue;
            }
            let question = checked_question(rpc, ev.market, ev.data.question.clone()).await?;
            let known = Known {
                info: MarketInfo::from_created(&ev.data, question),
                seen_at: log.block_number.unwrap_or(to),
            };
            self.new_markets.push(known.clone());
            self.markets.push(known);
        }
        let factory = IMarketFactory::new(self.factory, rpc);
        let (to, count) = match factory.marketCount().block(BlockId::number(to)).call().await {
            Ok(c) => (to, c),
            Err(_) if head > to => {
                let c = factory.marketCount().block(BlockId::number(head)).call().await.map_err(
                    |source| FollowError::Factory {
                        factory: self.factory,
                        block: head,
                        source: Box::new(source),
                    },
                )?;
                (head, c)
            }
            Err(source) => {
                return Err(FollowError::Factory {
                    factory: self.factory,
                    block: to,
                    source: Box::new(source),
                })
            }
        };
        let count = u64::try_from(count).unwrap_or(u64::MAX);
        let have: HashSet<U256> = self.markets.iter().map(|k| k.info.index).collect();
        let missing: Vec<u64> = (0..count).filter(|i| !have.contains(&U256::from(*i))).collect();
        if missing.is_empty() {
            return Ok(());
        }
        let factory_addr = self.factory;
        let mut older: Vec<MarketInfo> = stream::iter(missing)
            .map(|i| async move { older_market(rpc, factory_addr, i, to).await })
            .buffered(DISCOVERY_CONCURRENCY)
            .try_collect()
            .await?;
        self.older_questions(rpc, &mut older, to).await?;
        let older: Vec<Known> = older.into_iter().map(|info| Known { info, seen_at: to }).collect();
        self.new_markets.extend(older.iter().cloned());
        self.markets.extend(older);
        self.markets.sort_by_key(|k| k.info.index);
        Ok(())
    }
}

impl Follower {
    /// The questions of markets found through `marketAt`: their `MarketCreated` logs, found by
    /// the market's indexed address in one ranged scan of `[0, to]`. A market whose log is not
    /// found or does not decode keeps its question unreadable, with the reason.
    async fn older_questions(
        &self,
        rpc: &DynProvider,
        older: &mut [MarketInfo],
        to: u64,
    ) -> Result<()> {
        if older.is_empty() {
            return Ok(());
        }
        let mut found: std::collections::HashMap<Address, Question> = Default::default();
        let addresses: Vec<B256> = older.iter().map(|m| m.address.into_word()).collect();
        let filter = alloy::rpc::types::Filter::new()
            .address(self.factory)
            .event_signature(IMarketFactory::MarketCreated::SIGNATURE_HASH)
            .topic1(addresses);
        for log in reads::filtered_logs(rpc, &filter, 0, to, self.log_range).await? {
            let Some(topic) = log.topics().get(1) else { continue };
            let market = Address::from_word(*topic);
            let q = match IMarketFactory::MarketCreated::decode_log(&log.inner) {
                Ok(ev) => checked_question(rpc, market, ev.data.question.clone()).await?,
                Err(e) => Question::Unreadable(format!("MarketCreated does not decode: {e}")),
            };
            found.insert(market, q);
        }
        for m in older.iter_mut() {
            if let Some(q) = found.remove(&m.address) {
                m.question = q;
            }
        }
        Ok(())
    }
}

/// `text` (from `MarketCreated`) checked against the market's own `questionHash()`.
async fn checked_question(rpc: &DynProvider, market: Address, text: String) -> Result<Question> {
    let hash = IBinaryMarket::new(market, rpc).questionHash().call().await.map_err(|source| {
        FollowError::Collect(CollectError::Market { market, source: Box::new(source) })
    })?;
    Ok(Question::check(text, hash))
}

/// A market the factory created before the keeper's first scanned block, read at block `at`.
/// Its question is filled in by [`Follower::older_questions`].
async fn older_market(
    rpc: &DynProvider,
    factory: Address,
    index: u64,
    at: u64,
) -> Result<MarketInfo> {
    let id = BlockId::number(at);
    let ferr = |source| FollowError::Factory { factory, block: at, source: Box::new(source) };
    let address = IMarketFactory::new(factory, rpc)
        .marketAt(U256::from(index))
        .block(id)
        .call()
        .await
        .map_err(ferr)?;
    let market = IBinaryMarket::new(address, rpc);
    let merr = |source| {
        FollowError::Collect(CollectError::Market { market: address, source: Box::new(source) })
    };
    let q = market.gateQuote().block(id).call().await.map_err(merr)?;
    let resolver = market.resolver().block(id).call().await.map_err(merr)?;
    let creator = IMarketFactory::new(factory, rpc)
        .creatorOf(address)
        .block(id)
        .call()
        .await
        .map_err(ferr)?;
    Ok(MarketInfo {
        address,
        index: U256::from(index),
        tick_size: q.tickSize,
        lot_size: q.lotSize,
        min_quantity: q.minQuantity,
        expiry: q.expiry,
        resolver,
        creator,
        question: Question::Unreadable(
            "no MarketCreated log names this market on the node".to_string(),
        ),
    })
}

/// The chain's newest block (its number, hash and time: the clock the gate uses).
pub async fn head(rpc: &DynProvider) -> Result<BlockRef> {
    block(rpc, BlockNumberOrTag::Latest).await
}

/// The chain time the next block will carry, as the node sees it now, never less than
/// `head.time + 1`: the timestamp of its pending block (a node that mines on demand stamps it
/// when asked, so on a quiet chain the next block is not stamped with the last one's time),
/// read from the JSON alone, since nodes may leave other fields of a pending block null
/// (Hardhat's `number` and `mixHash`, which the JSON-RPC spec allows and a typed block does not
/// decode). A node with no pending timestamp at all gets this machine's clock where it is ahead
/// of the head (a live chain's blocks carry real time), and the fallback is logged once.
pub async fn next_block_time(rpc: &DynProvider, head: &BlockRef) -> u64 {
    let floor = head.time.saturating_add(1);
    if let Some(t) = pending_timestamp(rpc).await {
        return t.max(floor);
    }
    static SAID: std::sync::Once = std::sync::Once::new();
    SAID.call_once(|| {
        tracing::warn!(
            "the node gives no pending block timestamp: the next block's time is estimated from \
             this machine's clock (at least the head's time + 1)"
        )
    });
    let wall = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    wall.max(floor)
}

/// The `timestamp` of the node's pending block, whatever else that block leaves null.
async fn pending_timestamp(rpc: &DynProvider) -> Option<u64> {
    let block: serde_json::Value =
        rpc.raw_request("eth_getBlockByNumber".into(), ("pending", false)).await.ok()?;
    let hex = block.get("timestamp")?.as_str()?;
    u64::from_str_radix(hex.trim_start_matches("0x"), 16).ok()
}

async fn block(rpc: &DynProvider, tag: BlockNumberOrTag) -> Result<BlockRef> {
    let b = rpc.get_block_by_number(tag).await.map_err(|e| CollectError::Rpc(Box::new(e)))?.ok_or(
        match tag {
            BlockNumberOrTag::Number(n) => CollectError::MissingBlock(n),
            _ => CollectError::NoLatestBlock,
        },
    )?;
    Ok(BlockRef { number: b.header.number, hash: b.header.hash, time: b.header.timestamp })
}

async fn hash_at(rpc: &DynProvider, n: u64) -> Result<Option<B256>> {
    Ok(rpc
        .get_block_by_number(BlockNumberOrTag::Number(n))
        .await
        .map_err(|e| CollectError::Rpc(Box::new(e)))?
        .map(|b| b.header.hash))
}
