//! The reference model of RiskGate v2.1: `parseVerdict`, `evaluate`, the order's limit and the
//! constructor's checks, written from the specification (issues 7 and 14 and the NatSpec of
//! `IRiskGate.sol`), not from the Solidity. Exact integer arithmetic only (256-bit values,
//! 512-bit sums and products wherever one can exceed 2^256). It must never panic, whatever the
//! input: a panic here would hide a disagreement with the contract instead of reporting it.

use alloy::primitives::{keccak256, Address, B256, U256, U512};
use rust_decimal::Decimal;

/// 1.0 as a probability in 1e6 units.
pub const PRICE_ONE: u64 = 1_000_000;
/// The constant floor under `minHeadroom`, in seconds.
pub const MIN_HEADROOM_FLOOR_SECS: u32 = 120;
/// The constant floor under `writeOffGrace`, in seconds.
pub const WRITE_OFF_GRACE_FLOOR_SECS: u32 = 3_600;
/// The most trusted resolvers a gate takes.
pub const MAX_TRUSTED_RESOLVERS: usize = 8;
/// The most trusted creators a gate takes (issue 14: the same rules as the resolvers).
pub const MAX_TRUSTED_CREATORS: usize = 8;
/// The most resting orders one immediate-or-cancel take matches on the venue
/// (`IBinaryMarket.MAX_MATCHES_PER_TAKE`); rule 20 is written against it.
pub const MAX_MATCHES_PER_TAKE: u64 = 64;
/// Basis points in 1 (`minFillBps` is in these).
pub const BPS: u16 = 10_000;
/// Answers longer than this are refused before any trimming.
pub const MAX_ANSWER_LEN: usize = 64;
/// The bytes trimmed from both ends of an answer, repeatedly.
pub const TRIM_BYTES: [u8; 6] = [b' ', b'\t', b'\n', b'\r', b'"', b'\''];

/// Reason 11 (and verdict 255 in the `Decision` event): the answer was not a valid verdict.
pub const REASON_INVALID_VERDICT: u8 = 11;
/// Reason 18 is decided by `submitVerdict` after the market call, never by `evaluate`.
pub const REASON_FILL_BELOW_MINIMUM: u8 = 18;
/// Reason 19 (issue 14): the factory's `creatorOf(market)` is not a trusted creator.
pub const REASON_CREATOR_NOT_TRUSTED: u8 = 19;
/// Reason 20 (issue 14): one IOC cannot reach the minimum fill within the venue's match cap.
pub const REASON_MATCH_CAP: u8 = 20;
/// How many reason codes the gate publishes (0..=24).
pub const REASON_COUNT: usize = 25;

/// Reason codes and labels, verbatim from the specification (0-11 from v1, 12-18 from issue 7,
/// 19-20 from issue 14, 21-22 from issue 35: an attested gate's, which the model's relayed
/// gate never publishes; 23 from issue 36: a consensus gate's; 24 from issue 37: a batch
/// element whose order failed at the market).
pub const REASON_LABELS: [&str; REASON_COUNT] = [
    "PASS",
    "model abstained",
    "market finalized",
    "expiry headroom too short",
    "no resting liquidity on the side needed",
    "price outside allowed band",
    "size snapped to zero on the lot grid",
    "size below venue minimum",
    "max concurrent positions reached",
    "max notional at risk reached",
    "insufficient collateral",
    "model output not a valid verdict",
    "market resolver not trusted",
    "expiry too far out",
    "max drawdown reached",
    "book moved past the quoted limit",
    "verdict expired",
    "opposite side already held",
    "fill below minimum",
    "market creator not trusted",
    "minimum fill beyond the venue's match cap",
    "answer not attested",
    "attestors disagree",
    "no consensus in time",
    "order failed at the market",
];

/// The label of a reason code, `None` for a code the gate never publishes.
pub fn reason_label(reason: u8) -> Option<&'static str> {
    REASON_LABELS.get(usize::from(reason)).copied()
}

