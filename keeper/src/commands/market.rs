//! `keeper market create|quote|resolve`: a venue's chores for local and test chains, so an
//! operator can create a market, rest a book on it and resolve it without writing cast scripts.
//! The functions below take a signing provider and plain values, so the test world
//! (`dev::world`) and the CLI share them. Every refusal the venue would make is either checked
//! first with a fix-it (wrong resolver, short collateral, crossed prices) or decoded from the
//! contract's own error (`NotYetExpired { nowSec, expiry }`).

use crate::{
    chain::{self, revert_text, IErc20View},
    commands::deploy,
    domain::config::{ChainConfig, ConfigError},
    kit::bindings::{IBinaryMarket, IMarketFactory, IRiskGate, ITestCollateral, PRICE_ONE},
};
use alloy::{
    primitives::{Address, TxHash, U256},
    providers::{DynProvider, Provider},
    rpc::types::TransactionReceipt,
    sol_types::{SolEvent, SolInterface},
};
use serde::Serialize;
use std::{
    path::{Path, PathBuf},
    time::Duration,
};

/// Default price grid: 0.001 in 1e6 units.
pub const DEFAULT_TICK: u64 = 1_000;
/// Default quantity grid, so that `tick × lot` = 1e6 (every fill costs a whole base unit).
pub const DEFAULT_LOT: u64 = 1_000;
/// Default minimum order, so that a gate deployed with `keeper deploy`'s defaults can buy:
/// rule 20 needs max(minQuantity, lotSize) >= maxSize × minFillBps / (64 × 10000) =
/// 100e6 × 2500 / 640,000 = 390,625 ([`crate::domain::grid`]); 400,000 is the next round
/// multiple of the default lot. With a minimum of 0 (the old default) every buy was reason 20.
pub const DEFAULT_MIN_QTY: u64 = 400_000;
/// How long one venue transaction may take to be mined.
pub const RECEIPT_TIMEOUT: Duration = Duration::from_secs(120);

/// A side of a binary market.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Side {
    Up,
    Down,
}

