//! Collectors: what the keeper reads from chain. Logs are read in bounded block ranges; each
//! open market's book and parameters are read concurrently; the gate's fixed facts, its logs and
//! the times of their blocks are read here for the recorder, which never touches the node.
//! Collectors only read; they never decide anything. (Which markets exist, and which blocks are
//! confirmed, is the follower's: [`crate::chain::follower`].)

use crate::kit::bindings::{IBinaryMarket, IRiskGate, REASON_COUNT};
use alloy::{
    primitives::{Address, B256, U256},
    providers::{DynProvider, Provider},
    rpc::types::{Filter, Log},
    sol_types::SolEvent,
    transports::TransportError,
};
use futures::{stream, StreamExt};
use std::{
    collections::HashMap,
    sync::atomic::{AtomicU64, AtomicU8, Ordering},
};

#[derive(Debug, thiserror::Error)]
pub enum CollectError {
    /// `eth_getLogs` failed at one block, after `tries` tries narrowing from `widest` blocks:
    /// the node is failing, not limiting the range.
    #[error("eth_getLogs {from}..={to} failed{}", narrowed(*.widest, *.tries))]
    Logs {
        from: u64,
        to: u64,
        widest: u64,
        tries: u32,
        #[source]
        source: Box<TransportError>,
    },
    #[error("reading market {market}")]
    Market {
        market: Address,
        #[source]
        source: Box<alloy::contract::Error>,
    },
    #[error("RPC call failed")]
    Rpc(#[source] Box<TransportError>),
    #[error("gate call failed")]
    Call(#[source] Box<alloy::contract::Error>),
    #[error("gate {gate}: reading {what}")]
    Gate {
        gate: Address,
        what: &'static str,
        #[source]
        source: Box<alloy::contract::Error>,
    },
    #[error("reading block {number}")]
    Block {
        number: u64,
        #[source]
        source: Box<TransportError>,
    },
    #[error("block {0} is missing on the node")]
    MissingBlock(u64),
    #[error("reading the receipt of {tx}")]
    Receipt {
        tx: B256,
        #[source]
        source: Box<TransportError>,
    },
    #[error("the node has no receipt for {0}, a transaction whose logs it returned")]
    MissingReceipt(B256),
    #[error("the node returned no latest block")]
    NoLatestBlock,
}

/// Reading the chain fails at run time, whatever read it was.
impl crate::domain::exit::Classify for CollectError {
    fn fault(&self) -> crate::domain::exit::Fault {
        crate::domain::exit::Fault::Runtime
    }
}

pub type Result<T> = std::result::Result<T, CollectError>;

/// What [`CollectError::Logs`] adds when the read was narrowed before it failed at one block.
fn narrowed(widest: u64, tries: u32) -> String {
    if tries > 1 {
        format!(
            ", as did every range tried from {widest} blocks down to one ({tries} tries): the \
             node failed, it did not refuse a wide range"
        )
    } else {
        String::new()
    }
}

/// A market as the factory announced it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct MarketInfo {
    pub address: Address,
    pub index: U256,
    pub tick_size: U256,
    pub lot_size: U256,
    pub min_quantity: U256,
    pub expiry: u64,
    /// As the factory announced it. The factory is the gate's own immutable one and passes this
    /// address to the market it creates, so it is the market's `resolver()`.
    pub resolver: Address,
    /// Who asked the factory for it (`MarketCreated`'s creator, the factory's `creatorOf`):
    /// the gate trades only markets of its trusted creators (rule 19).
    pub creator: Address,
    /// The event the market asks about, as `MarketCreated` published it.
    pub question: Question,
}

/// A market's question as the keeper could establish it. The prompt states it, so the keeper
/// asks only about a market whose question it read and checked against the market's own
/// `questionHash()`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum Question {
    /// The text of `MarketCreated`, whose keccak256 is the market's `questionHash()`.
    Checked(String),
    /// Why the question could not be read or checked (the market is never asked about).
    Unreadable(String),
}

