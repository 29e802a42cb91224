//! The world an attack runs in: markets, their books, their resolvers, the gate and the clock,
//! behind one trait with two implementations. [`ReferenceWorld`] is the gate as the
//! specification describes it (`model::evaluate` + [`Ledger`]) over the reference venue.
//! [`EvmWorld`] is the compiled `RiskGate`, `MarketFactory`, `BinaryMarket` and `TestCollateral`
//! in revm, driven by real transactions from the keeper's, the attacker's and the makers'
//! addresses; it decodes every `Decision` from the transaction's own logs and holds each one,
//! and the gate's balance, `H`, open notional and slots after every call, to the reference model
//! (a shadow [`Ledger`] fed by the gate's own events). Scenarios never look behind the trait.

use crate::{
    abi::{
        self, IBinaryMarket, IGateSubmit, IMarketFactory, IMarketQuestion, IRiskGate,
        ITestCollateral, SolSnapshot,
    },
    artifact::GateArtifact,
    attested::{AttestorSetting, REASON_ATTESTORS_DISAGREE, REASON_NOT_ATTESTED},
    evm::{self, Chain, Deployed, Outcome, RevmChain},
    ledger::{Ledger, Position, Refusal, Settlement},
    model::{self, Bounds, GateConfig, Quote, ReadBlockInFuture, Snapshot, Verdict, PRICE_ONE},
    venue::{self, VenueError},
};
use alloy::{
    primitives::{keccak256, Address, Bytes, Log, B256, U256},
    sol_types::{SolCall, SolEvent, SolInterface, SolValue},
};
use std::collections::{BTreeMap, BTreeSet};

mod submit_attested;
pub use submit_attested::{AttestedItem, AttestedRefusal, AttestedRow, AttestedRows};

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Evm(#[from] evm::Error),
    #[error("the venue refused {what}: {error:?} (a scenario step the venue must accept)")]
    Venue { what: String, error: VenueError },
    #[error("{what} reverted on chain: {revert} (a scenario step the contracts must accept)")]
    Reverted { what: String, revert: String },
    #[error("{what}: {reason}")]
    Decode { what: String, reason: String },
    #[error("{what} did not deploy: {got:?}")]
    Deploy { what: &'static str, got: Deployed },
    #[error("no market at {0} in this world")]
    UnknownMarket(Address),
    #[error("{0} (a scenario step this gate's mode does not take)")]
    WrongMode(&'static str),
}

pub type Result<T> = std::result::Result<T, Error>;

// --- the actors: fixed addresses, so a trusted list can be sorted the same way in both worlds

/// The owner: deploys the gate, withdraws and deposits.
pub const DEPLOYER: Address = Address::new([0x0d; 20]);
/// The keeper key: issue 14 makes it neither a trusted resolver nor a trusted creator.
pub const KEEPER: Address = Address::new([0x4b; 20]);
pub const ATTACKER: Address = Address::new([0xa7; 20]);
/// An honest market maker, and the trusted creator of the honest markets.
pub const MAKER: Address = Address::new([0x3a; 20]);
/// Someone who sends the gate collateral by plain transfer (a treasury's top-up).
pub const TREASURY: Address = Address::new([0x7e; 20]);
/// A resolver that resolves honestly after expiry.
pub const HONEST_RESOLVER: Address = Address::new([0x5e; 20]);
/// A trusted resolver that never resolves.
pub const SILENT_RESOLVER: Address = Address::new([0x51; 20]);
/// Someone who calls the public housekeeping functions (`redeem`, `writeOff`).
pub const ANYONE: Address = Address::new([0xee; 20]);

/// `IRiskGate.Order`: what a decision bought or tried to buy.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Order {
    pub price_paid: U256,
    pub limit: U256,
    pub quantity: U256,
    pub cost: U256,
    pub filled: U256,
    pub spent: U256,
}

/// One published decision.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Row {
    pub market: Address,
    /// The block the keeper rendered the prompt from, as the `Decision` published it.
    pub read_block: u64,
    pub reason: u8,
    /// 0, 1, 2, or 255 for an answer that did not parse.
    pub verdict: u8,
    pub failed_mask: u32,
    /// What the gate read (none for ABSTAIN and unparseable answers).
    pub snapshot: Option<Snapshot>,
    pub quote: Quote,
    pub order: Order,
    /// Gas of the `submitVerdict` transaction (EVM only).
    pub gas_used: Option<u64>,
}

/// The gate's accounting as its views report it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GateState {
    pub balance: U256,
    pub high_water_mark: U256,
    pub open_notional: U256,
    pub open_positions: u8,
    /// `accountedCollateral()`: what the gate's own account says it holds (`K - openNotional`).
    pub accounted_collateral: U256,
}

impl GateState {
    pub fn equity(&self) -> U256 {
        self.balance.saturating_add(self.open_notional)
    }

    /// `H` as the next settlement will leave it: the stored mark plus any surplus of the balance
    /// over the account (an uncounted donation). A deficit changes nothing in `H`.
    pub fn settled_high_water_mark(&self) -> U256 {
        let surplus = self.balance.saturating_sub(self.accounted_collateral);
        self.high_water_mark.saturating_add(surplus).max(self.equity())
    }
}

/// What `createMarket` is given.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MarketSpec {
    /// The event the market asks about: 1 to 280 bytes (`model::question_hash`).
    pub question: String,
    pub tick: u64,
    pub lot: U256,
    pub min_quantity: U256,
    pub expiry_sec: u64,
    pub resolver: Address,
}

/// One element of a batch (`submitVerdicts`): what [`World::submit`] is given, the answer
/// `raw` as bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BatchItem {
    pub market: Address,
    pub raw: Vec<u8>,
    /// The block the keeper rendered this element's prompt from.
    pub read_block: u64,
    pub quote: Quote,
}

impl BatchItem {
    /// The element as [`abi::submit_verdicts_calldata`] takes it.
    pub fn args(&self) -> abi::SubmissionArgs<'_> {
        (self.market, &self.raw, self.read_block, &self.quote)
    }
}

/// Why the gate refused a batch whole: nothing is published and nothing changes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BatchRefusal {
    /// The batch has no element (`BatchEmpty`).
    Empty,
    /// Element `index`, the first such in order, names a block above the current one
    /// (`ReadBlockInFuture` with that element's block).
    ReadBlockInFuture { index: usize, error: ReadBlockInFuture },
}

/// What a batch the gate took published.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BatchRows {
    /// One row per element, in order (their `gas_used` is `None`: the gas is the batch's).
    pub rows: Vec<Row>,
    /// Gas of the one `submitVerdicts` transaction (EVM only).
    pub gas_used: Option<u64>,
}

/// A batch's rows, or the gate's refusal of the whole batch.
pub type BatchOutcome = std::result::Result<BatchRows, BatchRefusal>;

/// The whole-batch refusals of `submitVerdicts` as the specification orders them: an empty
/// batch, then element by element in order a `readBlock` above `block` (checked before the
/// market, as in a single call) and a market this world does not know, which is a scenario
/// error ([`Error::UnknownMarket`]) as it is for [`World::submit`].
fn admit_batch(
    items: &[BatchItem],
    block: u64,
    known: impl Fn(&Address) -> bool,
) -> Result<std::result::Result<(), BatchRefusal>> {
    if items.is_empty() {
        return Ok(Err(BatchRefusal::Empty));
    }
    for (index, item) in items.iter().enumerate() {
        if let Err(error) = model::check_read_block(item.read_block, block) {
            return Ok(Err(BatchRefusal::ReadBlockInFuture { index, error }));
        }
        if !known(&item.market) {
            return Err(Error::UnknownMarket(item.market));
        }
    }
    Ok(Ok(()))
}

/// The revert data the gate's refusal of a batch must carry.
fn batch_refusal_data(refusal: &BatchRefusal) -> Bytes {
    match refusal {
        BatchRefusal::Empty => abi::batch_empty_data(),
        BatchRefusal::ReadBlockInFuture { error, .. } => abi::read_block_in_future_data(error),
    }
}