/// The gate's bounds (`IRiskGate.Params`), fixed at deploy.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Bounds {
    pub min_price: U256,
    pub max_price: U256,
    pub max_size: U256,
    pub min_headroom_secs: u32,
    pub max_concurrent: u8,
    pub max_notional: U256,
    /// The longest `expiry - now` accepted.
    pub max_horizon_secs: u32,
    /// Collateral units the balance may fall below the high-water mark.
    pub max_drawdown: U256,
    /// Seconds after expiry before an unresolved position may be written off.
    pub write_off_grace_secs: u32,
    /// The smallest fill kept, in basis points of the order's quantity.
    pub min_fill_bps: u16,
}

/// The sides a position can hold, as `Snapshot.heldSide` codes them.
pub const HELD_NONE: u8 = 0;
pub const HELD_UP: u8 = 1;
pub const HELD_DOWN: u8 = 2;

/// What `evaluate` looks at (`IRiskGate.Snapshot`). Bids and asks are UP prices on one book.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Snapshot {
    pub best_bid: U256,
    pub best_ask: U256,
    pub tick_size: U256,
    pub lot_size: U256,
    pub min_quantity: U256,
    pub expiry_sec: u64,
    pub now_sec: u64,
    pub finalized: bool,
    pub open_positions: u8,
    pub open_notional: U256,
    pub collateral_available: U256,
    pub resolver_trusted: bool,
    /// 0 none, 1 UP, 2 DOWN; any other value fails rule 17 for both sides.
    pub held_side: u8,
    pub high_water_mark: U256,
    /// The factory's `creatorOf(market)` is one of the trusted creators (issue 14).
    pub creator_trusted: bool,
}

/// The keeper's bound on one answer (`IRiskGate.Quote`). It can only tighten the order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Quote {
    /// The worst price accepted for the token bought, 1e6 units.
    pub max_price_paid: U256,
    /// Chain time after which the answer is stale.
    pub deadline_sec: u64,
}

/// The three answers a model may give.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Verdict {
    Abstain = 0,
    BuyUp = 1,
    BuyDown = 2,
}

impl Verdict {
    pub const fn code(self) -> u8 {
        self as u8
    }

    pub const fn token(self) -> &'static str {
        match self {
            Self::Abstain => "ABSTAIN",
            Self::BuyUp => "BUY_UP",
            Self::BuyDown => "BUY_DOWN",
        }
    }

    pub const ALL: [Self; 3] = [Self::Abstain, Self::BuyUp, Self::BuyDown];
}

/// `UnknownVerdict(uint256 length, bytes32 head)`: the raw length and the first 32 raw bytes,
/// right-padded with zeros.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct UnknownVerdict {
    pub length: usize,
    pub head: [u8; 32],
}

impl UnknownVerdict {
    fn of(raw: &[u8]) -> Self {
        let mut head = [0u8; 32];
        let n = raw.len().min(32);
        head[..n].copy_from_slice(&raw[..n]);
        Self { length: raw.len(), head }
    }
}

/// The strict parse: refuse anything longer than 64 bytes, trim exactly the six `TRIM_BYTES`
/// from both ends repeatedly, then match one token exactly and case-sensitively.
pub fn parse_verdict(raw: &[u8]) -> Result<Verdict, UnknownVerdict> {
    if raw.len() > MAX_ANSWER_LEN {
        return Err(UnknownVerdict::of(raw));
    }
    let mut start = 0;
    let mut end = raw.len();
    while start < end && TRIM_BYTES.contains(&raw[start]) {
        start += 1;
    }
    while end > start && TRIM_BYTES.contains(&raw[end - 1]) {
        end -= 1;
    }
    let core = &raw[start..end];
    Verdict::ALL.into_iter().find(|v| v.token().as_bytes() == core).ok_or(UnknownVerdict::of(raw))
}

/// The five outputs of `evaluate`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct Decision {
    pub reason: u8,
    pub failed_mask: u32,
    pub price_paid: U256,
    pub quantity: U256,
    pub cost: U256,
}