impl Question {
    /// The checked text, if there is one.
    pub fn text(&self) -> Option<&str> {
        match self {
            Self::Checked(t) => Some(t),
            Self::Unreadable(_) => None,
        }
    }

    /// `text` checked against `hash` (the market's `questionHash()`).
    pub fn check(text: String, hash: B256) -> Self {
        let got = alloy::primitives::keccak256(text.as_bytes());
        if got == hash {
            Self::Checked(text)
        } else {
            Self::Unreadable(format!(
                "the question MarketCreated published hashes to {got}, the market's questionHash() \
                 is {hash}"
            ))
        }
    }
}

/// What one read of a market returned.
#[derive(Debug, Clone)]
pub struct MarketState {
    pub info: MarketInfo,
    pub best_bid: U256,
    pub best_ask: U256,
    pub finalized: bool,
    /// Bid levels, best first (price, quantity).
    pub bids: Vec<(U256, U256)>,
    /// Ask levels, best first (price, quantity).
    pub asks: Vec<(U256, U256)>,
}

/// Book depth shown to the model: the best `BOOK_DEPTH` price levels of each side (a level is
/// one price with its total resting quantity). Part of the prompt's definition
/// (docs/prompts.md): changing it changes every prompt.
pub const BOOK_DEPTH: u64 = 3;

/// Fetches logs of `address` matching `topic0` over `[from, to]`, in ranges of at most `range`
/// blocks so a long history never becomes one unbounded query.
pub async fn logs_in_ranges(
    provider: &DynProvider,
    address: Address,
    topics0: Vec<alloy::primitives::B256>,
    from: u64,
    to: u64,
    range: u64,
) -> Result<Vec<Log>> {
    let filter = Filter::new().address(address).event_signature(topics0);
    filtered_logs(provider, &filter, from, to, range).await
}

/// What this process has learned about its node from how the node behaved, so it is asked
/// only what it answers: the widest `eth_getLogs` range it answered after refusing a wider one,
/// and whether it answers `eth_getBlockReceipts`. A process talks to one node, so what is
/// learned once holds for every later read (the keeper's follower, report, serve): [`NODE`] is
/// the process's; a caller that talks to another node (a test) owns its own.
#[derive(Debug)]
pub struct NodeLimits {
    /// The widest `eth_getLogs` range that succeeded after a wider one failed (`u64::MAX`
    /// until then). Hosted RPCs cap the range (often 50 to 10,000 blocks).
    log_range: AtomicU64,
    /// [`BLOCK_RECEIPTS_UNKNOWN`], [`BLOCK_RECEIPTS_ANSWERED`] or [`BLOCK_RECEIPTS_MISSING`].
    block_receipts: AtomicU8,
}

/// Not asked yet (or only failed while per-transaction receipts failed too).
const BLOCK_RECEIPTS_UNKNOWN: u8 = 0;
/// The node answered `eth_getBlockReceipts` once: a later failure is a failure, not a lack.
const BLOCK_RECEIPTS_ANSWERED: u8 = 1;
/// The node failed `eth_getBlockReceipts` and then answered `eth_getTransactionReceipt`: it
/// lacks the method, and is not asked for it again.
const BLOCK_RECEIPTS_MISSING: u8 = 2;

/// What this process has learned about its node ([`NodeLimits`]).
pub static NODE: NodeLimits = NodeLimits::new();

impl Default for NodeLimits {
    fn default() -> Self {
        Self::new()
    }
}

impl NodeLimits {
    /// Nothing learned yet: any range is tried, `eth_getBlockReceipts` is asked.
    pub const fn new() -> Self {
        Self {
            log_range: AtomicU64::new(u64::MAX),
            block_receipts: AtomicU8::new(BLOCK_RECEIPTS_UNKNOWN),
        }
    }

