//! Collectors: what the keeper reads from chain. Markets are discovered from the factory's
//! `MarketCreated` logs in bounded block ranges; each open market's book and parameters are read
//! concurrently. Collectors only read; they never decide anything.

use crate::bindings::{IBinaryMarket, IMarketFactory, IRiskGate};
use alloy::{
    primitives::{Address, U256},
    providers::{DynProvider, Provider},
    rpc::types::{Filter, Log},
    sol_types::SolEvent,
    transports::TransportError,
};
use futures::{stream, StreamExt};

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
    #[error("the node returned no latest block")]
    NoLatestBlock,
}

pub type Result<T> = std::result::Result<T, CollectError>;

/// A market as the factory announced it.
#[derive(Debug, Clone, PartialEq, Eq)]
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

/// Book depth shown to the model.
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
    let mut out = Vec::new();
    let mut start = from;
    while start <= to {
        let end = to.min(start.saturating_add(range.max(1) - 1));
        let filter = Filter::new()
            .address(address)
            .event_signature(topics0.clone())
            .from_block(start)
            .to_block(end);
        let logs = provider.get_logs(&filter).await.map_err(|source| CollectError::Logs {
            from: start,
            to: end,
            source: Box::new(source),
        })?;
        out.extend(logs);
        if end == u64::MAX {
            break;
        }
        start = end + 1;
    }
    Ok(out)
}

/// Markets created by `factory` in `[from, to]`, in creation order.
pub async fn discover_markets(
    provider: &DynProvider,
    factory: Address,
    from: u64,
    to: u64,
    range: u64,
) -> Result<Vec<MarketInfo>> {
    let logs = logs_in_ranges(
        provider,
        factory,
        vec![IMarketFactory::MarketCreated::SIGNATURE_HASH],
        from,
        to,
        range,
    )
    .await?;
    let mut markets = Vec::with_capacity(logs.len());
    for log in logs {
        let Ok(ev) = IMarketFactory::MarketCreated::decode_log(&log.inner) else { continue };
        markets.push(MarketInfo {
            address: ev.market,
            index: ev.index,
            tick_size: ev.tickSize,
            lot_size: ev.lotSize,
            min_quantity: ev.minQuantity,
            expiry: ev.expiry,
            resolver: ev.resolver,
        });
    }
    Ok(markets)
}

/// Reads one market: the gate's quote (best bid/ask, finality) and a few levels per side.
pub async fn read_market(provider: &DynProvider, info: &MarketInfo) -> Result<MarketState> {
    let market = IBinaryMarket::new(info.address, provider);
    let err = |source: alloy::contract::Error| CollectError::Market {
        market: info.address,
        source: Box::new(source),
    };
    let quote_call = market.gateQuote();
    let bids_call = market.getBookLevels(true, U256::from(BOOK_DEPTH));
    let asks_call = market.getBookLevels(false, U256::from(BOOK_DEPTH));
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

/// Reads many markets concurrently (at most `concurrency` in flight). A market whose read
/// fails is returned as an error next to the others; it never stops them.
pub async fn read_markets(
    provider: &DynProvider,
    markets: &[MarketInfo],
    concurrency: usize,
) -> Vec<(MarketInfo, Result<MarketState>)> {
    stream::iter(markets.iter().cloned())
        .map(|info| async move {
            let res = read_market(provider, &info).await;
            (info, res)
        })
        .buffered(concurrency.max(1))
        .collect()
        .await
}

/// Latest block number and its timestamp (chain time is what the gate uses).
pub async fn head(provider: &DynProvider) -> Result<(u64, u64)> {
    let block = provider
        .get_block_by_number(alloy::eips::BlockNumberOrTag::Latest)
        .await
        .map_err(|e| CollectError::Rpc(Box::new(e)))?
        .ok_or(CollectError::NoLatestBlock)?;
    Ok((block.header.number, block.header.timestamp))
}

/// The gate's fixed addresses.
pub async fn gate_factory(provider: &DynProvider, gate: Address) -> Result<Address> {
    IRiskGate::new(gate, provider)
        .marketFactory()
        .call()
        .await
        .map_err(|e| CollectError::Call(Box::new(e)))
}