/// One world: the gate, its venue and the clock.
pub trait World {
    /// "reference model" or "compiled contracts in revm".
    fn backend(&self) -> &'static str;
    fn now(&self) -> u64;
    /// The number of the block the next transaction is mined in (`block.number`), which is
    /// also the block the keeper reads the book at when it reads now.
    fn block(&self) -> u64;
    /// Moves the clock (forward only, in every scenario), in the next block.
    fn set_time(&mut self, now_sec: u64);
    /// `createMarket` sent by `creator` (the factory records it as the market's creator). A
    /// question the factory refuses is [`Error::Venue`] with [`VenueError::Question`].
    fn create_market(&mut self, creator: Address, spec: &MarketSpec) -> Result<Address>;
    /// Rests a bid (`is_bid`) or an ask; returns the order id.
    fn place(
        &mut self,
        market: Address,
        owner: Address,
        is_bid: bool,
        price: u64,
        quantity: U256,
    ) -> Result<u64>;
    /// An immediate-or-cancel buy by someone other than the gate: `(filled, spent)`.
    fn take(
        &mut self,
        market: Address,
        taker: Address,
        buy_up: bool,
        up_limit: u64,
        quantity: U256,
    ) -> Result<(U256, U256)>;
    /// `(bestBid, bestAsk)`, 0 for an empty side.
    fn best(&mut self, market: Address) -> Result<(u64, u64)>;
    /// The keeper's `submitVerdict` of `raw`, rendered from the book at `read_block`: the
    /// published row, or the gate's refusal of a `read_block` above the current block (nothing
    /// is published then).
    fn submit(
        &mut self,
        market: Address,
        raw: &[u8],
        read_block: u64,
        quote: &Quote,
    ) -> Result<std::result::Result<Row, ReadBlockInFuture>>;
    /// The keeper's `submitVerdicts` of `items`, in one transaction: each element decided as
    /// [`World::submit`] would decide it, in order, against the state the earlier ones left,
    /// with one row per element; or the refusal of the whole batch (an empty one, or an element
    /// read at a block above the current one), which publishes and changes nothing.
    fn submit_batch(&mut self, items: &[BatchItem]) -> Result<BatchOutcome>;
    fn resolve(&mut self, market: Address, caller: Address, up_won: bool) -> Result<()>;
    /// The gate's `redeem` called by anyone: the payout, or the gate's refusal.
    fn redeem(&mut self, market: Address) -> Result<std::result::Result<U256, Refusal>>;
    /// The gate's `writeOff` called by anyone, or the gate's refusal.
    fn write_off(&mut self, market: Address) -> Result<std::result::Result<(), Refusal>>;
    /// The owner's `withdrawCollateral` of `amount` to itself.
    fn withdraw(&mut self, amount: U256) -> Result<()>;
    /// `deposit(amount)` by `from` (funded and approved for it): what arrived, or the refusal.
    fn deposit(
        &mut self,
        from: Address,
        amount: U256,
    ) -> Result<std::result::Result<U256, Refusal>>;
    /// A plain transfer of `amount` to the gate from `from`: the gate is not called.
    fn donate(&mut self, from: Address, amount: U256) -> Result<()>;
    fn state(&mut self) -> Result<GateState>;
    fn position(&mut self, market: Address) -> Result<Position>;
    /// Where the compiled gate and the reference model disagreed (always empty for the
    /// reference world).
    fn disagreements(&self) -> &[String];
}

/// The keeper's quote as issue 7 and the v2 decisions define it: `maxPricePaid =
/// ceil(seen * (10000 + slippageBps) / 10000)`, where `seen` is the price of the chosen side's
/// token in the book the model was shown, and `deadline = read time + ttl`. `Quote(0, 0)` for
/// anything but a buy.
pub fn keeper_quote(
    verdict: Option<Verdict>,
    best_bid: u64,
    best_ask: u64,
    read_sec: u64,
    slippage_bps: u64,
    ttl_secs: u64,
) -> Quote {
    let seen = match verdict {
        Some(Verdict::BuyUp) => best_ask,
        Some(Verdict::BuyDown) => PRICE_ONE.saturating_sub(best_bid),
        _ => return Quote::default(),
    };
    let bps = u128::from(model::BPS);
    let scaled = u128::from(seen) * (bps + u128::from(slippage_bps));
    Quote {
        max_price_paid: U256::from(scaled.div_ceil(bps)),
        deadline_sec: read_sec.saturating_add(ttl_secs),
    }
}

/// The snapshot the reference gate reads for `market`.
fn snapshot_of(
    market: &venue::Market,
    ledger: &Ledger,
    position: &Position,
    (resolver_trusted, creator_trusted): (bool, bool),
    now_sec: u64,
) -> Snapshot {
    Snapshot {
        best_bid: U256::from(market.best_bid()),
        best_ask: U256::from(market.best_ask()),
        tick_size: U256::from(market.tick),
        lot_size: market.lot,
        min_quantity: market.min_quantity,
        expiry_sec: market.expiry_sec,
        now_sec,
        finalized: market.finalized,
        open_positions: ledger.open_positions,
        open_notional: ledger.open_notional,
        collateral_available: ledger.balance,
        resolver_trusted,
        held_side: position.held_side(),
        high_water_mark: ledger.high_water_mark,
        creator_trusted,
    }
}

fn refused_row(market: Address, read_block: u64, reason: u8, verdict: u8, quote: &Quote) -> Row {
    Row {
        market,
        read_block,
        reason,
        verdict,
        failed_mask: 1 << reason,
        snapshot: None,
        quote: *quote,
        order: Order::default(),
        gas_used: None,
    }
}

// --- the reference world

/// The gate of the specification over the reference venue.
pub struct ReferenceWorld {
    now_sec: u64,
    block: u64,
    trusted: Vec<Address>,
    trusted_creators: Vec<Address>,
    pub ledger: Ledger,
    markets: BTreeMap<Address, venue::Market>,
    /// Who created each market (the factory's `creatorOf`).
    creators: BTreeMap<Address, Address>,
    gate: Address,
    /// How the gate takes answers: relayed (no signer) unless made by
    /// [`ReferenceWorld::attested`].
    attestors: AttestorSetting,
    /// The chain the attestors sign for (EIP-712's `chainId`).
    chain_id: u64,
    /// Each market's last attested `readBlock` (the replay rule of docs/attested.md).
    last_attested: BTreeMap<Address, u64>,
    /// Addresses the next markets take, in order, before the world's own (see
    /// [`ReferenceWorld::use_addresses`]).
    market_addresses: std::collections::VecDeque<Address>,
}

impl ReferenceWorld {
    /// The gate funded with `initial_collateral` by a plain transfer before its first call (so
    /// its first settlement counts it, as on chain).
    pub fn new(config: &GateConfig, initial_collateral: U256, now_sec: u64) -> Self {
        let mut ledger = Ledger::new(config.bounds);
        ledger.donate(initial_collateral);
        Self {
            now_sec,
            block: FIRST_BLOCK,
            trusted: config.trusted_resolvers.clone(),
            trusted_creators: config.trusted_creators.clone(),
            ledger,
            markets: BTreeMap::new(),
            creators: BTreeMap::new(),
            gate: Address::new([0x6a; 20]),
            attestors: AttestorSetting::relayed(),
            chain_id: REFERENCE_CHAIN_ID,
            last_attested: BTreeMap::new(),
            market_addresses: Default::default(),
        }
    }

    /// Names the gate `gate` and the next markets created `markets`, in order, before the world
    /// has traded (the gate's address is also its orders' taker): a world whose attestors must
    /// sign exactly what they sign on a chain (a signature that recovers to no attestor
    /// recovers to an address that depends on every signed field, the market's and the gate's
    /// addresses included).
    pub fn use_addresses(&mut self, gate: Address, markets: &[Address]) {
        self.gate = gate;
        self.market_addresses = markets.iter().copied().collect();
    }

    /// The gate's address: the taker of its orders, and the `verifyingContract` attestors of
    /// an attested gate sign for.
    pub fn gate(&self) -> Address {
        self.gate
    }

    fn market(&mut self, market: Address) -> Result<&mut venue::Market> {
        self.markets.get_mut(&market).ok_or(Error::UnknownMarket(market))
    }

    /// Moves the chain to block `number` (time stays where it is).
    pub fn set_block(&mut self, number: u64) {
        self.block = number;
    }

    /// The keeper's verdict decided as `submitVerdict` decides a parsed answer: ABSTAIN is
    /// reason 1; a buy settles the account, reads the market and is evaluated, and an accepted
    /// order runs (undone with a fill below the minimum, rule 18).
    fn decide(
        &mut self,
        market: Address,
        read_block: u64,
        verdict: Verdict,
        quote: &Quote,
    ) -> Result<Row> {
        if verdict == Verdict::Abstain {
            return Ok(refused_row(market, read_block, 1, 0, quote));
        }
        let now = self.now_sec;
        let m = self.markets.get(&market).ok_or(Error::UnknownMarket(market))?;
        // A buy settles the account (and raises H) after reading the book, before evaluating.
        self.ledger.settle();
        let position = self.ledger.position(market);
        let creator = self.creators.get(&market).copied().unwrap_or_default();
        let trust = (self.trusted.contains(&m.resolver), self.trusted_creators.contains(&creator));
        let snapshot = snapshot_of(m, &self.ledger, &position, trust, now);
        let bounds = self.ledger.bounds;
        let d = model::evaluate(&bounds, &snapshot, quote, verdict.code());
        let mut row = Row {
            market,
            read_block,
            reason: d.reason,
            verdict: verdict.code(),
            failed_mask: d.failed_mask,
            snapshot: Some(snapshot),
            quote: *quote,
            order: Order::default(),
            gas_used: None,
        };
        if !d.accepted() {
            return Ok(row);
        }
        let limit = model::order_limit(&bounds, &snapshot, quote, verdict).unwrap_or_default();
        let buy_up = verdict == Verdict::BuyUp;
        let one = U256::from(PRICE_ONE);
        let up_limit = if buy_up { limit } else { one - limit };
        let up_limit = u64::try_from(up_limit).unwrap_or(u64::MAX);
        // The order runs on a copy of the market; a fill below the minimum is dropped with it.
        let mut trial = m.clone();
        let (filled, spent) = trial
            .take(self.gate, buy_up, up_limit, d.quantity, now)
            .map_err(venue_err("the gate's order"))?;
        row.order = Order {
            price_paid: d.price_paid,
            limit,
            quantity: d.quantity,
            cost: d.cost,
            filled,
            spent,
        };
        if model::fill_below_minimum(&bounds, d.quantity, filled) {
            row.reason = model::REASON_FILL_BELOW_MINIMUM;
            row.failed_mask = 1 << model::REASON_FILL_BELOW_MINIMUM;
            return Ok(row);
        }
        self.markets.insert(market, trial);
        self.ledger.apply_fill(market, buy_up, filled, spent);
        Ok(row)
    }
}