    /// The block range a read of `range` blocks uses now: at most the width the node answered.
    pub fn log_range_now(&self, range: u64) -> u64 {
        range.max(1).min(self.log_range.load(Ordering::Relaxed))
    }

    /// Whether the node has been found to lack `eth_getBlockReceipts`.
    pub fn lacks_block_receipts(&self) -> bool {
        self.block_receipts.load(Ordering::Relaxed) == BLOCK_RECEIPTS_MISSING
    }

    /// The logs `filter` matches over `[from, to]` (its own block bounds are replaced), in
    /// ranges of at most `range` blocks, or of the narrower width learned
    /// ([`Self::log_range_now`]).
    ///
    /// A node's refusal of a wide range is recognised by behaviour, not wording: any failure of
    /// a range wider than one block (an error answer, an HTTP error status, a body that does
    /// not decode) narrows it and retries: to the largest number the failure's text names
    /// below the failed width, the first time ("range 5000 exceeds limit of 1000" goes straight
    /// to 1000), else to half. Once a narrower range succeeds, its width is kept for every
    /// later read, and said once with the `--log-range` that starts there; a failure is never
    /// kept. Only a failure at one block is an outage: [`CollectError::Logs`], with how wide the
    /// read started and how many tries it took (at most `2 + log2(range)`).
    pub async fn filtered_logs(
        &self,
        provider: &DynProvider,
        filter: &Filter,
        from: u64,
        to: u64,
        range: u64,
    ) -> Result<Vec<Log>> {
        let mut out = Vec::new();
        let mut start = from;
        let mut width = self.log_range_now(range);
        // The widest span that failed since the last success, and the failed tries since then.
        let mut failed: Option<(u64, u32)> = None;
        // Whether a number named by a failure has been tried since the last success: once
        // only, so narrowing takes at most one try more than halving does.
        let mut hinted = false;
        while start <= to {
            let end = to.min(start.saturating_add(width - 1));
            let span = end - start + 1;
            let f = filter.clone().from_block(start).to_block(end);
            match provider.get_logs(&f).await {
                Ok(logs) => {
                    out.extend(logs);
                    if let Some((refused, tries)) = failed.take() {
                        self.keep_log_range(span, refused, tries);
                        hinted = false;
                    }
                    if end == to {
                        break;
                    }
                    start = end + 1;
                    width = self.log_range_now(width);
                }
                Err(source) => {
                    let (widest, tries) = failed.get_or_insert((span, 0));
                    *tries += 1;
                    if span == 1 {
                        return Err(CollectError::Logs {
                            from: start,
                            to: end,
                            widest: *widest,
                            tries: *tries,
                            source: Box::new(source),
                        });
                    }
                    let named = if hinted { None } else { width_named(&source, span) };
                    hinted |= named.is_some();
                    width = named.unwrap_or(span / 2);
                    tracing::debug!(
                        from = start,
                        to = end,
                        blocks = span,
                        next = width,
                        node_said = %crate::one_line(&source.to_string()),
                        "eth_getLogs failed; trying a narrower range"
                    );
                }
            }
        }
        Ok(out)
    }

    /// A read of `width` blocks succeeded after `tries` failed ones from `refused` blocks: the
    /// node's widest range is taken to be `width` from now on (said once, when it narrows).
    fn keep_log_range(&self, width: u64, refused: u64, tries: u32) {
        let before = self.log_range.fetch_min(width, Ordering::Relaxed);
        if width < before {
            tracing::warn!(
                refused,
                tries,
                answered = width,
                "the node refused this eth_getLogs range as too wide: it failed {refused} blocks \
                 and answered {width}, so reading {width} blocks at a time from now on \
                 (--log-range {width} starts there)"
            );
        }
    }