#[derive(Debug, thiserror::Error)]
pub enum MarketError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Chain(#[from] chain::ChainError),
    #[error(transparent)]
    Deploy(#[from] deploy::DeployError),
    #[error("no market factory: pass --factory or --gate, or deploy first so deployments/{chain_id}.json names one")]
    NoFactory { chain_id: u64 },
    /// The contract's own error with its values (`NotYetExpired { nowSec: .., expiry: .. }`),
    /// and the call's error underneath.
    #[error("{what} would revert: {decoded}")]
    Revert {
        what: &'static str,
        decoded: String,
        #[source]
        source: Box<alloy::contract::Error>,
    },
    #[error("{what} failed")]
    Call {
        what: &'static str,
        #[source]
        source: Box<alloy::contract::Error>,
    },
    #[error("{what}: no receipt for tx {tx}")]
    Receipt {
        what: &'static str,
        tx: TxHash,
        #[source]
        source: Box<crate::chain::sender::ExecError>,
    },
    #[error("{what}: tx {tx} reverted")]
    Reverted { what: &'static str, tx: TxHash },
    #[error("{what}: the receipt of tx {tx} has no {event} log")]
    NoEvent { what: &'static str, tx: TxHash, event: &'static str },
    #[error("reading the chain head failed")]
    Rpc(#[source] Box<alloy::transports::TransportError>),
    #[error("give --bid, --ask or both")]
    NoOrder,
    #[error("--question is empty: a market must say what event it asks about")]
    QuestionEmpty,
    #[error("--question is {len} bytes; the factory accepts at most {max}")]
    QuestionTooLong { len: usize, max: usize },
    #[error("{flag} {price} is outside 1..=999999 (1e6 units: 1e6 is certainty)")]
    BadPrice { flag: &'static str, price: u64 },
    #[error("--bid and --ask cross: the bid {bid} is not below the ask {ask} (UP prices): the two orders would cross; give a bid below the ask")]
    Crossed { bid: u64, ask: u64 },
    #[error("--qty must be > 0")]
    ZeroQuantity,
    #[error("{holder} holds {balance} of {token} but the orders escrow {needed}, and {token} is not an open-faucet TestCollateral: transfer {holder} the difference first")]
    ShortCollateral { token: Address, holder: Address, balance: U256, needed: U256 },
    #[error("key {key} is not the resolver of market {market} (its resolver is {resolver}): use the resolver's key")]
    NotResolver { key: Address, market: Address, resolver: Address },
    #[error("market {0} is already resolved")]
    AlreadyResolved(Address),
}

impl crate::domain::exit::Classify for MarketError {
    fn fault(&self) -> crate::domain::exit::Fault {
        use crate::domain::exit::Fault::{Input, Runtime};
        match self {
            Self::Config(e) => e.fault(),
            Self::Chain(e) => e.fault(),
            Self::Deploy(e) => e.fault(),
            // The flags, or the key, name what the venue cannot do.
            Self::NoFactory { .. }
            | Self::NoOrder
            | Self::QuestionEmpty
            | Self::QuestionTooLong { .. }
            | Self::BadPrice { .. }
            | Self::Crossed { .. }
            | Self::ZeroQuantity
            | Self::NotResolver { .. } => Input,
            // The chain's state refuses it now (a market not yet expired, already resolved, a
            // balance short): the same command may pass later.
            Self::Revert { .. }
            | Self::Call { .. }
            | Self::Receipt { .. }
            | Self::Reverted { .. }
            | Self::NoEvent { .. }
            | Self::Rpc(_)
            | Self::ShortCollateral { .. }
            | Self::AlreadyResolved(_) => Runtime,
        }
    }
}

pub type Result<T> = std::result::Result<T, MarketError>;

/// A contract error as the contract names it (`NotYetExpired { nowSec, expiry }`), else the
/// call's cause kept as the source.
pub(crate) fn contract_err<E: SolInterface + std::fmt::Debug>(
    what: &'static str,
) -> impl Fn(alloy::contract::Error) -> MarketError {
    move |e| match e.as_decoded_interface_error::<E>() {
        Some(decoded) => {
            MarketError::Revert { what, decoded: revert_text(&decoded), source: Box::new(e) }
        }
        None => MarketError::Call { what, source: Box::new(e) },
    }
}

/// Waits for a mined, successful receipt (the executor's receipt poll, the one the keeper uses).
pub(crate) async fn mined(
    p: &DynProvider,
    what: &'static str,
    tx: TxHash,
) -> Result<TransactionReceipt> {
    let receipt = crate::chain::sender::wait_receipt(p, tx, RECEIPT_TIMEOUT)
        .await
        .map_err(|e| MarketError::Receipt { what, tx, source: Box::new(e) })?;
    if !receipt.status() {
        return Err(MarketError::Reverted { what, tx });
    }
    Ok(receipt)
}

/// The latest block's timestamp.
pub async fn chain_time(p: &DynProvider) -> Result<u64> {
    let block = p
        .get_block_by_number(alloy::eips::BlockNumberOrTag::Latest)
        .await
        .map_err(|e| MarketError::Rpc(Box::new(e)))?;
    Ok(block.map(|b| b.header.timestamp).unwrap_or_default())
}

/// A market to create.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MarketSpec {
    /// The event it asks about, 1 to `MAX_QUESTION_BYTES` bytes (the factory's rule).
    pub question: String,
    pub tick: u64,
    pub lot: u64,
    pub min_qty: u64,
    /// Unix seconds.
    pub expiry: u64,
    pub resolver: Address,
}

/// A created market.
#[derive(Debug, Clone, Serialize)]
pub struct Created {
    pub market: Address,
    /// As `MarketCreated` published it.
    pub question: String,
    pub factory: Address,
    pub expiry: u64,
    pub resolver: Address,
    /// The key that created it, as the factory recorded it (`creatorOf`): a gate trades the
    /// market only if it trusts this creator (rule 19).
    pub creator: Address,
    pub tick: u64,
    pub lot: u64,
    pub min_qty: u64,
    pub block: u64,
    pub tx: TxHash,
}

/// Creates a market on `factory`, signed by `p`.
pub async fn create_market(
    p: &DynProvider,
    factory: Address,
    spec: &MarketSpec,
) -> Result<Created> {
    const WHAT: &str = "createMarket";
    let f = IMarketFactory::new(factory, p);
    let call = f.createMarket(
        spec.question.clone(),
        U256::from(spec.tick),
        U256::from(spec.lot),
        U256::from(spec.min_qty),
        spec.expiry,
        spec.resolver,
    );
    let pending =
        call.send().await.map_err(contract_err::<IMarketFactory::IMarketFactoryErrors>(WHAT))?;
    let receipt = mined(p, WHAT, *pending.tx_hash()).await?;
    let tx = receipt.transaction_hash;
    let (market, creator) = receipt
        .inner
        .logs()
        .iter()
        .find_map(|l| IMarketFactory::MarketCreated::decode_log(&l.inner).ok())
        .map(|ev| (ev.data.market, ev.data.creator))
        .ok_or(MarketError::NoEvent { what: WHAT, tx, event: "MarketCreated" })?;
    Ok(Created {
        market,
        question: spec.question.clone(),
        factory,
        expiry: spec.expiry,
        resolver: spec.resolver,
        creator,
        tick: spec.tick,
        lot: spec.lot,
        min_qty: spec.min_qty,
        block: receipt.block_number.unwrap_or_default(),
        tx,
    })
}

/// One order as the market holds it: in UP prices (a bid buys UP, an ask buys DOWN).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct UpOrder {
    pub is_bid: bool,
    pub up_price: u64,
    pub qty: u64,
}

impl UpOrder {
    /// Collateral the market escrows for it: `qty × p / 1e6` for a bid, `qty × (1e6 − p) / 1e6`
    /// for an ask, rounded up (on the market's grid the division is exact).
    pub fn escrow(&self) -> U256 {
        let paid = if self.is_bid { self.up_price } else { PRICE_ONE - self.up_price };
        (U256::from(self.qty) * U256::from(paid)).div_ceil(U256::from(PRICE_ONE))
    }
}

/// The market orders for a bid and/or an ask quoted in `side`'s prices: for `Down`, a bid at p
/// is an UP ask at 1e6 − p, and an ask at p an UP bid at 1e6 − p. Checked: prices strictly
/// between 0 and 1e6, a positive quantity, and a bid below the ask.
pub fn up_orders(side: Side, bid: Option<u64>, ask: Option<u64>, qty: u64) -> Result<Vec<UpOrder>> {
    if bid.is_none() && ask.is_none() {
        return Err(MarketError::NoOrder);
    }
    if qty == 0 {
        return Err(MarketError::ZeroQuantity);
    }
    for (flag, p) in [("--bid", bid), ("--ask", ask)] {
        if let Some(price) = p.filter(|&p| p == 0 || p >= PRICE_ONE) {
            return Err(MarketError::BadPrice { flag, price });
        }
    }
    let (up_bid, up_ask) = match side {
        Side::Up => (bid, ask),
        Side::Down => (ask.map(|p| PRICE_ONE - p), bid.map(|p| PRICE_ONE - p)),
    };
    if let (Some(b), Some(a)) = (up_bid, up_ask) {
        if b >= a {
            return Err(MarketError::Crossed { bid: b, ask: a });
        }
    }
    let mut orders = Vec::new();
    if let Some(p) = up_bid {
        orders.push(UpOrder { is_bid: true, up_price: p, qty });
    }
    if let Some(p) = up_ask {
        orders.push(UpOrder { is_bid: false, up_price: p, qty });
    }
    Ok(orders)
}

/// What funding the orders took.
#[derive(Debug, Clone, Serialize)]
pub struct Funding {
    pub collateral: Address,
    pub needed: U256,
    /// Test collateral minted to cover a short balance (0 when the balance sufficed).
    pub minted: U256,
    pub approved: bool,
}

/// Makes sure `holder` can escrow `needed` of `market`'s collateral ([`hold_and_approve`]).
pub async fn fund_and_approve(
    p: &DynProvider,
    holder: Address,
    market: Address,
    needed: U256,
) -> Result<Funding> {
    let token = IBinaryMarket::new(market, p).collateral().call().await.map_err(contract_err::<
        IBinaryMarket::IBinaryMarketErrors,
    >(
        "collateral"
    ))?;
    hold_and_approve(p, holder, token, market, needed).await
}

/// Makes sure `holder` holds `needed` of `token` (minting the shortfall when `token` is an
/// open-faucet TestCollateral, else refusing with the balance) and that `spender` may take it.
pub async fn hold_and_approve(
    p: &DynProvider,
    holder: Address,
    token: Address,
    spender: Address,
    needed: U256,
) -> Result<Funding> {
    let view = IErc20View::new(token, p);
    let balance = view
        .balanceOf(holder)
        .call()
        .await
        .map_err(|e| MarketError::Call { what: "balanceOf", source: Box::new(e) })?;
    let mut minted = U256::ZERO;
    if balance < needed {
        let faucet = ITestCollateral::new(token, p);
        let short_by = needed - balance;
        match faucet.mint(holder, short_by).from(holder).call().await {
            Ok(_) => {}
            // The node could not be asked: that says nothing about the token.
            Err(alloy::contract::Error::TransportError(e)) if !e.is_error_resp() => {
                return Err(MarketError::Call {
                    what: "mint (simulated)",
                    source: Box::new(alloy::contract::Error::TransportError(e)),
                })
            }
            // The node answered that minting fails: not an open faucet.
            Err(_) => return Err(MarketError::ShortCollateral { token, holder, balance, needed }),
        }
        let pending = faucet
            .mint(holder, short_by)
            .send()
            .await
            .map_err(contract_err::<ITestCollateral::ITestCollateralErrors>("mint"))?;
        mined(p, "mint", *pending.tx_hash()).await?;
        minted = short_by;
    }
    let allowance = view
        .allowance(holder, spender)
        .call()
        .await
        .map_err(|e| MarketError::Call { what: "allowance", source: Box::new(e) })?;
    let approved = allowance < needed;
    if approved {
        let pending = ITestCollateral::new(token, p)
            .approve(spender, needed)
            .send()
            .await
            .map_err(contract_err::<ITestCollateral::ITestCollateralErrors>("approve"))?;
        mined(p, "approve", *pending.tx_hash()).await?;
    }
    Ok(Funding { collateral: token, needed, minted, approved })
}

/// One resting order placed.
#[derive(Debug, Clone, Serialize)]
pub struct Placed {
    pub order: UpOrder,
    pub order_id: U256,
    pub tx: TxHash,
}

/// Rests one order on `market` (the signer must have approved the market for its escrow).
pub async fn place(p: &DynProvider, market: Address, order: UpOrder) -> Result<Placed> {
    let m = IBinaryMarket::new(market, p);
    let (price, qty) = (U256::from(order.up_price), U256::from(order.qty));
    let what = if order.is_bid { "placeBid" } else { "placeAsk" };
    let decode = contract_err::<IBinaryMarket::IBinaryMarketErrors>(what);
    let pending = if order.is_bid {
        m.placeBid(price, qty).send().await.map_err(decode)?
    } else {
        m.placeAsk(price, qty).send().await.map_err(decode)?
    };
    let receipt = mined(p, what, *pending.tx_hash()).await?;
    let tx = receipt.transaction_hash;
    let order_id = receipt
        .inner
        .logs()
        .iter()
        .find_map(|l| IBinaryMarket::OrderPlaced::decode_log(&l.inner).ok())
        .map(|ev| ev.data.orderId)
        .ok_or(MarketError::NoEvent { what, tx, event: "OrderPlaced" })?;
    Ok(Placed { order, order_id, tx })
}

/// What `keeper market quote` did.
#[derive(Debug, Clone, Serialize)]
pub struct Quoted {
    pub market: Address,
    pub maker: Address,
    pub funding: Funding,
    pub orders: Vec<Placed>,
}

/// Funds, approves and rests `orders` on `market` as `maker` (the signer of `p`).
pub async fn quote(
    p: &DynProvider,
    maker: Address,
    market: Address,
    orders: &[UpOrder],
) -> Result<Quoted> {
    let needed = orders.iter().map(UpOrder::escrow).fold(U256::ZERO, |a, b| a + b);
    let funding = fund_and_approve(p, maker, market, needed).await?;
    let mut placed = Vec::new();
    for o in orders {
        placed.push(place(p, market, *o).await?);
    }
    Ok(Quoted { market, maker, funding, orders: placed })
}

/// What `keeper market resolve` did.
#[derive(Debug, Clone, Serialize)]
pub struct Resolved {
    pub market: Address,
    pub outcome: Side,
    pub block: u64,
    pub tx: TxHash,
}

/// Resolves `market` as `caller` (the signer of `p`): refused first, with a fix-it, when
/// `caller` is not the market's resolver or the market is already final; a resolve before
/// expiry is the market's own `NotYetExpired { nowSec, expiry }`.
pub async fn resolve(
    p: &DynProvider,
    caller: Address,
    market: Address,
    outcome: Side,
) -> Result<Resolved> {
    const WHAT: &str = "resolve";
    let m = IBinaryMarket::new(market, p);
    let decode = contract_err::<IBinaryMarket::IBinaryMarketErrors>;
    let resolver = m.resolver().call().await.map_err(decode("resolver"))?;
    if resolver != caller {
        return Err(MarketError::NotResolver { key: caller, market, resolver });
    }
    if m.finalized().call().await.map_err(decode("finalized"))? {
        return Err(MarketError::AlreadyResolved(market));
    }
    let up_wins = outcome == Side::Up;
    let pending = m.resolve(up_wins).send().await.map_err(decode(WHAT))?;
    let receipt = mined(p, WHAT, *pending.tx_hash()).await?;
    Ok(Resolved {
        market,
        outcome,
        block: receipt.block_number.unwrap_or_default(),
        tx: receipt.transaction_hash,
    })
}

/// Where the venue is: the chain, the key, and the factory (`factory`, else the `gate`'s
/// factory, else deployments/<chain-id>.json).
#[derive(Debug, Clone)]
pub struct VenueConfig {
    pub chain: ChainConfig,
    pub keystore: Option<PathBuf>,
    pub gate: Option<Address>,
    pub factory: Option<Address>,
}

/// `keeper market create`: a market `expiry_in` chain seconds from the head, resolved by
/// `resolver` (None: the key's address).
#[derive(Debug, Clone)]
pub struct CreateConfig {
    pub venue: VenueConfig,
    /// Checked by [`question`]: 1 to `MAX_QUESTION_BYTES` bytes.
    pub question: String,
    pub expiry_in: u64,
    pub tick: u64,
    pub lot: u64,
    pub min_qty: u64,
    pub resolver: Option<Address>,
}

/// `keeper market quote`: the orders to rest, already checked by [`up_orders`].
#[derive(Debug, Clone)]
pub struct QuoteConfig {
    pub venue: VenueConfig,
    pub market: Address,
    pub orders: Vec<UpOrder>,
}

/// `keeper market resolve`.
#[derive(Debug, Clone)]
pub struct ResolveConfig {
    pub venue: VenueConfig,
    pub market: Address,
    pub outcome: Side,
}

/// `keeper market …`, checked.
#[derive(Debug, Clone)]
pub enum MarketConfig {
    Create(CreateConfig),
    Quote(QuoteConfig),
    Resolve(ResolveConfig),
}

/// The factory to create on: `--factory`, else the `--gate`'s, else the saved deployment's.
pub async fn factory_for(
    p: &DynProvider,
    root: &Path,
    chain_id: u64,
    venue: &VenueConfig,
) -> Result<Address> {
    if let Some(f) = venue.factory {
        return Ok(f);
    }
    if let Some(g) = venue.gate {
        return IRiskGate::new(g, p).marketFactory().call().await.map_err(contract_err::<
            IRiskGate::IRiskGateErrors,
        >(
            "marketFactory"
        ));
    }
    match deploy::read_saved(root, chain_id)? {
        Some(saved) => Ok(saved.deployment.factory),
        None => Err(MarketError::NoFactory { chain_id }),
    }
}

/// The signing provider, its address and the chain id of `venue`.
async fn connect(venue: &VenueConfig) -> Result<(DynProvider, Address, u64)> {
    connect_signing(&venue.chain, venue.keystore.as_deref()).await
}

/// A signing provider for `chain` with the key (KEEPER_PRIVATE_KEY or `keystore`), its
/// address and the chain id.
pub(crate) async fn connect_signing(
    chain: &ChainConfig,
    keystore: Option<&Path>,
) -> Result<(DynProvider, Address, u64)> {
    let (_, chain_id) = chain::connect_checked(chain).await?;
    let signer = chain::load_signer(keystore)?;
    let me = signer.address();
    Ok((chain::signing_provider(&chain.rpc_url, signer)?, me, chain_id))
}

/// The JSON `keeper market` prints on stdout.
#[derive(Debug, Clone, Serialize)]
#[serde(untagged)]
pub enum Outcome {
    Created(Created),
    Quoted(Quoted),
    Resolved(Resolved),
}

/// `keeper market …`.
pub async fn run(cmd: &MarketConfig, root: &Path) -> Result<Outcome> {
    match cmd {
        MarketConfig::Create(a) => create_cmd(a, root).await.map(Outcome::Created),
        MarketConfig::Quote(a) => quote_cmd(a).await.map(Outcome::Quoted),
        MarketConfig::Resolve(a) => resolve_cmd(a).await.map(Outcome::Resolved),
    }
}

async fn create_cmd(a: &CreateConfig, root: &Path) -> Result<Created> {
    let (p, me, chain_id) = connect(&a.venue).await?;
    let factory = factory_for(&p, root, chain_id, &a.venue).await?;
    let now = chain_time(&p).await?;
    let spec = MarketSpec {
        question: a.question.clone(),
        tick: a.tick,
        lot: a.lot,
        min_qty: a.min_qty,
        expiry: now.saturating_add(a.expiry_in),
        resolver: a.resolver.unwrap_or(me),
    };
    if let Some(gate) = a.venue.gate {
        warn_if_untradable(&p, gate, &spec).await?;
    }
    let created = create_market(&p, factory, &spec).await?;
    tracing::info!(market = %created.market, factory = %factory, expiry = created.expiry, "created a market");
    Ok(created)
}

/// Warns, naming the rule and the minimum, when `gate` would refuse every buy in a market of
/// `spec`'s grid (rules 6, 7 and 20 read only the grid and the gate's bounds).
async fn warn_if_untradable(p: &DynProvider, gate: Address, spec: &MarketSpec) -> Result<()> {
    let bounds = IRiskGate::new(gate, p)
        .bounds()
        .call()
        .await
        .map_err(contract_err::<IRiskGate::IRiskGateErrors>("bounds"))?;
    if let Some(r) =
        crate::domain::grid::refusal(&bounds, U256::from(spec.lot), U256::from(spec.min_qty))
    {
        tracing::warn!(
            %gate,
            lot = spec.lot,
            min_qty = spec.min_qty,
            rule = r.rule(),
            "the gate will refuse every buy in this market: {r}"
        );
    }
    Ok(())
}

async fn quote_cmd(a: &QuoteConfig) -> Result<Quoted> {
    let (p, me, _) = connect(&a.venue).await?;
    let q = quote(&p, me, a.market, &a.orders).await?;
    tracing::info!(market = %a.market, orders = q.orders.len(), minted = %q.funding.minted, "rested orders");
    Ok(q)
}

async fn resolve_cmd(a: &ResolveConfig) -> Result<Resolved> {
    let (p, me, _) = connect(&a.venue).await?;
    let r = resolve(&p, me, a.market, a.outcome).await?;
    tracing::info!(market = %a.market, outcome = ?a.outcome, "resolved");
    Ok(r)
}

/// A market question as the factory accepts it (checked before the chain, with the same rule
/// and the length named).
pub fn question(text: &str) -> Result<String> {
    let max = crate::kit::bindings::MAX_QUESTION_BYTES;
    match text.len() {
        0 => Err(MarketError::QuestionEmpty),
        len if len > max => Err(MarketError::QuestionTooLong { len, max }),
        _ => Ok(text.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_question_is_one_to_280_bytes() {
        assert!(matches!(question(""), Err(MarketError::QuestionEmpty)));
        assert_eq!(question(&"a".repeat(280)).unwrap().len(), 280);
        assert!(matches!(
            question(&"a".repeat(281)),
            Err(MarketError::QuestionTooLong { len: 281, max: 280 })
        ));
        // Bytes, not characters: 141 two-byte characters are 282 bytes.
        assert!(matches!(
            question(&"é".repeat(141)),
            Err(MarketError::QuestionTooLong { len: 282, max: 280 })
        ));
    }

    #[test]
    fn down_prices_become_up_orders_of_the_other_kind() {
        // A DOWN bid at 0.30 buys DOWN for 0.30: an UP ask at 1e6 - 300_000 = 700_000.
        // A DOWN ask at 0.40 sells DOWN for 0.40: an UP bid at 1e6 - 400_000 = 600_000.
        let o = up_orders(Side::Down, Some(300_000), Some(400_000), 1_000).unwrap();
        assert_eq!(
            o,
            vec![
                UpOrder { is_bid: true, up_price: 600_000, qty: 1_000 },
                UpOrder { is_bid: false, up_price: 700_000, qty: 1_000 },
            ]
        );
        // Escrow: the bid pays 1_000 × 600_000 / 1e6 = 600; the ask 1_000 × 300_000 / 1e6 = 300.
        assert_eq!(o[0].escrow(), U256::from(600u64));
        assert_eq!(o[1].escrow(), U256::from(300u64));
    }

    #[test]
    fn malformed_quotes_are_refused_before_the_chain() {
        assert!(matches!(up_orders(Side::Up, None, None, 1), Err(MarketError::NoOrder)));
        assert!(matches!(up_orders(Side::Up, Some(1), None, 0), Err(MarketError::ZeroQuantity)));
        assert!(matches!(
            up_orders(Side::Up, Some(PRICE_ONE), None, 1),
            Err(MarketError::BadPrice { flag: "--bid", price }) if price == PRICE_ONE
        ));
        assert!(matches!(
            up_orders(Side::Up, Some(500_000), Some(500_000), 1),
            Err(MarketError::Crossed { bid: 500_000, ask: 500_000 })
        ));
    }
}