fn venue_err(what: &str) -> impl Fn(VenueError) -> Error + '_ {
    move |error| Error::Venue { what: what.to_string(), error }
}

impl World for ReferenceWorld {
    fn backend(&self) -> &'static str {
        "reference model"
    }

    fn now(&self) -> u64 {
        self.now_sec
    }

    fn block(&self) -> u64 {
        self.block
    }

    fn set_time(&mut self, now_sec: u64) {
        self.now_sec = now_sec;
        self.block = self.block.saturating_add(1);
    }

    fn create_market(&mut self, creator: Address, spec: &MarketSpec) -> Result<Address> {
        let m = venue::Market::new(
            spec.tick,
            spec.lot,
            spec.min_quantity,
            spec.expiry_sec,
            spec.resolver,
            self.now_sec,
        )
        .map_err(venue_err("createMarket"))?;
        model::question_hash(spec.question.as_bytes())
            .map_err(|e| venue_err("createMarket")(VenueError::Question(e)))?;
        let address = self.market_addresses.pop_front().unwrap_or_else(|| {
            let mut bytes = [0xaa; 20];
            bytes[12..].copy_from_slice(&(self.markets.len() as u64 + 1).to_be_bytes());
            Address::new(bytes)
        });
        self.markets.insert(address, m);
        self.creators.insert(address, creator);
        Ok(address)
    }

    fn place(
        &mut self,
        market: Address,
        owner: Address,
        is_bid: bool,
        price: u64,
        quantity: U256,
    ) -> Result<u64> {
        let now = self.now_sec;
        self.market(market)?.place(owner, is_bid, price, quantity, now).map_err(venue_err("place"))
    }

    fn take(
        &mut self,
        market: Address,
        taker: Address,
        buy_up: bool,
        up_limit: u64,
        quantity: U256,
    ) -> Result<(U256, U256)> {
        let now = self.now_sec;
        self.market(market)?.take(taker, buy_up, up_limit, quantity, now).map_err(venue_err("take"))
    }

    fn best(&mut self, market: Address) -> Result<(u64, u64)> {
        let m = self.market(market)?;
        Ok((m.best_bid(), m.best_ask()))
    }

    fn submit(
        &mut self,
        market: Address,
        raw: &[u8],
        read_block: u64,
        quote: &Quote,
    ) -> Result<std::result::Result<Row, ReadBlockInFuture>> {
        // Before anything else (the keeper is always the keeper here, and the gate never
        // paused): a block that does not exist yet.
        if let Err(e) = model::check_read_block(read_block, self.block) {
            return Ok(Err(e));
        }
        match model::parse_verdict(raw) {
            Err(_) => {
                let reason = model::REASON_INVALID_VERDICT;
                Ok(Ok(refused_row(market, read_block, reason, 255, quote)))
            }
            Ok(verdict) => self.decide(market, read_block, verdict, quote).map(Ok),
        }
    }

    fn submit_batch(&mut self, items: &[BatchItem]) -> Result<BatchOutcome> {
        let known = &self.markets;
        if let Err(refusal) = admit_batch(items, self.block, |m| known.contains_key(m))? {
            return Ok(Err(refusal));
        }
        // Admitted whole: each element exactly as a single submission, in order.
        let mut rows = Vec::with_capacity(items.len());
        for (index, item) in items.iter().enumerate() {
            match self.submit(item.market, &item.raw, item.read_block, &item.quote)? {
                Ok(row) => rows.push(row),
                // Not reached: every block was checked against this one above.
                Err(error) => return Ok(Err(BatchRefusal::ReadBlockInFuture { index, error })),
            }
        }
        Ok(Ok(BatchRows { rows, gas_used: None }))
    }

    fn resolve(&mut self, market: Address, caller: Address, up_won: bool) -> Result<()> {
        let now = self.now_sec;
        self.market(market)?.resolve(caller, up_won, now).map_err(venue_err("resolve"))
    }

    fn redeem(&mut self, market: Address) -> Result<std::result::Result<U256, Refusal>> {
        let gate = self.gate;
        let m = self.markets.get_mut(&market).ok_or(Error::UnknownMarket(market))?;
        if !self.ledger.positions.contains_key(&market) {
            return Ok(Err(Refusal::NoOpenPosition));
        }
        if !m.finalized {
            return Ok(Err(Refusal::MarketNotFinal));
        }
        let payout = m.redeem(gate).map_err(venue_err("the gate's redeem"))?;
        Ok(self.ledger.redeem(market, true, payout).map(|_| payout))
    }

    fn write_off(&mut self, market: Address) -> Result<std::result::Result<(), Refusal>> {
        let now = self.now_sec;
        let m = self.markets.get(&market).ok_or(Error::UnknownMarket(market))?;
        // The reference venue always pays a final market's winners: a final market is
        // redeemable.
        let (expiry, finalized) = (m.expiry_sec, m.finalized);
        Ok(self.ledger.write_off(market, now, expiry, finalized, true).map(|_| ()))
    }

    fn withdraw(&mut self, amount: U256) -> Result<()> {
        self.ledger.withdraw(amount).map_err(|r| Error::Reverted {
            what: "withdrawCollateral".into(),
            revert: format!("{r:?}"),
        })?;
        Ok(())
    }

    fn deposit(
        &mut self,
        _from: Address,
        amount: U256,
    ) -> Result<std::result::Result<U256, Refusal>> {
        // The reference collateral charges no fee: what arrives is the amount.
        Ok(self.ledger.deposit(amount, amount).map(|_| amount))
    }

    fn donate(&mut self, _from: Address, amount: U256) -> Result<()> {
        self.ledger.donate(amount);
        Ok(())
    }

    fn state(&mut self) -> Result<GateState> {
        Ok(GateState {
            balance: self.ledger.balance,
            high_water_mark: self.ledger.high_water_mark,
            open_notional: self.ledger.open_notional,
            open_positions: self.ledger.open_positions,
            accounted_collateral: self.ledger.accounted_collateral(),
        })
    }

    fn position(&mut self, market: Address) -> Result<Position> {
        Ok(self.ledger.position(market))
    }

    fn disagreements(&self) -> &[String] {
        &[]
    }
}

// --- the compiled contracts in revm

/// What the shadow ledger needs to know about a market to predict a write-off.
#[derive(Clone, Copy, Debug)]
struct MarketInfo {
    tick: u64,
    lot: U256,
    min_quantity: U256,
    expiry_sec: u64,
    resolver: Address,
    creator: Address,
    finalized: bool,
    up_won: bool,
}

/// What was read of a market just before a submission: its `(bestBid, bestAsk)` and the
/// snapshot `snapshotOf` said the gate would evaluate.
#[derive(Clone, Debug)]
struct ReadBefore {
    book: (u64, u64),
    preview: Snapshot,
}

/// What a decision is held to from the reads before its submission, when they still describe
/// the state it was decided in (see [`EvmWorld::check_row`]).
#[derive(Clone, Copy, Debug)]
struct Before<'a> {
    book: Option<(u64, u64)>,
    preview: Option<&'a Snapshot>,
}

impl<'a> Before<'a> {
    /// What the reads before a batch still say of an element on `market`, given the markets
    /// `bought` from by earlier elements. Their books after the fill cannot be read on chain in
    /// the middle of the transaction, and the shadow ledger does not keep books: for a later
    /// element on such a market the bid and ask are not compared (every other field of its
    /// snapshot and the whole decision still are). The preview likewise describes the gate only
    /// until the first fill moves its slots, notional and balance (a settlement before it
    /// changes nothing `snapshotOf` did not already count): after that the shadow ledger alone
    /// holds the gate's fields.
    fn in_batch(
        reads: &'a BTreeMap<Address, ReadBefore>,
        bought: &BTreeSet<Address>,
        market: Address,
    ) -> Self {
        let read = reads.get(&market);
        Before {
            book: read.filter(|_| !bought.contains(&market)).map(|r| r.book),
            preview: read.filter(|_| bought.is_empty()).map(|r| &r.preview),
        }
    }
}