    /// Adds to `gas` the gas of the transactions that published `logs`' decisions that it
    /// lacks: from their blocks' receipts (one `eth_getBlockReceipts` per block, by hash, so a
    /// reorged block is not read by mistake), else one `eth_getTransactionReceipt` each. A node
    /// whose `eth_getBlockReceipts` fails where those then succeed lacks the method: it is said
    /// once and not asked again ([`Self::lacks_block_receipts`]). Until the node has been seen
    /// to answer it or not, the first block is read alone, so the method is asked once.
    pub async fn tx_gas(
        &self,
        provider: &DynProvider,
        logs: &[Log],
        gas: &mut HashMap<B256, TxGas>,
    ) -> Result<()> {
        let mut blocks: std::collections::BTreeMap<(u64, B256), Vec<B256>> = Default::default();
        for l in logs {
            if l.topic0() != Some(&IRiskGate::Decision::SIGNATURE_HASH) {
                continue;
            }
            let (Some(tx), Some(n), Some(h)) = (l.transaction_hash, l.block_number, l.block_hash)
            else {
                continue;
            };
            if !gas.contains_key(&tx) {
                let txs = blocks.entry((n, h)).or_default();
                if !txs.contains(&tx) {
                    txs.push(tx);
                }
            }
        }
        let mut blocks: Vec<(B256, Vec<B256>)> =
            blocks.into_iter().map(|((_, hash), txs)| (hash, txs)).collect();
        let mut fetched = Vec::with_capacity(blocks.len());
        let unknown = self.block_receipts.load(Ordering::Relaxed) == BLOCK_RECEIPTS_UNKNOWN;
        if unknown && !blocks.is_empty() {
            let (hash, txs) = blocks.remove(0);
            fetched.push(self.block_gas(provider, hash, txs).await);
        }
        fetched.extend(
            stream::iter(blocks)
                .map(|(hash, txs)| self.block_gas(provider, hash, txs))
                .buffer_unordered(BLOCK_TIME_CONCURRENCY)
                .collect::<Vec<_>>()
                .await,
        );
        for r in fetched {
            gas.extend(r?);
        }
        Ok(())
    }

    /// The gas of `txs`, all in the block `hash`: from the block's receipts unless the node
    /// lacks `eth_getBlockReceipts`, and one `eth_getTransactionReceipt` for each not found
    /// there.
    async fn block_gas(
        &self,
        provider: &DynProvider,
        hash: B256,
        txs: Vec<B256>,
    ) -> Result<Vec<(B256, TxGas)>> {
        use alloy::network::ReceiptResponse;
        let of = |r: &alloy::rpc::types::TransactionReceipt| TxGas {
            gas_used: r.gas_used(),
            gas_price: r.effective_gas_price().to_string(),
        };
        let mut out = Vec::with_capacity(txs.len());
        let mut block_failed = None;
        if !self.lacks_block_receipts() {
            match provider.get_block_receipts(hash.into()).await {
                Ok(receipts) => {
                    self.block_receipts.store(BLOCK_RECEIPTS_ANSWERED, Ordering::Relaxed);
                    for r in receipts.iter().flatten() {
                        if txs.contains(&r.transaction_hash()) {
                            out.push((r.transaction_hash(), of(r)));
                        }
                    }
                }
                Err(e) => block_failed = Some(e),
            }
        }
        for &tx in &txs {
            if out.iter().any(|(t, _)| *t == tx) {
                continue;
            }
            let r = provider
                .get_transaction_receipt(tx)
                .await
                .map_err(|source| CollectError::Receipt { tx, source: Box::new(source) })?
                .ok_or(CollectError::MissingReceipt(tx))?;
            out.push((tx, of(&r)));
        }
        if let Some(e) = block_failed {
            let learned = self.block_receipts.compare_exchange(
                BLOCK_RECEIPTS_UNKNOWN,
                BLOCK_RECEIPTS_MISSING,
                Ordering::Relaxed,
                Ordering::Relaxed,
            );
            if learned.is_ok() {
                tracing::warn!(
                    block = %hash,
                    node_said = %crate::one_line(&e.to_string()),
                    "the node failed eth_getBlockReceipts and answered eth_getTransactionReceipt: \
                     reading receipts one transaction at a time from now on"
                );
            }
        }
        Ok(out)
    }
}