impl Decision {
    fn refused(code: u8) -> Self {
        Self { reason: code, failed_mask: 1 << code, ..Self::default() }
    }

    pub fn accepted(&self) -> bool {
        self.reason == 0
    }
}

/// `value` rounded up onto a grid of `step` (0 = no grid), saturating at 2^256 - 1 (a step
/// larger than the room left above `value` rounds to the top).
pub fn round_up_to_grid(value: U256, step: U256) -> U256 {
    if step.is_zero() {
        return value;
    }
    let rem = value % step;
    if rem.is_zero() {
        value
    } else {
        (value - rem).saturating_add(step)
    }
}

/// `value` rounded down onto a grid of `step` (0 = no grid).
pub fn round_down_to_grid(value: U256, step: U256) -> U256 {
    if step.is_zero() {
        value
    } else {
        value - value % step
    }
}

/// The price paid per unit of the token bought, `None` when the side needed is empty.
/// BUY_UP lifts the ask rounded up onto the tick grid; BUY_DOWN hits the bid rounded down and
/// pays the complement. A book value >= 1e6 is not rounded: BUY_UP pays it as it stands,
/// BUY_DOWN pays `1e6 - bid` saturated at 0.
pub fn price_paid(snapshot: &Snapshot, verdict: Verdict) -> Option<U256> {
    let one = U256::from(PRICE_ONE);
    match verdict {
        Verdict::Abstain => None,
        Verdict::BuyUp => {
            let ask = snapshot.best_ask;
            if ask.is_zero() {
                None
            } else if ask >= one {
                Some(ask)
            } else {
                Some(round_up_to_grid(ask, snapshot.tick_size))
            }
        }
        Verdict::BuyDown => {
            let bid = snapshot.best_bid;
            if bid.is_zero() {
                None
            } else if bid >= one {
                Some(U256::ZERO)
            } else {
                Some(one.saturating_sub(round_down_to_grid(bid, snapshot.tick_size)))
            }
        }
    }
}

/// The order's limit for the token bought: `L = min(maxPrice, maxPricePaid)` put on the tick
/// grid in the direction that tightens. BUY_UP: L rounded down. BUY_DOWN: the UP price the
/// market gets, `1e6 - L`, rounded up, and the limit is its complement, saturating at 0 (so the
/// UP price `1e6 - limit` is on the grid whenever the limit is above 0). `None` for ABSTAIN.
pub fn order_limit(
    bounds: &Bounds,
    snapshot: &Snapshot,
    quote: &Quote,
    verdict: Verdict,
) -> Option<U256> {
    let one = U256::from(PRICE_ONE);
    let l = bounds.max_price.min(quote.max_price_paid);
    match verdict {
        Verdict::Abstain => None,
        Verdict::BuyUp => Some(round_down_to_grid(l, snapshot.tick_size)),
        Verdict::BuyDown => {
            Some(one.saturating_sub(round_up_to_grid(one.saturating_sub(l), snapshot.tick_size)))
        }
    }
}

/// `maxSize` rounded down onto the lot grid.
pub fn order_quantity(bounds: &Bounds, snapshot: &Snapshot) -> U256 {
    round_down_to_grid(bounds.max_size, snapshot.lot_size)
}

/// `ceil(quantity * price / 1e6)`, saturating at 2^256 - 1.
pub fn cost_ceil(quantity: U256, price: U256) -> U256 {
    let product = U512::from(quantity) * U512::from(price);
    let one = U512::from(PRICE_ONE);
    let (q, r) = product.div_rem(one);
    let ceil = if r.is_zero() { q } else { q + U512::from(1u8) };
    narrow_saturating(ceil)
}

/// A 512-bit value as 256 bits, saturating at 2^256 - 1.
pub fn narrow_saturating(v: U512) -> U256 {
    let limbs = v.as_limbs();
    if limbs[4..].iter().any(|&l| l != 0) {
        U256::MAX
    } else {
        U256::from_limbs([limbs[0], limbs[1], limbs[2], limbs[3]])
    }
}