/// One `Decision` and the logs of its own element (see [`EvmWorld::decisions`]).
#[derive(Clone, Debug)]
struct Published {
    decision: IGateSubmit::Decision,
    receipt: evm::Receipt,
}

/// The row a `Decision` publishes. `snapshot` is `abi.encode(Snapshot, Quote)`: what evaluate
/// was given, or empty when nothing was evaluated (the quote is then not logged, and the row
/// carries the one sent).
fn row_of(e: &IGateSubmit::Decision, sent: &Quote, gas_used: Option<u64>) -> Result<Row> {
    let (snapshot, logged_quote) = if e.snapshot.is_empty() {
        (None, None)
    } else {
        let (s, q) =
            <(SolSnapshot, abi::SolQuote)>::abi_decode_params(&e.snapshot).map_err(|err| {
                Error::Decode { what: "the Decision's snapshot".into(), reason: err.to_string() }
            })?;
        (Some(Snapshot::from(&s)), Some(Quote::from(&q)))
    };
    Ok(Row {
        market: e.market,
        read_block: e.readBlock,
        reason: e.reason,
        verdict: e.verdict,
        failed_mask: e.failedMask,
        snapshot,
        quote: logged_quote.unwrap_or(*sent),
        order: Order {
            price_paid: e.order.pricePaid,
            limit: e.order.limit,
            quantity: e.order.quantity,
            cost: e.order.cost,
            filled: e.order.filled,
            spent: e.order.spent,
        },
        gas_used,
    })
}

/// The compiled gate, factory, markets and collateral in revm.
pub struct EvmWorld {
    chain: RevmChain,
    now_sec: u64,
    gate: Address,
    factory: Address,
    collateral: Address,
    config: GateConfig,
    /// The reference model's account of the gate, fed by the gate's own events.
    shadow: Ledger,
    markets: BTreeMap<Address, MarketInfo>,
    approved: BTreeSet<(Address, Address)>,
    disagreements: Vec<String>,
    /// Deployed with attestors (`submitAttested` and `submitAttestedVerdicts` only).
    attested: bool,
}

/// Large enough that a maker or an attacker never runs out.
const ACTOR_FUNDS: u64 = 1_000_000_000_000_000;

/// The block both worlds start in (the contracts are deployed in it).
pub const FIRST_BLOCK: u64 = 1;

/// The prompt hash every submission of the worlds names (the gate publishes it unread).
pub const PROMPT_HASH: B256 = B256::repeat_byte(0x11);

/// The chain a relayed reference world names (anvil's default id; a relayed gate signs
/// nothing). [`ReferenceWorld::attested`] takes the chain its attestors sign for.
pub const REFERENCE_CHAIN_ID: u64 = 31_337;

/// The gas limit of a `submitVerdicts` transaction (a mainnet block's): every PASS element's
/// order must find `ORDER_GAS` and a little more left, or the whole batch reverts
/// `OrderGasShort`.
pub const BATCH_GAS_LIMIT: u64 = 30_000_000;

impl EvmWorld {
    /// Deploys `TestCollateral`, a `MarketFactory` over it and the gate with `config` (its
    /// collateral replaced by the real token), and mints `initial_collateral` to the gate.
    pub fn deploy(
        artifact: &GateArtifact,
        config: &GateConfig,
        initial_collateral: U256,
        now_sec: u64,
    ) -> Result<Self> {
        Self::deploy_with(
            artifact,
            config,
            &AttestorSetting::relayed(),
            initial_collateral,
            now_sec,
        )
    }

    /// The same, with the gate in the mode `setting` names (attested when it has signers).
    pub fn deploy_with(
        artifact: &GateArtifact,
        config: &GateConfig,
        setting: &AttestorSetting,
        initial_collateral: U256,
        now_sec: u64,
    ) -> Result<Self> {
        let mut chain = RevmChain::new();
        chain.set_time(now_sec);
        chain.set_block_number(FIRST_BLOCK);
        let collateral = match chain.deploy_from(DEPLOYER, artifact.collateral_initcode())? {
            Deployed::At(a) => a,
            got => return Err(Error::Deploy { what: "TestCollateral", got }),
        };
        let factory = match chain.deploy_from(DEPLOYER, artifact.factory_initcode(collateral))? {
            Deployed::At(a) => a,
            got => return Err(Error::Deploy { what: "MarketFactory", got }),
        };
        let config = GateConfig {
            collateral,
            factory_collateral: collateral,
            keeper: KEEPER,
            ..config.clone()
        };
        let initcode = artifact.initcode_with(&config, factory, setting);
        let gate = match chain.deploy_from(DEPLOYER, initcode)? {
            Deployed::At(a) => a,
            got => return Err(Error::Deploy { what: "RiskGate", got }),
        };
        // Minted straight to the gate: a plain transfer its first settlement counts.
        let mut shadow = Ledger::new(config.bounds);
        shadow.donate(initial_collateral);
        let mut world = Self {
            chain,
            now_sec,
            gate,
            factory,
            collateral,
            config,
            shadow,
            markets: BTreeMap::new(),
            approved: BTreeSet::new(),
            disagreements: Vec::new(),
            attested: setting.is_attested(),
        };
        world.send_ok(
            "mint to the gate",
            DEPLOYER,
            collateral,
            ITestCollateral::mintCall { to: gate, amount: initial_collateral }.abi_encode(),
        )?;
        Ok(world)
    }

    pub fn gate(&self) -> Address {
        self.gate
    }

    pub fn factory(&self) -> Address {
        self.factory
    }

    /// Moves the chain to block `number` (time stays where it is).
    pub fn set_block(&mut self, number: u64) {
        self.chain.set_block_number(number);
    }

    /// The chain itself, for a test that sends its own transactions (the shadow ledger does
    /// not see them: only calls that change nothing keep the cross-checks meaningful).
    pub fn chain_mut(&mut self) -> &mut RevmChain {
        &mut self.chain
    }

    /// The bounds the reference side of the cross-check uses (`evaluate` and the shadow
    /// ledger), which start as the deployed gate's. A test changes them to plant a disagreement
    /// and see that it is reported.
    pub fn reference_bounds_mut(&mut self) -> &mut Bounds {
        &mut self.shadow.bounds
    }

    fn send(&mut self, from: Address, to: Address, data: Vec<u8>) -> Result<evm::Receipt> {
        Ok(self.chain.send(from, to, Bytes::from(data))?)
    }

    /// A transaction the scenario needs to succeed: its return data and its receipt.
    fn send_ok(
        &mut self,
        what: &str,
        from: Address,
        to: Address,
        data: Vec<u8>,
    ) -> Result<(Bytes, evm::Receipt)> {
        let receipt = self.send(from, to, data)?;
        match &receipt.outcome {
            Outcome::Returned(ret) => Ok((ret.clone(), receipt)),
            Outcome::Reverted(d) => {
                Err(Error::Reverted { what: what.to_string(), revert: abi::describe_revert(d) })
            }
            Outcome::Halted(r) => {
                Err(Error::Reverted { what: what.to_string(), revert: r.clone() })
            }
        }
    }

    fn view<C: SolCall>(&mut self, what: &str, to: Address, call: C) -> Result<C::Return> {
        match self.chain.call(to, Bytes::from(call.abi_encode()))? {
            Outcome::Returned(d) => C::abi_decode_returns(&d)
                .map_err(|e| Error::Decode { what: what.to_string(), reason: e.to_string() }),
            Outcome::Reverted(d) => {
                Err(Error::Reverted { what: what.to_string(), revert: abi::describe_revert(&d) })
            }
            Outcome::Halted(r) => Err(Error::Reverted { what: what.to_string(), revert: r }),
        }
    }

    /// Funds `owner` once and lets `market` pull its collateral.
    fn fund(&mut self, owner: Address, market: Address) -> Result<()> {
        if self.approved.insert((owner, market)) {
            let token = self.collateral;
            self.send_ok(
                "mint to an actor",
                owner,
                token,
                ITestCollateral::mintCall { to: owner, amount: U256::from(ACTOR_FUNDS) }
                    .abi_encode(),
            )?;
            self.send_ok(
                "approve the market",
                owner,
                token,
                ITestCollateral::approveCall { spender: market, amount: U256::MAX }.abi_encode(),
            )?;
        }
        Ok(())
    }

    fn disagree(&mut self, what: String) {
        if self.disagreements.len() < 1_000 {
            self.disagreements.push(what);
        }
    }

