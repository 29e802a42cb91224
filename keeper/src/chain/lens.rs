//! Batched book reads through the deployless `BookLens` (contracts/src/periphery/BookLens.sol):
//! one `eth_call` without a `to` carries the lens's creation code and a chunk of market
//! addresses; its constructor reads every market the way `reads::read_market` does and
//! hands the reads back as the revert data `Books(...)`. Nothing is deployed, so it works on any
//! chain. Same signature and same results as `reads::read_markets`; a chunk the lens cannot
//! read (a node that drops revert data, a gas cap too low) and any market it flags are read one
//! by one instead, so one bad market never poisons the batch.

use crate::chain::reads::{self, MarketInfo, MarketState, BOOK_DEPTH};
use alloy::{
    network::TransactionBuilder,
    primitives::{Bytes, U256},
    providers::{DynProvider, Provider},
    rpc::types::TransactionRequest,
    sol,
    sol_types::SolConstructor,
    transports::TransportError,
};
use futures::{stream, StreamExt};
use std::sync::OnceLock;

sol! {
    /// The lens's ABI, as contracts/src/periphery/BookLens.sol declares it.
    contract BookLens {
        struct Level {
            uint256 price;
            uint256 quantity;
        }
        struct Book {
            bool ok;
            uint256 bestBid;
            uint256 bestAsk;
            bool finalized;
            Level[] bids;
            Level[] asks;
        }
        error Books(Book[] books);
        constructor(address[] markets, uint256 depth);
    }
}

/// The lens's creation code, as `forge inspect contracts/src/periphery/BookLens.sol:BookLens
/// bytecode` prints it with the settings of foundry.toml. keeper/tests/lens.rs holds it to a
/// fresh compile of the source, so the two cannot drift apart.
pub const INITCODE_HEX: &str = include_str!("book_lens.hex");

/// Markets per `eth_call`. Each market costs the lens three calls to a cold account (about
/// 20,000 gas, see `keeper bench`), so a chunk stays far below the 30,000,000 gas anvil and
/// most nodes allow an `eth_call`, and its answer (about 700 bytes per market at
/// `BOOK_DEPTH` = 3) stays near 140 KB.
pub const MARKETS_PER_CALL: usize = 200;

#[derive(Debug, thiserror::Error)]
pub enum LensError {
    #[error("the lens's creation code in keeper/src/chain/book_lens.hex is not hex")]
    Initcode(#[source] alloy::hex::FromHexError),
    #[error("lens eth_call over {markets} markets failed")]
    Call {
        markets: usize,
        #[source]
        source: Box<TransportError>,
    },
    #[error("the lens deployed instead of reverting with its result (is this BookLens?)")]
    Returned,
    #[error("the lens answered {got} books for {asked} markets")]
    Count { asked: usize, got: usize },
}

/// The creation code, decoded once.
fn initcode() -> Result<&'static Bytes, LensError> {
    static CODE: OnceLock<Result<Bytes, alloy::hex::FromHexError>> = OnceLock::new();
    CODE.get_or_init(|| alloy::hex::decode(INITCODE_HEX.trim()).map(Bytes::from))
        .as_ref()
        .map_err(|e| LensError::Initcode(*e))
}

/// The `eth_call` that reads `markets` through the lens.
pub fn request(markets: &[MarketInfo]) -> Result<TransactionRequest, LensError> {
    let args = BookLens::constructorCall {
        markets: markets.iter().map(|m| m.address).collect(),
        depth: U256::from(BOOK_DEPTH),
    }
    .abi_encode();
    let mut code = initcode()?.to_vec();
    code.extend_from_slice(&args);
    Ok(TransactionRequest::default().with_deploy_code(Bytes::from(code)))
}

/// One lens call over `markets`: every market's book as the lens read it, in order (a book
/// with `ok` false is one the lens could not read).
pub async fn read_chunk(
    provider: &DynProvider,
    markets: &[MarketInfo],
    at: u64,
) -> Result<Vec<BookLens::Book>, LensError> {
    let tx = request(markets)?;
    let books = match provider.call(tx).block(alloy::eips::BlockId::number(at)).await {
        Ok(_) => return Err(LensError::Returned),
        Err(e) => match e.as_error_resp().and_then(|p| p.as_decoded_error::<BookLens::Books>()) {
            Some(result) => result.books,
            None => {
                return Err(LensError::Call { markets: markets.len(), source: Box::new(e) });
            }
        },
    };
    if books.len() != markets.len() {
        return Err(LensError::Count { asked: markets.len(), got: books.len() });
    }
    Ok(books)
}

/// The state `reads::read_market` would return for `info`, from the lens's read.
fn state(info: &MarketInfo, book: BookLens::Book) -> MarketState {
    MarketState {
        info: info.clone(),
        best_bid: book.bestBid,
        best_ask: book.bestAsk,
        finalized: book.finalized,
        bids: book.bids.into_iter().map(|l| (l.price, l.quantity)).collect(),
        asks: book.asks.into_iter().map(|l| (l.price, l.quantity)).collect(),
    }
}

/// Reads many markets at block `at` like `reads::read_markets`, `MARKETS_PER_CALL` to an
/// `eth_call` (at most `concurrency` calls in flight). Results come back in the order given.
pub async fn read_markets(
    provider: &DynProvider,
    markets: &[MarketInfo],
    at: u64,
    concurrency: usize,
) -> Vec<(MarketInfo, reads::Result<MarketState>)> {
    read_markets_chunked(provider, markets, at, concurrency, MARKETS_PER_CALL).await
}

/// `read_markets` with `per_call` markets to an `eth_call`.
pub async fn read_markets_chunked(
    provider: &DynProvider,
    markets: &[MarketInfo],
    at: u64,
    concurrency: usize,
    per_call: usize,
) -> Vec<(MarketInfo, reads::Result<MarketState>)> {
    let chunks: Vec<Vec<(MarketInfo, reads::Result<MarketState>)>> =
        stream::iter(markets.chunks(per_call.max(1)))
            .map(|chunk| read_chunk_or_fall_back(provider, chunk, at, concurrency))
            .buffered(concurrency.max(1))
            .collect()
            .await;
    chunks.into_iter().flatten().collect()
}

/// One chunk through the lens; the markets it could not read (or the whole chunk, if the call
/// failed) are read one by one.
async fn read_chunk_or_fall_back(
    provider: &DynProvider,
    chunk: &[MarketInfo],
    at: u64,
    concurrency: usize,
) -> Vec<(MarketInfo, reads::Result<MarketState>)> {
    let books = match read_chunk(provider, chunk, at).await {
        Ok(books) => books,
        Err(e) => {
            eprintln!(
                "keeper: {}; reading these {} markets one by one",
                crate::error_chain(&e),
                chunk.len()
            );
            return reads::read_markets(provider, chunk, at, concurrency).await;
        }
    };
    stream::iter(chunk.iter().zip(books))
        .map(|(info, book)| async move {
            let read = if book.ok {
                Ok(state(info, book))
            } else {
                reads::read_market(provider, info, at).await
            };
            (info.clone(), read)
        })
        .buffered(concurrency.max(1))
        .collect()
        .await
}