/// The high-water mark `evaluate` uses: `max(highWaterMark, collateralAvailable + openNotional)`,
/// the sum saturating at 2^256 - 1.
pub fn effective_high_water_mark(snapshot: &Snapshot) -> U256 {
    snapshot
        .high_water_mark
        .max(snapshot.collateral_available.saturating_add(snapshot.open_notional))
}

/// Rule 14, exactly: `H - (collateralAvailable - cost) > maxDrawdown`. The left side may be
/// any integer (the balance after the worst case may be negative), so both sides are moved to
/// sums of non-negative terms, `H + cost > maxDrawdown + collateralAvailable`, taken in 512 bits.
pub fn drawdown_exceeded(bounds: &Bounds, snapshot: &Snapshot, cost: U256) -> bool {
    let h = effective_high_water_mark(snapshot);
    U512::from(h) + U512::from(cost)
        > U512::from(bounds.max_drawdown) + U512::from(snapshot.collateral_available)
}

/// Rule 20, exactly: the most one IOC can fill within the venue's match cap, against resting
/// orders that are each at least `m = max(minQuantity, lotSize, 1)` units (the venue never lets a
/// resting order fall below `minQuantity`, and every order is on the lot grid), is
/// `MAX_MATCHES_PER_TAKE * m` (or the whole quantity). The rule fails when that is below the
/// quantity and below the minimum fill: `64 m < quantity` and `64 m * 10000 < quantity *
/// minFillBps`. Only for a quantity above 0. Products in 512 bits.
pub fn match_cap_below_minimum(bounds: &Bounds, snapshot: &Snapshot, quantity: U256) -> bool {
    if quantity.is_zero() {
        return false;
    }
    let m = snapshot.min_quantity.max(snapshot.lot_size).max(U256::from(1u8));
    let most = U512::from(MAX_MATCHES_PER_TAKE) * U512::from(m);
    let q = U512::from(quantity);
    most < q && most * U512::from(BPS) < q * U512::from(bounds.min_fill_bps)
}

/// The pure decision rule of the specification. Never panics. The quote is looked at only for
/// BUY_UP and BUY_DOWN.
pub fn evaluate(bounds: &Bounds, snapshot: &Snapshot, quote: &Quote, verdict_code: u8) -> Decision {
    let verdict = match verdict_code {
        0 => return Decision::refused(1),
        1 => Verdict::BuyUp,
        2 => Verdict::BuyDown,
        _ => return Decision::refused(REASON_INVALID_VERDICT),
    };
    let mut mask: u32 = 0;
    let mut fail = |code: u8| mask |= 1 << code;
    if snapshot.finalized {
        fail(2);
    }
    let (expiry, now) = (snapshot.expiry_sec, snapshot.now_sec);
    if expiry <= now || expiry - now < u64::from(bounds.min_headroom_secs) {
        fail(3);
    }
    let price = price_paid(snapshot, verdict);
    if let Some(p) = price {
        if p < bounds.min_price || p > bounds.max_price {
            fail(5);
        }
        if p > quote.max_price_paid {
            fail(15);
        }
    } else {
        fail(4);
    }
    let quantity = order_quantity(bounds, snapshot);
    if quantity.is_zero() {
        fail(6);
    } else if quantity < snapshot.min_quantity {
        fail(7);
    }
    if snapshot.open_positions >= bounds.max_concurrent {
        fail(8);
    }
    // The worst case the order can spend: its whole quantity at its limit.
    let limit = order_limit(bounds, snapshot, quote, verdict).unwrap_or_default();
    let mut cost = U256::ZERO;
    if price.is_some() && !quantity.is_zero() {
        cost = cost_ceil(quantity, limit);
        // Exact comparison: the sum is taken in 512 bits, so it never wraps.
        if U512::from(snapshot.open_notional) + U512::from(cost) > U512::from(bounds.max_notional) {
            fail(9);
        }
        if cost > snapshot.collateral_available {
            fail(10);
        }
        if drawdown_exceeded(bounds, snapshot, cost) {
            fail(14);
        }
    }
    if !snapshot.resolver_trusted {
        fail(12);
    }
    if expiry > now && expiry - now > u64::from(bounds.max_horizon_secs) {
        fail(13);
    }
    if now > quote.deadline_sec {
        fail(16);
    }
    if snapshot.held_side != HELD_NONE && snapshot.held_side != verdict.code() {
        fail(17);
    }
    if !snapshot.creator_trusted {
        fail(REASON_CREATOR_NOT_TRUSTED);
    }
    if match_cap_below_minimum(bounds, snapshot, quantity) {
        fail(REASON_MATCH_CAP);
    }
    if mask == 0 {
        Decision {
            reason: 0,
            failed_mask: 0,
            price_paid: price.unwrap_or_default(),
            quantity,
            cost,
        }
    } else {
        Decision { reason: mask.trailing_zeros() as u8, failed_mask: mask, ..Decision::default() }
    }
}