    /// The chain's figures against the shadow ledger's.
    fn compare_state(&mut self, after: &str) -> Result<()> {
        let chain = self.state()?;
        let shadow = GateState {
            balance: self.shadow.balance,
            high_water_mark: self.shadow.high_water_mark,
            open_notional: self.shadow.open_notional,
            open_positions: self.shadow.open_positions,
            accounted_collateral: self.shadow.accounted_collateral(),
        };
        if chain != shadow {
            self.disagree(format!("after {after}: chain {chain:?}, reference {shadow:?}"));
            // Follow the chain from here, so one disagreement is reported once.
            self.shadow.balance = chain.balance;
            self.shadow.high_water_mark = chain.high_water_mark;
            self.shadow.open_notional = chain.open_notional;
            self.shadow.open_positions = chain.open_positions;
            self.shadow.accounted = chain.accounted_collateral.saturating_add(chain.open_notional);
        }
        Ok(())
    }

    /// The settlements of one call against the gate's `Donated` and `Shortfall` events: one
    /// `Donated(amount, H)` per surplus found, with that amount, and one `Shortfall` per deficit,
    /// in order; none when every settlement found the account exact.
    fn check_settlement_events(
        &mut self,
        what: &str,
        receipt: &evm::Receipt,
        found: &[Settlement],
    ) {
        let donated: Vec<U256> =
            self.events::<IRiskGate::Donated>(receipt).iter().map(|e| e.amount).collect();
        let shortfalls = self.events::<IRiskGate::Shortfall>(receipt).len();
        let expected: Vec<U256> =
            found.iter().map(|s| s.donated).filter(|d| !d.is_zero()).collect();
        let expected_shortfalls = found.iter().filter(|s| !s.shortfall.is_zero()).count();
        if donated != expected || shortfalls != expected_shortfalls {
            self.disagree(format!(
                "{what}: Donated {donated:?} and {shortfalls} Shortfall events; the reference settled {found:?}"
            ));
        }
    }

    /// Mints `amount` to `from` and lets the gate pull it (once).
    fn fund_for_deposit(&mut self, from: Address, amount: U256) -> Result<()> {
        let (token, gate) = (self.collateral, self.gate);
        self.send_ok(
            "mint to a depositor",
            from,
            token,
            ITestCollateral::mintCall { to: from, amount }.abi_encode(),
        )?;
        if self.approved.insert((from, gate)) {
            self.send_ok(
                "approve the gate",
                from,
                token,
                ITestCollateral::approveCall { spender: gate, amount: U256::MAX }.abi_encode(),
            )?;
        }
        Ok(())
    }

    /// Every `E` the gate emitted in `receipt`.
    fn events<E: SolEvent>(&self, receipt: &evm::Receipt) -> Vec<E> {
        receipt
            .logs
            .iter()
            .filter(|l| l.address == self.gate)
            .filter_map(|l| E::decode_log(l).ok())
            .map(|l| l.data)
            .collect()
    }

    /// `HighWaterMark(h)` is emitted whenever the stored H changes: when it changed, the last
    /// event carries the new value; when no event was emitted, it did not change.
    fn check_high_water_mark_events(&mut self, what: &str, receipt: &evm::Receipt, before: U256) {
        let after = self.shadow.high_water_mark;
        let events = self.events::<IRiskGate::HighWaterMark>(receipt);
        let last = events.last().map(|e| e.highWaterMark);
        let consistent = match last {
            Some(h) => h == after,
            None => before == after,
        };
        if !consistent {
            self.disagree(format!(
                "{what}: H {before} -> {after} (reference), HighWaterMark events {:?}",
                events.iter().map(|e| e.highWaterMark).collect::<Vec<_>>()
            ));
        }
    }

    /// The book and the `snapshotOf` preview of `market`, read just before a submission.
    fn read_before(&mut self, market: Address) -> Result<ReadBefore> {
        let book = self.best(market)?;
        // What the gate says it would evaluate right now, to hold against what it did.
        let preview = self.view("snapshotOf", self.gate, IRiskGate::snapshotOfCall { market })?;
        Ok(ReadBefore { book, preview: Snapshot::from(&preview) })
    }

    /// The gate's answer to a keeper's submission against the reference's admission of it
    /// (`expected`): the returned data when it went through (a disagreement if the reference
    /// refuses it), the refusal when it reverted with exactly the refusal's data (nothing may
    /// be logged or moved then), and an error for any other revert.
    fn admitted<R: Copy + std::fmt::Debug>(
        &mut self,
        what: &str,
        receipt: &evm::Receipt,
        expected: std::result::Result<(), R>,
        data_of: impl Fn(&R) -> Bytes,
    ) -> Result<std::result::Result<Bytes, R>> {
        match (&receipt.outcome, expected) {
            (Outcome::Returned(d), Ok(())) => Ok(Ok(d.clone())),
            (Outcome::Returned(d), Err(e)) => {
                self.disagree(format!("{what} went through with {e:?}; the reference refuses it"));
                Ok(Ok(d.clone()))
            }
            (Outcome::Reverted(d), Err(e)) if *d == data_of(&e) => {
                // Nothing published, nothing moved.
                if !receipt.logs.is_empty() {
                    self.disagree(format!("a refused {what} logged {:?}", receipt.logs));
                }
                self.compare_state(&format!("a refused {what}"))?;
                Ok(Err(e))
            }
            (Outcome::Reverted(d), expected) => {
                let revert = abi::describe_revert(d);
                if let Err(e) = expected {
                    self.disagree(format!("{what} reverted {revert}; the reference expects {e:?}"));
                }
                Err(Error::Reverted { what: what.into(), revert })
            }
            (Outcome::Halted(r), _) => {
                Err(Error::Reverted { what: what.into(), revert: r.clone() })
            }
        }
    }

    /// The `Decision`s a submission logged, in order, each with the logs of its own element as
    /// a receipt: everything logged after the previous `Decision` up to and including its own
    /// (the settlement's `Donated` or `Shortfall`, `HighWaterMark`, the order's transfers), as
    /// the gate publishes each decision after deciding it. Anything logged after the last
    /// `Decision` is a disagreement.
    fn decisions(&mut self, what: &str, receipt: &evm::Receipt) -> Vec<Published> {
        let mut found = Vec::new();
        let mut logs: Vec<Log> = Vec::new();
        for log in &receipt.logs {
            logs.push(log.clone());
            let decision = (log.address == self.gate)
                .then(|| IGateSubmit::Decision::decode_log(log).ok())
                .flatten();
            if let Some(d) = decision {
                let receipt = evm::Receipt {
                    outcome: receipt.outcome.clone(),
                    logs: std::mem::take(&mut logs),
                    gas_used: receipt.gas_used,
                };
                found.push(Published { decision: d.data, receipt });
            }
        }
        if !logs.is_empty() {
            self.disagree(format!("{what} logged {logs:?} after its last Decision"));
        }
        found
    }

    /// Each market's book and `snapshotOf` preview, read once before a batch.
    fn reads_before(
        &mut self,
        markets: impl Iterator<Item = Address>,
    ) -> Result<BTreeMap<Address, ReadBefore>> {
        let mut reads = BTreeMap::new();
        for market in markets {
            if let std::collections::btree_map::Entry::Vacant(e) = reads.entry(market) {
                e.insert(self.read_before(market)?);
            }
        }
        Ok(reads)
    }

    /// A batch's `Decision`s ([`EvmWorld::decisions`]): exactly one per element of `n`.
    fn batch_decisions(
        &mut self,
        what: &str,
        receipt: &evm::Receipt,
        n: usize,
    ) -> Result<Vec<Published>> {
        let published = self.decisions(what, receipt);
        if published.len() != n {
            return Err(Error::Decode {
                what: format!("the Decision events of {what}"),
                reason: format!("{} Decision logs from the gate for {n} elements", published.len()),
            });
        }
        Ok(published)
    }

    /// Holds one published decision to what the keeper sent and to the reference model, and
    /// moves the shadow ledger by it: the row the `Decision` publishes (against the `snapshotOf`
    /// preview when there is one), its market, quote, `readBlock`, prompt hash and raw answer
    /// (head, length, hash), [`EvmWorld::check_row`] against `book`, the settlement and the fill
    /// on the shadow, and the element's `HighWaterMark`, `Donated` and `Shortfall` events.
    /// `what` names the submission in disagreements; `gas_used` goes into the row.
    fn check_decision(
        &mut self,
        what: &str,
        (market, raw, read_block, quote): abi::SubmissionArgs<'_>,
        published: &Published,
        before: Before<'_>,
        gas_used: Option<u64>,
    ) -> Result<Row> {
        let e = &published.decision;
        let row = row_of(e, quote, gas_used)?;
        if row.market != market || row.quote != *quote {
            self.disagree(format!(
                "{what}: the Decision names {} and {:?}; the keeper sent {market} and {quote:?}",
                row.market, row.quote
            ));
        }
        // The block the keeper named and the prompt's hash, published verbatim.
        if e.readBlock != read_block || e.promptHash != PROMPT_HASH {
            self.disagree(format!(
                "{what}: the Decision publishes readBlock {} and promptHash {}; the keeper sent {read_block} and {PROMPT_HASH}",
                e.readBlock, e.promptHash
            ));
        }
        // The raw answer is logged as its head, its length and its hash.
        let head = &raw[..raw.len().min(64)];
        if e.rawHead.as_ref() != head
            || e.rawLength != U256::from(raw.len())
            || e.rawHash != keccak256(raw)
        {
            self.disagree(format!(
                "{what}: the Decision's raw answer {:?}, {}, {}",
                e.rawHead, e.rawLength, e.rawHash
            ));
        }
        self.follow_decision(what, &row, published, before);
        Ok(row)
    }

