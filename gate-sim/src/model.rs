//! The reference model of RiskGate: `parseVerdict`, `evaluate` and the constructor's bounds
//! check, written from the specification (issue 2 and the NatSpec of `IRiskGate.sol`), not from
//! the Solidity. Exact integer arithmetic only (256-bit values, 512-bit products where a product
//! can exceed 2^256). It must never panic, whatever the input: a panic here would hide a
//! disagreement with the contract instead of reporting it.

use alloy::primitives::{U256, U512};
use rust_decimal::Decimal;

/// 1.0 as a probability in 1e6 units.
pub const PRICE_ONE: u64 = 1_000_000;
/// The constant floor under `minHeadroom`, in seconds.
pub const MIN_HEADROOM_FLOOR_SECS: u32 = 120;
/// Answers longer than this are refused before any trimming.
pub const MAX_ANSWER_LEN: usize = 64;
/// The bytes trimmed from both ends of an answer, repeatedly.
pub const TRIM_BYTES: [u8; 6] = [b' ', b'\t', b'\n', b'\r', b'"', b'\''];

/// Reason 11 (and verdict 255 in the `Decision` event): the answer was not a valid verdict.
pub const REASON_INVALID_VERDICT: u8 = 11;

/// Reason codes and labels, verbatim from the specification.
pub const REASON_LABELS: [&str; 12] = [
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
];

/// The label of a reason code, `None` for a code the gate never returns.
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
}

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
    pub failed_mask: u16,
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

/// `value` rounded up onto a grid of `step` (0 = no grid). Only called with `value < 1e6`, where
/// the result is at most `max(step, 2e6)` and cannot overflow; saturating all the same.
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

/// `maxSize` rounded down onto the lot grid.
pub fn order_quantity(bounds: &Bounds, snapshot: &Snapshot) -> U256 {
    round_down_to_grid(bounds.max_size, snapshot.lot_size)
}

/// `ceil(quantity * price / 1e6)`, the worst case, saturating at 2^256 - 1.
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

/// The pure decision rule of the specification. Never panics.
pub fn evaluate(bounds: &Bounds, snapshot: &Snapshot, verdict_code: u8) -> Decision {
    let verdict = match verdict_code {
        0 => return Decision::refused(1),
        1 => Verdict::BuyUp,
        2 => Verdict::BuyDown,
        _ => return Decision::refused(REASON_INVALID_VERDICT),
    };
    let mut mask: u16 = 0;
    if snapshot.finalized {
        mask |= 1 << 2;
    }
    let too_late = snapshot.expiry_sec <= snapshot.now_sec
        || snapshot.expiry_sec - snapshot.now_sec < u64::from(bounds.min_headroom_secs);
    if too_late {
        mask |= 1 << 3;
    }
    let price = price_paid(snapshot, verdict);
    match price {
        None => mask |= 1 << 4,
        Some(p) if p < bounds.min_price || p > bounds.max_price => mask |= 1 << 5,
        Some(_) => {}
    }
    let quantity = order_quantity(bounds, snapshot);
    if quantity.is_zero() {
        mask |= 1 << 6;
    } else if quantity < snapshot.min_quantity {
        mask |= 1 << 7;
    }
    if snapshot.open_positions >= bounds.max_concurrent {
        mask |= 1 << 8;
    }
    let mut cost = U256::ZERO;
    if let Some(p) = price {
        if !quantity.is_zero() {
            cost = cost_ceil(quantity, p);
            // Exact comparison: the sum is taken in 512 bits, so it never wraps.
            if U512::from(snapshot.open_notional) + U512::from(cost)
                > U512::from(bounds.max_notional)
            {
                mask |= 1 << 9;
            }
            if cost > snapshot.collateral_available {
                mask |= 1 << 10;
            }
        }
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

/// One reason the constructor refuses a set of bounds (the interface's custom errors).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BoundsError {
    MinPriceZero,
    PriceBandEmpty { min_price: U256, max_price: U256 },
    MaxPriceAtCertainty { max_price: U256, ceiling: U256 },
    MaxSizeZero,
    MinHeadroomBelowFloor { min_headroom: u32, floor: u32 },
    MaxConcurrentZero,
    MaxNotionalZero,
}

/// Every rule of the constructor that `bounds` breaks, in the order the specification lists
/// them (empty when the constructor must accept). The specification does not say which error
/// wins when several apply, so a caller must accept any of them.
pub fn bounds_errors(bounds: &Bounds) -> Vec<BoundsError> {
    let mut errors = Vec::new();
    let one = U256::from(PRICE_ONE);
    if bounds.min_price.is_zero() {
        errors.push(BoundsError::MinPriceZero);
    }
    if bounds.min_price >= bounds.max_price {
        errors.push(BoundsError::PriceBandEmpty {
            min_price: bounds.min_price,
            max_price: bounds.max_price,
        });
    }
    if bounds.max_price >= one {
        errors.push(BoundsError::MaxPriceAtCertainty { max_price: bounds.max_price, ceiling: one });
    }
    if bounds.max_size.is_zero() {
        errors.push(BoundsError::MaxSizeZero);
    }
    if bounds.min_headroom_secs < MIN_HEADROOM_FLOOR_SECS {
        errors.push(BoundsError::MinHeadroomBelowFloor {
            min_headroom: bounds.min_headroom_secs,
            floor: MIN_HEADROOM_FLOOR_SECS,
        });
    }
    if bounds.max_concurrent == 0 {
        errors.push(BoundsError::MaxConcurrentZero);
    }
    if bounds.max_notional.is_zero() {
        errors.push(BoundsError::MaxNotionalZero);
    }
    errors
}

/// A price in 1e6 units as a probability people can read (`450000` -> `0.45`); values that do not
/// fit a decimal are shown saturated.
pub fn probability(price: U256) -> Decimal {
    let units = u64::try_from(price).unwrap_or(u64::MAX);
    Decimal::from_i128_with_scale(i128::from(units), 6).normalize()
}

#[cfg(test)]
mod tests;