/// Rule 18, decided after the market call: a fill of `filled` units of an order for `quantity`
/// is kept only when `filled * 10000 >= quantity * minFillBps` (exact, 512 bits).
pub fn fill_below_minimum(bounds: &Bounds, quantity: U256, filled: U256) -> bool {
    U512::from(filled) * U512::from(BPS) < U512::from(quantity) * U512::from(bounds.min_fill_bps)
}

/// One reason the constructor refuses its arguments (the interface's custom errors).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ConstructorError {
    MinPriceZero,
    PriceBandEmpty {
        min_price: U256,
        max_price: U256,
    },
    MaxPriceAtCertainty {
        max_price: U256,
        ceiling: U256,
    },
    MaxSizeZero,
    MinHeadroomBelowFloor {
        min_headroom: u32,
        floor: u32,
    },
    MaxConcurrentZero,
    MaxNotionalZero,
    MaxHorizonBelowHeadroom {
        max_horizon: u32,
        min_headroom: u32,
    },
    MaxDrawdownZero,
    WriteOffGraceBelowFloor {
        write_off_grace: u32,
        floor: u32,
    },
    MinFillBpsOutOfRange {
        min_fill_bps: u16,
        max: u16,
    },
    TrustedResolversEmpty,
    TooManyTrustedResolvers {
        count: usize,
        max: usize,
    },
    TrustedResolverZero {
        index: usize,
    },
    TrustedResolversNotAscending {
        index: usize,
        previous: Address,
        current: Address,
    },
    TrustedCreatorsEmpty,
    TooManyTrustedCreators {
        count: usize,
        max: usize,
    },
    TrustedCreatorZero {
        index: usize,
    },
    TrustedCreatorsNotAscending {
        index: usize,
        previous: Address,
        current: Address,
    },
    /// The keeper key may be neither a trusted resolver nor a trusted creator (issue 14).
    KeeperIsTrustedResolver {
        keeper: Address,
    },
    KeeperIsTrustedCreator {
        keeper: Address,
    },
    FactoryCollateralMismatch {
        factory_collateral: Address,
        collateral: Address,
    },
    // The mode's setting (issue 35; the rules are in [`crate::attested::setting_errors`]).
    TooManyAttestors {
        count: usize,
        max: usize,
    },
    AttestorZero {
        index: usize,
    },
    AttestorsNotAscending {
        index: usize,
        previous: Address,
        current: Address,
    },
    ThresholdOutOfRange {
        threshold: u8,
        attestors: usize,
    },
    MaxReadAgeZero,
    MaxSlippageBpsOutOfRange {
        max_slippage_bps: u16,
        max: u16,
    },
    /// A relayed gate (no signers) named attested settings.
    RelayedGateSettings {
        threshold: u8,
        max_read_age: u32,
        max_slippage_bps: u16,
    },
    KeeperIsAttestor {
        keeper: Address,
    },
}