    /// What every published decision is held to, relayed or attested, and the shadow ledger
    /// moved by it: the snapshot against the `snapshotOf` preview when there is one, the
    /// settlement a buy makes, [`EvmWorld::check_row`] against the book read before, the fill,
    /// and the element's `HighWaterMark`, `Donated` and `Shortfall` events.
    fn follow_decision(
        &mut self,
        what: &str,
        row: &Row,
        published: &Published,
        before: Before<'_>,
    ) {
        if let (Some(s), Some(preview)) = (&row.snapshot, before.preview) {
            if preview != s {
                self.disagree(format!("{what}: snapshotOf said {preview:?}; the gate read {s:?}"));
            }
        }
        let h_before = self.shadow.high_water_mark;
        let mut settled = Vec::new();
        if matches!(row.verdict, 1 | 2) {
            settled.push(self.shadow.settle());
        }
        self.check_row(what, row, before.book);
        if row.reason == 0 {
            let (filled, spent) = (row.order.filled, row.order.spent);
            self.shadow.apply_fill(row.market, row.verdict == 1, filled, spent);
        }
        self.check_high_water_mark_events(what, &published.receipt, h_before);
        self.check_settlement_events(what, &published.receipt, &settled);
    }

    /// The factory's promises about a market it made: one `MarketCreated` with every argument,
    /// the next index, the sender as creator and the question's exact text, and the market's
    /// `questionHash()` equal to keccak256 of that text (and the question one the reference
    /// accepts).
    fn check_market_created(
        &mut self,
        creator: Address,
        spec: &MarketSpec,
        market: Address,
        receipt: &evm::Receipt,
        expected_hash: std::result::Result<B256, model::QuestionError>,
    ) -> Result<()> {
        let factory = self.factory;
        let created: Vec<IMarketFactory::MarketCreated> = receipt
            .logs
            .iter()
            .filter(|l| l.address == factory)
            .filter_map(|l| IMarketFactory::MarketCreated::decode_log(l).ok())
            .map(|l| l.data)
            .collect();
        let index = U256::from(self.markets.len());
        let event_ok = matches!(created.as_slice(), [e] if
            (e.market, e.index, e.tickSize, e.lotSize, e.minQuantity, e.expiry, e.resolver, e.creator)
                == (market, index, U256::from(spec.tick), spec.lot, spec.min_quantity, spec.expiry_sec, spec.resolver, creator)
                && e.question == spec.question);
        if !event_ok {
            self.disagree(format!(
                "createMarket({spec:?}) by {creator} emitted {created:?}; the reference expects market {market} at index {index}"
            ));
        }
        let hash = self.view("questionHash", market, IMarketQuestion::questionHashCall {})?;
        if hash != keccak256(spec.question.as_bytes()) || expected_hash != Ok(hash) {
            self.disagree(format!(
                "questionHash() of {market} is {hash}; the question {:?} of {} bytes hashes to {} (reference: {expected_hash:?})",
                spec.question,
                spec.question.len(),
                keccak256(spec.question.as_bytes())
            ));
        }
        Ok(())
    }

    /// Holds one decision to the reference model: the snapshot's gate fields against the
    /// shadow ledger (H raised first), the outputs against `model::evaluate`, the limit against
    /// `model::order_limit`, and rule 18 against `model::fill_below_minimum`.
    /// `what` names the submission in disagreements.
    /// `book` is `(bestBid, bestAsk)` read from the market just before the submission; `None`
    /// when no read describes the book the decision met (a batch element whose market an
    /// earlier element bought from), and then only those two fields are not compared.
    fn check_row(&mut self, what: &str, row: &Row, book: Option<(u64, u64)>) {
        let bounds = self.shadow.bounds;
        let Some(s) = row.snapshot else {
            // Nothing evaluated: an ABSTAIN (1), or no verdict: an answer that did not parse
            // (11) on a relayed gate; on an attested one, answers not attested (21) or no
            // single verdict reached k (22).
            let expected: &[u8] = match (row.verdict, self.attested) {
                (0, _) => &[1],
                (_, false) => &[model::REASON_INVALID_VERDICT],
                (_, true) => &[REASON_NOT_ATTESTED, REASON_ATTESTORS_DISAGREE],
            };
            let mask_ok = row.failed_mask == 1u32.checked_shl(row.reason.into()).unwrap_or(0);
            if !expected.contains(&row.reason) || !mask_ok || row.order != Order::default() {
                self.disagree(format!("{what}: a row without a snapshot: {row:?}"));
            }
            return;
        };
        let position = self.shadow.position(row.market);
        let gate_fields = (
            s.open_positions,
            s.open_notional,
            s.collateral_available,
            s.held_side,
            s.high_water_mark,
        );
        let shadow_fields = (
            self.shadow.open_positions,
            self.shadow.open_notional,
            self.shadow.balance,
            position.held_side(),
            self.shadow.high_water_mark,
        );
        if gate_fields != shadow_fields {
            self.disagree(format!(
                "{what}: snapshot's (openPositions, openNotional, collateral, heldSide, H) {gate_fields:?}, reference {shadow_fields:?}"
            ));
        }
        if let Some(info) = self.markets.get(&row.market).copied() {
            let trusted = self.config.trusted_resolvers.contains(&info.resolver);
            let creator_trusted = self.config.trusted_creators.contains(&info.creator);
            let market_fields = (
                s.best_bid,
                s.best_ask,
                s.tick_size,
                s.lot_size,
                s.min_quantity,
                s.resolver_trusted,
                s.creator_trusted,
                s.expiry_sec,
                s.finalized,
                s.now_sec,
            );
            let (bid, ask) =
                book.map_or((s.best_bid, s.best_ask), |(b, a)| (U256::from(b), U256::from(a)));
            let expected = (
                bid,
                ask,
                U256::from(info.tick),
                info.lot,
                info.min_quantity,
                trusted,
                creator_trusted,
                info.expiry_sec,
                info.finalized,
                self.now_sec,
            );
            if market_fields != expected {
                self.disagree(format!(
                    "{what}: snapshot's market fields {market_fields:?}, reference {expected:?}"
                ));
            }
        }
        let d = model::evaluate(&bounds, &s, &row.quote, row.verdict);
        let verdict = if row.verdict == 1 { Verdict::BuyUp } else { Verdict::BuyDown };
        let limit = model::order_limit(&bounds, &s, &row.quote, verdict).unwrap_or_default();
        let o = row.order;
        let kept_or_undone = (o.price_paid, o.limit, o.quantity, o.cost);
        let expected_order = (d.price_paid, limit, d.quantity, d.cost);
        let agrees = match row.reason {
            model::REASON_FILL_BELOW_MINIMUM => {
                d.accepted()
                    && row.failed_mask == 1 << model::REASON_FILL_BELOW_MINIMUM
                    && kept_or_undone == expected_order
                    && model::fill_below_minimum(&bounds, o.quantity, o.filled)
            }
            0 => {
                d.accepted()
                    && row.failed_mask == 0
                    && kept_or_undone == expected_order
                    && !model::fill_below_minimum(&bounds, o.quantity, o.filled)
            }
            _ => {
                row.reason == d.reason && row.failed_mask == d.failed_mask && o == Order::default()
            }
        };
        if !agrees {
            self.disagree(format!(
                "{what}: decision {row:?}: reference evaluate {d:?} with limit {limit}"
            ));
        }
    }
}

fn refusal_of(data: &[u8]) -> Option<Refusal> {
    use IRiskGate::IRiskGateErrors as E;
    Some(match E::abi_decode(data).ok()? {
        E::NoOpenPosition(_) => Refusal::NoOpenPosition,
        E::MarketNotFinal(_) => Refusal::MarketNotFinal,
        E::MarketRedeemable(_) => Refusal::MarketRedeemable,
        E::DepositZero(_) => Refusal::DepositZero,
        E::WithdrawExceedsBalance(_) => Refusal::WithdrawExceedsBalance,
        E::AlreadyWrittenOff(_) => Refusal::AlreadyWrittenOff,
        E::WriteOffTooEarly(e) => Refusal::WriteOffTooEarly {
            allowed_after_sec: u64::try_from(e.allowedAfterSec).unwrap_or(u64::MAX),
        },
        _ => return None,
    })
}

