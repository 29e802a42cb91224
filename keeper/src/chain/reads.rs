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
    sync::atomic::{AtomicU64, Ordering},
};

#[derive(Debug, thiserror::Error)]
pub enum CollectError {
    #[error("eth_getLogs {from}..={to} failed")]
    Logs {
        from: u64,
        to: u64,
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

/// The widest `eth_getLogs` block range the node has accepted since it refused a wider one:
/// hosted RPCs cap the range (often 50 to 10,000 blocks), and a process talks to one node, so
/// a width learned once holds for every later read (the keeper's follower, report, serve).
static LOG_RANGE_CAP: AtomicU64 = AtomicU64::new(u64::MAX);

/// The block range a read of `range` blocks uses now: at most the width the node accepts.
pub fn log_range_now(range: u64) -> u64 {
    range.max(1).min(LOG_RANGE_CAP.load(Ordering::Relaxed))
}

/// Whether `e` is the node refusing an `eth_getLogs` range as too wide (an answer, not an
/// outage), and the width it names when it names one ("query exceeds max block range 50",
/// "eth_getLogs is limited to a 10,000 block range", "block range too large").
pub fn range_refusal(e: &TransportError) -> Option<Option<u64>> {
    let alloy::transports::RpcError::ErrorResp(payload) = e else { return None };
    let msg = payload.message.to_lowercase();
    let about_range = msg.contains("range") || msg.contains("block");
    let too_much =
        ["exceed", "too large", "too wide", "too big", "limit", "max", "more than", "too many"]
            .iter()
            .any(|w| msg.contains(w));
    if !(about_range && too_much) {
        return None;
    }
    // The first number in the message, thousands separators allowed, when it reads as blocks.
    let digits: String = msg
        .split(|c: char| !(c.is_ascii_digit() || c == ','))
        .map(|t| t.replace(',', ""))
        .find(|t| !t.is_empty())
        .unwrap_or_default();
    let named =
        if msg.contains("range") { digits.parse::<u64>().ok().filter(|n| *n > 0) } else { None };
    Some(named)
}

/// The logs `filter` matches over `[from, to]` (its own block bounds are replaced), in ranges
/// of at most `range` blocks, or narrower once the node has refused a range as too wide: a
/// refusal halves the range (or takes the width the node names) and reads on, and the width
/// that works is kept for every later read ([`log_range_now`]). A node that answers is never
/// taken for one that is down.
pub async fn filtered_logs(
    provider: &DynProvider,
    filter: &Filter,
    from: u64,
    to: u64,
    range: u64,
) -> Result<Vec<Log>> {
    let mut out = Vec::new();
    let mut start = from;
    let mut width = log_range_now(range);
    while start <= to {
        let end = to.min(start.saturating_add(width - 1));
        let f = filter.clone().from_block(start).to_block(end);
        match provider.get_logs(&f).await {
            Ok(logs) => {
                out.extend(logs);
                if end == u64::MAX {
                    break;
                }
                start = end + 1;
                width = log_range_now(width);
            }
            Err(source) => {
                let span = end - start + 1;
                let Some(named) = range_refusal(&source).filter(|_| span > 1) else {
                    return Err(CollectError::Logs {
                        from: start,
                        to: end,
                        source: Box::new(source),
                    });
                };
                let narrower = named.filter(|n| *n < span).unwrap_or(span / 2).max(1);
                LOG_RANGE_CAP.fetch_min(narrower, Ordering::Relaxed);
                tracing::warn!(
                    from = start,
                    to = end,
                    blocks = span,
                    narrower,
                    node_said = %crate::one_line(&source.to_string()),
                    "the node refused this eth_getLogs range as too wide: reading {narrower} blocks \
                     at a time from now on (--log-range {narrower} starts there)"
                );
                width = narrower;
            }
        }
    }
    Ok(out)
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

/// Adds to `gas` the gas of the transactions that published `logs`' decisions that it lacks: from their
/// blocks' receipts (one `eth_getBlockReceipts` per block, by hash, so a reorged block is not
/// read by mistake), else, on a node without that method, one `eth_getTransactionReceipt` each.
pub async fn tx_gas(
    provider: &DynProvider,
    logs: &[Log],
    gas: &mut HashMap<B256, TxGas>,
) -> Result<()> {
    use alloy::network::ReceiptResponse;
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
    let of = |r: &alloy::rpc::types::TransactionReceipt| TxGas {
        gas_used: r.gas_used(),
        gas_price: r.effective_gas_price().to_string(),
    };
    let fetched: Vec<Result<Vec<(B256, TxGas)>>> = stream::iter(blocks)
        .map(|((_, hash), txs)| async move {
            let mut out = Vec::with_capacity(txs.len());
            if let Ok(Some(receipts)) = provider.get_block_receipts(hash.into()).await {
                for r in &receipts {
                    if txs.contains(&r.transaction_hash()) {
                        out.push((r.transaction_hash(), of(r)));
                    }
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
            Ok(out)
        })
        .buffer_unordered(BLOCK_TIME_CONCURRENCY)
        .collect()
        .await;
    for r in fetched {
        gas.extend(r?);
    }
    Ok(())
}