/// The largest number `e`'s text names below `span`, the width a node that limits the range
/// most likely means ("range 5000 exceeds limit of 1000", "up to a 10,000 block range"): a
/// hint to try first, never trusted as the limit. The text is the node's own (the error
/// answer's message and data, the HTTP error's or undecodable body), never the status code;
/// a number run into letters ("0x1388", "10K", "eip155") is not one.
fn width_named(e: &TransportError, span: u64) -> Option<u64> {
    use alloy::transports::{RpcError, TransportErrorKind};
    let text = match e {
        RpcError::ErrorResp(p) => {
            format!("{} {}", p.message, p.data.as_ref().map_or("", |d| d.get()))
        }
        RpcError::Transport(TransportErrorKind::HttpError(h)) => h.body.clone(),
        RpcError::DeserError { text, .. } => text.clone(),
        _ => return None,
    };
    numbers_in(&text).filter(|n| (1..span).contains(n)).max()
}

/// The decimal numbers in `text` (thousands separated by commas or not), leaving out those run
/// into a letter.
fn numbers_in(text: &str) -> impl Iterator<Item = u64> + '_ {
    let b = text.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < b.len() {
            if !b[i].is_ascii_digit() {
                i += 1;
                continue;
            }
            let begin = i;
            let mut n: u64 = 0;
            while i < b.len() {
                if b[i].is_ascii_digit() {
                    n = n.saturating_mul(10).saturating_add(u64::from(b[i] - b'0'));
                    i += 1;
                } else if b[i] == b','
                    && b.len() >= i + 4
                    && b[i + 1..i + 4].iter().all(u8::is_ascii_digit)
                    && b.get(i + 4).is_none_or(|c| !c.is_ascii_digit())
                {
                    i += 1;
                } else {
                    break;
                }
            }
            let lettered = (begin > 0 && b[begin - 1].is_ascii_alphabetic())
                || b.get(i).is_some_and(u8::is_ascii_alphabetic);
            if !lettered {
                return Some(n);
            }
        }
        None
    })
}

/// [`NodeLimits::filtered_logs`] as this process's node has shown itself ([`NODE`]).
pub async fn filtered_logs(
    provider: &DynProvider,
    filter: &Filter,
    from: u64,
    to: u64,
    range: u64,
) -> Result<Vec<Log>> {
    NODE.filtered_logs(provider, filter, from, to, range).await
}

impl MarketInfo {
    /// The market `ev` announces, with its `question` as the keeper established it.
    pub fn from_created(
        ev: &crate::kit::bindings::IMarketFactory::MarketCreated,
        question: Question,
    ) -> Self {
        Self {
            address: ev.market,
            index: ev.index,
            tick_size: ev.tickSize,
            lot_size: ev.lotSize,
            min_quantity: ev.minQuantity,
            expiry: ev.expiry,
            resolver: ev.resolver,
            creator: ev.creator,
            question,
        }
    }
}

/// Reads one market at block `at`: the gate's quote (best bid/ask, finality) and a few levels
/// per side.
pub async fn read_market(
    provider: &DynProvider,
    info: &MarketInfo,
    at: u64,
) -> Result<MarketState> {
    let market = IBinaryMarket::new(info.address, provider);
    let err = |source: alloy::contract::Error| CollectError::Market {
        market: info.address,
        source: Box::new(source),
    };
    let id = alloy::eips::BlockId::number(at);
    let quote_call = market.gateQuote().block(id);
    let bids_call = market.getBookLevels(true, U256::from(BOOK_DEPTH)).block(id);
    let asks_call = market.getBookLevels(false, U256::from(BOOK_DEPTH)).block(id);
    let (quote, bids, asks) = tokio::try_join!(
        async { quote_call.call().await.map_err(err) },
        async { bids_call.call().await.map_err(err) },
        async { asks_call.call().await.map_err(err) },
    )?;
    Ok(MarketState {
        info: info.clone(),
        best_bid: quote.bestBid,
        best_ask: quote.bestAsk,
        finalized: quote.finalized,
        bids: bids.into_iter().map(|l| (l.price, l.quantity)).collect(),
        asks: asks.into_iter().map(|l| (l.price, l.quantity)).collect(),
    })
}