/// Every rule on the bounds that `bounds` breaks, in the order the specification lists them
/// (empty when the constructor must accept them).
pub fn bounds_errors(bounds: &Bounds) -> Vec<ConstructorError> {
    use ConstructorError as E;
    let mut errors = Vec::new();
    let one = U256::from(PRICE_ONE);
    if bounds.min_price.is_zero() {
        errors.push(E::MinPriceZero);
    }
    if bounds.min_price >= bounds.max_price {
        errors.push(E::PriceBandEmpty { min_price: bounds.min_price, max_price: bounds.max_price });
    }
    if bounds.max_price >= one {
        errors.push(E::MaxPriceAtCertainty { max_price: bounds.max_price, ceiling: one });
    }
    if bounds.max_size.is_zero() {
        errors.push(E::MaxSizeZero);
    }
    if bounds.min_headroom_secs < MIN_HEADROOM_FLOOR_SECS {
        errors.push(E::MinHeadroomBelowFloor {
            min_headroom: bounds.min_headroom_secs,
            floor: MIN_HEADROOM_FLOOR_SECS,
        });
    }
    if bounds.max_concurrent == 0 {
        errors.push(E::MaxConcurrentZero);
    }
    if bounds.max_notional.is_zero() {
        errors.push(E::MaxNotionalZero);
    }
    if bounds.max_horizon_secs < bounds.min_headroom_secs {
        errors.push(E::MaxHorizonBelowHeadroom {
            max_horizon: bounds.max_horizon_secs,
            min_headroom: bounds.min_headroom_secs,
        });
    }
    if bounds.max_drawdown.is_zero() {
        errors.push(E::MaxDrawdownZero);
    }
    if bounds.write_off_grace_secs < WRITE_OFF_GRACE_FLOOR_SECS {
        errors.push(E::WriteOffGraceBelowFloor {
            write_off_grace: bounds.write_off_grace_secs,
            floor: WRITE_OFF_GRACE_FLOOR_SECS,
        });
    }
    if bounds.min_fill_bps == 0 || bounds.min_fill_bps > BPS {
        errors.push(E::MinFillBpsOutOfRange { min_fill_bps: bounds.min_fill_bps, max: BPS });
    }
    errors
}

/// Every rule on the trusted resolver list that `resolvers` breaks: not empty, at most 8, no
/// zero address, strictly ascending (which also rules out duplicates). Each offending index is
/// listed, since the specification does not say which one the contract names first.
pub fn resolver_errors(resolvers: &[Address]) -> Vec<ConstructorError> {
    use ConstructorError as E;
    let mut errors = Vec::new();
    if resolvers.is_empty() {
        errors.push(E::TrustedResolversEmpty);
    }
    if resolvers.len() > MAX_TRUSTED_RESOLVERS {
        errors.push(E::TooManyTrustedResolvers {
            count: resolvers.len(),
            max: MAX_TRUSTED_RESOLVERS,
        });
    }
    for (index, &current) in resolvers.iter().enumerate() {
        if current.is_zero() {
            errors.push(E::TrustedResolverZero { index });
        }
        if index > 0 && resolvers[index - 1] >= current {
            errors.push(E::TrustedResolversNotAscending {
                index,
                previous: resolvers[index - 1],
                current,
            });
        }
    }
    errors
}

/// Every rule on the trusted creator list that `creators` breaks: issue 14 gives it the same
/// rules as the resolver list (1 to 8, no zero, strictly ascending), each error naming the value.
pub fn creator_errors(creators: &[Address]) -> Vec<ConstructorError> {
    use ConstructorError as E;
    let mut errors = Vec::new();
    if creators.is_empty() {
        errors.push(E::TrustedCreatorsEmpty);
    }
    if creators.len() > MAX_TRUSTED_CREATORS {
        errors.push(E::TooManyTrustedCreators { count: creators.len(), max: MAX_TRUSTED_CREATORS });
    }
    for (index, &current) in creators.iter().enumerate() {
        if current.is_zero() {
            errors.push(E::TrustedCreatorZero { index });
        }
        if index > 0 && creators[index - 1] >= current {
            errors.push(E::TrustedCreatorsNotAscending {
                index,
                previous: creators[index - 1],
                current,
            });
        }
    }
    errors
}