impl World for EvmWorld {
    fn backend(&self) -> &'static str {
        "compiled contracts in revm"
    }

    fn now(&self) -> u64 {
        self.now_sec
    }

    fn block(&self) -> u64 {
        self.chain.block_number()
    }

    fn set_time(&mut self, now_sec: u64) {
        self.now_sec = now_sec;
        self.chain.set_time(now_sec);
        let next = self.chain.block_number().saturating_add(1);
        self.chain.set_block_number(next);
    }

    fn create_market(&mut self, creator: Address, spec: &MarketSpec) -> Result<Address> {
        let question = spec.question.as_bytes();
        let expected_hash = model::question_hash(question);
        let data = abi::create_market_calldata(
            question,
            U256::from(spec.tick),
            spec.lot,
            spec.min_quantity,
            spec.expiry_sec,
            spec.resolver,
        );
        let factory = self.factory;
        let receipt = self.send(creator, factory, data.to_vec())?;
        let data = match (&receipt.outcome, expected_hash) {
            (Outcome::Returned(d), _) => d.clone(),
            (Outcome::Reverted(d), Err(e)) if *d == abi::question_error_data(&e) => {
                return Err(Error::Venue {
                    what: "createMarket".into(),
                    error: VenueError::Question(e),
                });
            }
            (Outcome::Reverted(d), _) => {
                if let Err(e) = expected_hash {
                    self.disagree(format!(
                        "createMarket refused a question of {} bytes with {}; the reference expects {e:?}",
                        question.len(),
                        abi::describe_revert(d)
                    ));
                }
                let revert = abi::describe_revert(d);
                return Err(Error::Reverted { what: "createMarket".into(), revert });
            }
            (Outcome::Halted(r), _) => {
                return Err(Error::Reverted { what: "createMarket".into(), revert: r.clone() })
            }
        };
        let market = IMarketFactory::createMarketCall::abi_decode_returns(&data).map_err(|e| {
            Error::Decode { what: "createMarket's return".into(), reason: e.to_string() }
        })?;
        self.check_market_created(creator, spec, market, &receipt, expected_hash)?;
        // The factory records who sent createMarket (issue 14).
        let recorded = self.view("creatorOf", factory, IMarketFactory::creatorOfCall { market })?;
        if recorded != creator {
            self.disagree(format!("creatorOf({market}) is {recorded}; {creator} created it"));
        }
        self.markets.insert(
            market,
            MarketInfo {
                tick: spec.tick,
                lot: spec.lot,
                min_quantity: spec.min_quantity,
                expiry_sec: spec.expiry_sec,
                resolver: spec.resolver,
                creator,
                finalized: false,
                up_won: false,
            },
        );
        Ok(market)
    }

    fn place(
        &mut self,
        market: Address,
        owner: Address,
        is_bid: bool,
        price: u64,
        quantity: U256,
    ) -> Result<u64> {
        self.fund(owner, market)?;
        let price = U256::from(price);
        let data = if is_bid {
            IBinaryMarket::placeBidCall { price, quantity }.abi_encode()
        } else {
            IBinaryMarket::placeAskCall { price, quantity }.abi_encode()
        };
        let (ret, _) = self.send_ok("placing an order", owner, market, data)?;
        let id = U256::abi_decode(&ret)
            .map_err(|e| Error::Decode { what: "an order id".into(), reason: e.to_string() })?;
        Ok(u64::try_from(id).unwrap_or(u64::MAX))
    }

    fn take(
        &mut self,
        market: Address,
        taker: Address,
        buy_up: bool,
        up_limit: u64,
        quantity: U256,
    ) -> Result<(U256, U256)> {
        self.fund(taker, market)?;
        let limit = U256::from(up_limit);
        let data = if buy_up {
            IBinaryMarket::buyUpCall { limitPrice: limit, quantity }.abi_encode()
        } else {
            IBinaryMarket::buyDownCall { upLimitPrice: limit, quantity }.abi_encode()
        };
        let (ret, _) = self.send_ok("an immediate-or-cancel buy", taker, market, data)?;
        <(U256, U256)>::abi_decode_params(&ret)
            .map_err(|e| Error::Decode { what: "a buy's return".into(), reason: e.to_string() })
    }

    fn best(&mut self, market: Address) -> Result<(u64, u64)> {
        let bid = self.view("bestBid", market, IBinaryMarket::bestBidCall {})?;
        let ask = self.view("bestAsk", market, IBinaryMarket::bestAskCall {})?;
        let n = |v: U256| u64::try_from(v).unwrap_or(u64::MAX);
        Ok((n(bid), n(ask)))
    }

    fn submit(
        &mut self,
        market: Address,
        raw: &[u8],
        read_block: u64,
        quote: &Quote,
    ) -> Result<std::result::Result<Row, ReadBlockInFuture>> {
        let gate = self.gate;
        let before = self.read_before(market)?;
        let expected = model::check_read_block(read_block, self.block());
        let data = abi::submit_verdict_calldata(market, raw, PROMPT_HASH, read_block, quote);
        let receipt = self.send(KEEPER, gate, data.to_vec())?;
        let what = "submitVerdict";
        if let Err(e) = self.admitted(what, &receipt, expected, abi::read_block_in_future_data)? {
            return Ok(Err(e));
        }
        let published = match <[Published; 1]>::try_from(self.decisions(what, &receipt)) {
            Ok([p]) => p,
            Err(found) => {
                return Err(Error::Decode {
                    what: "the Decision event of submitVerdict".into(),
                    reason: format!("{} Decision logs from the gate, not one", found.len()),
                })
            }
        };
        let before = Before { book: Some(before.book), preview: Some(&before.preview) };
        let sent = (market, raw, read_block, quote);
        let row = self.check_decision(what, sent, &published, before, Some(receipt.gas_used))?;
        self.compare_state(what)?;
        Ok(Ok(row))
    }

    fn submit_batch(&mut self, items: &[BatchItem]) -> Result<BatchOutcome> {
        let gate = self.gate;
        let block = self.block();
        let known = &self.markets;
        let expected = admit_batch(items, block, |m| known.contains_key(m))?;
        let reads = self.reads_before(items.iter().map(|it| it.market))?;
        let data = abi::submit_verdicts_calldata(items.iter().map(BatchItem::args), PROMPT_HASH);
        let receipt = self.chain.send_with_gas_limit(KEEPER, gate, data, BATCH_GAS_LIMIT)?;
        let what = "submitVerdicts";
        let returned = match self.admitted(what, &receipt, expected, batch_refusal_data)? {
            Ok(d) => d,
            Err(refusal) => return Ok(Err(refusal)),
        };
        let reasons =
            IGateSubmit::submitVerdictsCall::abi_decode_returns(&returned).map_err(|e| {
                Error::Decode { what: "submitVerdicts' return".into(), reason: e.to_string() }
            })?;
        let published = self.batch_decisions(what, &receipt, items.len())?;
        let mut bought: BTreeSet<Address> = BTreeSet::new();
        let mut rows = Vec::with_capacity(items.len());
        for (i, (item, p)) in items.iter().zip(&published).enumerate() {
            let before = Before::in_batch(&reads, &bought, item.market);
            let element = format!("submitVerdicts element {i}");
            let row = self.check_decision(&element, item.args(), p, before, None)?;
            if row.reason == 0 {
                bought.insert(item.market);
            }
            rows.push(row);
        }
        let published_reasons: Vec<u8> = rows.iter().map(|r| r.reason).collect();
        if reasons != published_reasons {
            self.disagree(format!(
                "submitVerdicts returned reasons {reasons:?}; its Decisions publish {published_reasons:?}"
            ));
        }
        self.compare_state(what)?;
        Ok(Ok(BatchRows { rows, gas_used: Some(receipt.gas_used) }))
    }

    fn resolve(&mut self, market: Address, caller: Address, up_won: bool) -> Result<()> {
        self.send_ok(
            "resolve",
            caller,
            market,
            IBinaryMarket::resolveCall { upWon: up_won }.abi_encode(),
        )?;
        if let Some(info) = self.markets.get_mut(&market) {
            info.finalized = true;
            info.up_won = up_won;
        }
        Ok(())
    }

    fn redeem(&mut self, market: Address) -> Result<std::result::Result<U256, Refusal>> {
        let gate = self.gate;
        let receipt = self.send(ANYONE, gate, IRiskGate::redeemCall { market }.abi_encode())?;
        let info = self.markets.get(&market).copied();
        let (finalized, up_won) = info.map_or((false, false), |m| (m.finalized, m.up_won));
        let h_before = self.shadow.high_water_mark;
        let result = match &receipt.outcome {
            Outcome::Returned(d) => {
                let payout = U256::abi_decode(d).map_err(|e| Error::Decode {
                    what: "redeem's return".into(),
                    reason: e.to_string(),
                })?;
                // The winning units, and a Settled event that says so.
                let p = self.shadow.position(market);
                let expected = if up_won { p.up_units } else { p.down_units };
                let settled = self.events::<IRiskGate::Settled>(&receipt);
                let event_ok = matches!(settled.as_slice(), [e] if (e.market, e.upWon, e.upUnits, e.downUnits, e.notional, e.payout)
                    == (market, up_won, p.up_units, p.down_units, p.notional, payout));
                if payout != expected || !event_ok {
                    self.disagree(format!(
                        "redeem({market}) paid {payout} with {settled:?}; the reference pays {expected} for {p:?}"
                    ));
                }
                match self.shadow.redeem(market, finalized, payout) {
                    Ok((before, after)) => {
                        self.check_settlement_events("redeem", &receipt, &[before, after]);
                    }
                    Err(r) => self.disagree(format!(
                        "redeem({market}) paid {payout}; the reference refuses {r:?}"
                    )),
                }
                self.check_high_water_mark_events("redeem", &receipt, h_before);
                Ok(payout)
            }
            Outcome::Reverted(d) => {
                let refusal = refusal_of(d).ok_or_else(|| Error::Reverted {
                    what: "redeem".into(),
                    revert: abi::describe_revert(d),
                })?;
                let mut probe = self.shadow.clone();
                if probe.redeem(market, finalized, U256::ZERO).is_ok() {
                    self.disagree(format!(
                        "redeem({market}) refused {refusal:?}; the reference redeems"
                    ));
                }
                Err(refusal)
            }
            Outcome::Halted(r) => {
                return Err(Error::Reverted { what: "redeem".into(), revert: r.clone() })
            }
        };
        self.compare_state("redeem")?;
        Ok(result)
    }

    fn write_off(&mut self, market: Address) -> Result<std::result::Result<(), Refusal>> {
        let gate = self.gate;
        let receipt = self.send(ANYONE, gate, IRiskGate::writeOffCall { market }.abi_encode())?;
        let info = self.markets.get(&market).copied();
        let (expiry, finalized) = info.map_or((0, false), |m| (m.expiry_sec, m.finalized));
        let h_before = self.shadow.high_water_mark;
        // The real venue pays a final market's winners in TestCollateral: a final market is
        // redeemable here.
        let probe = self.shadow.clone();
        let expected = self.shadow.write_off(market, self.now_sec, expiry, finalized, true);
        if expected.is_ok() {
            let mut settled = probe;
            let s = settled.settle();
            self.check_settlement_events("writeOff", &receipt, &[s]);
        }
        if let Ok(p) = &expected {
            let events = self.events::<IRiskGate::WrittenOff>(&receipt);
            let event_ok = matches!(events.as_slice(), [e] if (e.market, e.upUnits, e.downUnits, e.notional, e.expiry)
                == (market, p.up_units, p.down_units, p.notional, expiry));
            if !event_ok {
                self.disagree(format!(
                    "writeOff({market}) emitted {events:?}; the reference wrote off {p:?}"
                ));
            }
        }
        self.check_high_water_mark_events("writeOff", &receipt, h_before);
        let expected = expected.map(|_| ());
        let got = match &receipt.outcome {
            Outcome::Returned(_) => Ok(()),
            Outcome::Reverted(d) => Err(refusal_of(d).ok_or_else(|| Error::Reverted {
                what: "writeOff".into(),
                revert: abi::describe_revert(d),
            })?),
            Outcome::Halted(r) => {
                return Err(Error::Reverted { what: "writeOff".into(), revert: r.clone() })
            }
        };
        // Too early and redeemable at once: the specification does not say which is named.
        let either = |r: &std::result::Result<(), Refusal>| {
            matches!(r, Err(Refusal::WriteOffTooEarly { .. } | Refusal::MarketRedeemable))
        };
        let both_apply = finalized && either(&got) && either(&expected);
        if got != expected && !both_apply {
            self.disagree(format!("writeOff({market}): chain {got:?}, reference {expected:?}"));
        }
        self.compare_state("writeOff")?;
        Ok(got)
    }

    fn withdraw(&mut self, amount: U256) -> Result<()> {
        let gate = self.gate;
        let call = IRiskGate::withdrawCollateralCall { to: DEPLOYER, amount };
        let (_, receipt) = self.send_ok("withdrawCollateral", DEPLOYER, gate, call.abi_encode())?;
        let h_before = self.shadow.high_water_mark;
        match self.shadow.withdraw(amount) {
            Ok(s) => self.check_settlement_events("withdrawCollateral", &receipt, &[s]),
            Err(r) => self.disagree(format!(
                "withdrawCollateral({amount}) went through; the reference refuses {r:?}"
            )),
        }
        self.check_high_water_mark_events("withdrawCollateral", &receipt, h_before);
        self.compare_state("withdrawCollateral")
    }

    fn deposit(
        &mut self,
        from: Address,
        amount: U256,
    ) -> Result<std::result::Result<U256, Refusal>> {
        let gate = self.gate;
        if !amount.is_zero() {
            self.fund_for_deposit(from, amount)?;
        }
        let balance_before = self.state()?.balance;
        let receipt = self.send(from, gate, IRiskGate::depositCall { amount }.abi_encode())?;
        let h_before = self.shadow.high_water_mark;
        let result = match &receipt.outcome {
            Outcome::Returned(_) => {
                let received = self.state()?.balance.saturating_sub(balance_before);
                match self.shadow.deposit(amount, received) {
                    Ok(s) => self.check_settlement_events("deposit", &receipt, &[s]),
                    Err(r) => self.disagree(format!(
                        "deposit({amount}) went through; the reference refuses {r:?}"
                    )),
                }
                // Deposited(from, what arrived, H after).
                let h = self.shadow.high_water_mark;
                let events = self.events::<IRiskGate::Deposited>(&receipt);
                let event_ok = matches!(events.as_slice(), [e] if (e.from, e.amount, e.highWaterMark) == (from, received, h));
                if !event_ok {
                    self.disagree(format!(
                        "deposit({amount}) from {from} emitted {events:?}; the reference expects ({from}, {received}, {h})"
                    ));
                }
                Ok(received)
            }
            Outcome::Reverted(d) => {
                let refusal = refusal_of(d).ok_or_else(|| Error::Reverted {
                    what: "deposit".into(),
                    revert: abi::describe_revert(d),
                })?;
                if self.shadow.clone().deposit(amount, U256::ZERO).is_ok() {
                    self.disagree(format!(
                        "deposit({amount}) refused {refusal:?}; the reference takes it"
                    ));
                }
                Err(refusal)
            }
            Outcome::Halted(r) => {
                return Err(Error::Reverted { what: "deposit".into(), revert: r.clone() })
            }
        };
        self.check_high_water_mark_events("deposit", &receipt, h_before);
        self.compare_state("deposit")?;
        Ok(result)
    }

    fn donate(&mut self, from: Address, amount: U256) -> Result<()> {
        let (token, gate) = (self.collateral, self.gate);
        self.send_ok(
            "mint to a treasury",
            from,
            token,
            ITestCollateral::mintCall { to: from, amount }.abi_encode(),
        )?;
        self.send_ok(
            "a plain transfer to the gate",
            from,
            token,
            ITestCollateral::transferCall { to: gate, amount }.abi_encode(),
        )?;
        self.shadow.donate(amount);
        self.compare_state("a plain transfer")
    }

    fn state(&mut self) -> Result<GateState> {
        let (gate, token) = (self.gate, self.collateral);
        Ok(GateState {
            balance: self.view(
                "balanceOf",
                token,
                ITestCollateral::balanceOfCall { holder: gate },
            )?,
            high_water_mark: self.view("highWaterMark", gate, IRiskGate::highWaterMarkCall {})?,
            open_notional: self.view("openNotional", gate, IRiskGate::openNotionalCall {})?,
            open_positions: self.view("openPositions", gate, IRiskGate::openPositionsCall {})?,
            accounted_collateral: self.view(
                "accountedCollateral",
                gate,
                IRiskGate::accountedCollateralCall {},
            )?,
        })
    }

    fn position(&mut self, market: Address) -> Result<Position> {
        let gate = self.gate;
        let p = self.view("positionOf", gate, IRiskGate::positionOfCall { market })?;
        Ok(Position {
            up_units: p.upUnits,
            down_units: p.downUnits,
            notional: p.notional,
            written_off: p.writtenOff,
        })
    }

    fn disagreements(&self) -> &[String] {
        &self.disagreements
    }
}

/// A world of either kind for `config`.
pub fn open(
    artifact: Option<&GateArtifact>,
    config: &GateConfig,
    initial_collateral: U256,
    now_sec: u64,
) -> Result<Box<dyn World>> {
    Ok(match artifact {
        None => Box::new(ReferenceWorld::new(config, initial_collateral, now_sec)),
        Some(a) => Box::new(EvmWorld::deploy(a, config, initial_collateral, now_sec)?),
    })
}