/// Reads many markets at block `at` concurrently (at most `concurrency` in flight). A market
/// whose read fails is returned as an error next to the others; it never stops them.
pub async fn read_markets(
    provider: &DynProvider,
    markets: &[MarketInfo],
    at: u64,
    concurrency: usize,
) -> Vec<(MarketInfo, Result<MarketState>)> {
    stream::iter(markets.iter().cloned())
        .map(|info| async move {
            let res = read_market(provider, &info, at).await;
            (info, res)
        })
        .buffered(concurrency.max(1))
        .collect()
        .await
}

/// The gate's fixed addresses.
pub async fn gate_factory(provider: &DynProvider, gate: Address) -> Result<Address> {
    IRiskGate::new(gate, provider)
        .marketFactory()
        .call()
        .await
        .map_err(|e| CollectError::Call(Box::new(e)))
}

pub use crate::domain::decision::{GateFacts, TxGas};

alloy::sol! {
    /// The collateral token's symbol, for the pages (ERC-20's optional metadata).
    #[sol(rpc)]
    interface ITokenSymbol {
        function symbol() external view returns (string);
    }
}

/// Reads the gate's fixed facts; its deploy block is the block of its `GateDeployed` log within
/// `[from, to]`, when there is one.
pub async fn gate_facts(
    provider: &DynProvider,
    gate: Address,
    chain_id: u64,
    from: u64,
    to: u64,
    range: u64,
) -> Result<GateFacts> {
    let g = IRiskGate::new(gate, provider);
    let e = |what: &'static str| {
        move |source: alloy::contract::Error| CollectError::Gate {
            gate,
            what,
            source: Box::new(source),
        }
    };
    let mut labels = Vec::with_capacity(REASON_COUNT as usize);
    for code in 0..REASON_COUNT {
        labels.push(g.reasonLabel(code).call().await.map_err(e("reasonLabel"))?);
    }
    let deployed = logs_in_ranges(
        provider,
        gate,
        vec![IRiskGate::GateDeployed::SIGNATURE_HASH],
        from,
        to,
        range,
    )
    .await?;
    let attestors =
        super::attestation::read_set(provider, gate).await.map_err(e("the attestor set"))?;
    let verdict_source = match g.gateMode().call().await.map_err(e("gateMode"))? {
        IRiskGate::GateMode::Consensus => {
            Some(g.verdictSource().call().await.map_err(e("verdictSource"))?)
        }
        _ => None,
    };
    let collateral = g.collateral().call().await.map_err(e("collateral"))?;
    // A token need not name a symbol: a failed read is shown as plain units, not an error.
    let symbol = ITokenSymbol::new(collateral, provider).symbol().call().await.ok();
    Ok(GateFacts {
        gate,
        chain_id,
        deploy_block: deployed.first().and_then(|l| l.block_number),
        params_hash: g.paramsHash().call().await.map_err(e("paramsHash"))?,
        bounds: g.bounds().call().await.map_err(e("bounds"))?,
        trusted_resolvers: g.trustedResolvers().call().await.map_err(e("trustedResolvers"))?,
        trusted_creators: g.trustedCreators().call().await.map_err(e("trustedCreators"))?,
        keeper: g.keeper().call().await.map_err(e("keeper"))?,
        collateral,
        factory: g.marketFactory().call().await.map_err(e("marketFactory"))?,
        labels,
        attestors,
        verdict_source,
        symbol: crate::domain::format::token_symbol(symbol.as_deref()),
    })
}