/// What the constructor is given (the factory is deployed next to the gate).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct GateConfig {
    pub bounds: Bounds,
    pub trusted_resolvers: Vec<Address>,
    /// Who may create the markets the gate trades (issue 14).
    pub trusted_creators: Vec<Address>,
    /// The keeper key: never a trusted resolver or creator. Never zero in this crate.
    pub keeper: Address,
    pub collateral: Address,
    /// What the factory's `collateral()` returns.
    pub factory_collateral: Address,
}

/// Every rule of the constructor that `config` breaks (empty when it must deploy). The
/// specification does not say which error wins when several apply, so a caller must accept any
/// of them.
pub fn constructor_errors(config: &GateConfig) -> Vec<ConstructorError> {
    let mut errors = bounds_errors(&config.bounds);
    errors.extend(resolver_errors(&config.trusted_resolvers));
    errors.extend(creator_errors(&config.trusted_creators));
    if config.trusted_resolvers.contains(&config.keeper) {
        errors.push(ConstructorError::KeeperIsTrustedResolver { keeper: config.keeper });
    }
    if config.trusted_creators.contains(&config.keeper) {
        errors.push(ConstructorError::KeeperIsTrustedCreator { keeper: config.keeper });
    }
    if config.factory_collateral != config.collateral {
        errors.push(ConstructorError::FactoryCollateralMismatch {
            factory_collateral: config.factory_collateral,
            collateral: config.collateral,
        });
    }
    errors
}

// --- the keeper's call and the factory's question (issue: readBlock and market questions)

/// The longest question a market may ask, in bytes (`createMarket`): a post's length.
pub const MAX_QUESTION_BYTES: usize = 280;

/// Why the factory refuses a question: `QuestionEmpty()` for none, `QuestionTooLong(length,
/// 280)` for more than [`MAX_QUESTION_BYTES`] bytes. Lengths are of the bytes sent, not of the
/// characters they spell.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum QuestionError {
    Empty,
    TooLong { length: usize, max: usize },
}

/// The factory's question rule: 1 to 280 bytes. An accepted question is the market's
/// `questionHash`, `keccak256` of its bytes, and `MarketCreated` publishes it whole.
pub fn question_hash(question: &[u8]) -> Result<B256, QuestionError> {
    if question.is_empty() {
        return Err(QuestionError::Empty);
    }
    if question.len() > MAX_QUESTION_BYTES {
        return Err(QuestionError::TooLong { length: question.len(), max: MAX_QUESTION_BYTES });
    }
    Ok(keccak256(question))
}

/// `ReadBlockInFuture(readBlock, currentBlock)`: `submitVerdict` named a block above the one it
/// is mined in (the keeper's bug, not a decision: nothing is published).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ReadBlockInFuture {
    pub read_block: u64,
    pub current_block: u64,
}

/// The `readBlock` rule of `submitVerdict`: a prompt cannot have been rendered from a block that
/// does not exist yet, so `readBlock <= block.number`. It is checked after the keeper and pause
/// checks and before anything else (the market, the answer); any block up to the current one is
/// accepted (0 included) and published verbatim in the `Decision`.
pub fn check_read_block(read_block: u64, current_block: u64) -> Result<(), ReadBlockInFuture> {
    if read_block > current_block {
        return Err(ReadBlockInFuture { read_block, current_block });
    }
    Ok(())
}

/// A price in 1e6 units as a probability people can read (`450000` -> `0.45`); values that do not
/// fit a decimal are shown saturated.
pub fn probability(price: U256) -> Decimal {
    let units = u64::try_from(price).unwrap_or(u64::MAX);
    Decimal::from_i128_with_scale(i128::from(units), 6).normalize()
}

#[cfg(test)]
mod tests;