/// The gate's `Decision`, `Settled` and `WrittenOff` logs over `[from, to]`, in bounded block
/// ranges.
pub async fn gate_logs(
    provider: &DynProvider,
    gate: Address,
    from: u64,
    to: u64,
    range: u64,
) -> Result<Vec<Log>> {
    logs_in_ranges(
        provider,
        gate,
        vec![
            IRiskGate::Decision::SIGNATURE_HASH,
            IRiskGate::Settled::SIGNATURE_HASH,
            IRiskGate::WrittenOff::SIGNATURE_HASH,
        ],
        from,
        to,
        range,
    )
    .await
}

/// Block reads in flight at once when fetching block times.
const BLOCK_TIME_CONCURRENCY: usize = 16;

/// Timestamps of the blocks `logs` come from: from the logs themselves when the node includes
/// them, else from `known`, else fetched (a bounded number of blocks in flight).
pub async fn block_times(
    provider: &DynProvider,
    logs: &[Log],
    known: HashMap<u64, u64>,
) -> Result<HashMap<u64, u64>> {
    let mut times = known;
    let mut missing = Vec::new();
    for l in logs {
        if let Some(n) = l.block_number {
            match l.block_timestamp {
                Some(t) => {
                    times.insert(n, t);
                }
                None => missing.push(n),
            }
        }
    }
    missing.sort_unstable();
    missing.dedup();
    missing.retain(|n| !times.contains_key(n));
    let fetched: Vec<Result<(u64, u64)>> = stream::iter(missing)
        .map(|n| async move {
            let b = provider
                .get_block_by_number(n.into())
                .await
                .map_err(|source| CollectError::Block { number: n, source: Box::new(source) })?
                .ok_or(CollectError::MissingBlock(n))?;
            Ok((n, b.header.timestamp))
        })
        .buffer_unordered(BLOCK_TIME_CONCURRENCY)
        .collect()
        .await;
    for r in fetched {
        let (n, t) = r?;
        times.insert(n, t);
    }
    Ok(times)
}

/// [`NodeLimits::tx_gas`] as this process's node has shown itself ([`NODE`]).
pub async fn tx_gas(
    provider: &DynProvider,
    logs: &[Log],
    gas: &mut HashMap<B256, TxGas>,
) -> Result<()> {
    NODE.tx_gas(provider, logs, gas).await
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy::transports::{RpcError, TransportErrorKind};

    fn answer(message: &str) -> TransportError {
        let payload = serde_json::json!({"code": -32005, "message": message});
        RpcError::ErrorResp(serde_json::from_value(payload).unwrap())
    }

    #[test]
    fn a_width_named_is_the_largest_number_below_the_span() {
        let cases: [(&str, u64, Option<u64>); 9] = [
            ("query exceeds max block range 1000", 5_000, Some(1_000)),
            ("eth_getLogs is limited to a 10,000 block range", 20_000, Some(10_000)),
            ("eth_getLogs is limited to a 10,000 block range", 10_000, None),
            // The span named first: the limit is the smaller number.
            ("range 5000 exceeds limit of 1000", 5_000, Some(1_000)),
            ("range 5000 exceeds limit of 1000 (max results 3000)", 5_000, Some(3_000)),
            ("block range too high", 5_000, None),
            // Run into letters: a hex block, a "2K", a chain name.
            ("exceeded 10K logs or 2K blocks for 0x1388 on eip155", 50_000, None),
            ("up to a 1000 block range.", 5_000, Some(1_000)),
            ("limit 0", 5_000, None),
        ];
        for (message, span, named) in cases {
            assert_eq!(width_named(&answer(message), span), named, "{message:?} at {span}");
        }
        // An HTTP error: its body is read, its status is not.
        let http = |body: &str| TransportErrorKind::http_error(400, body.into());
        assert_eq!(width_named(&http("Bad Request"), 5_000), None);
        assert_eq!(width_named(&http("max range: 2,000 blocks"), 5_000), Some(2_000));
    }
}
