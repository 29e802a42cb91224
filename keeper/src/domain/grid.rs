//! Which market grids a gate can trade at all. The gate's order quantity is its `maxSize`
//! snapped down to the market's lot, and three of its rules read only that quantity and the
//! market's grid: 6 (it snaps to zero), 7 (it is below the market's minimum order) and 20 (a
//! take that hits the venue's match cap against minimum-size orders may fill less than
//! `minFillBps` of it). A market refused by one of them is refused on every ask, whatever the
//! book: `keeper market create` warns about it and `keeper run` does not ask about it.
//!
//! This is the keeper's reading of `GateRules` (rules 6, 7, 20), for operators; the gate
//! decides, and gate-sim holds the independent reference.

use crate::kit::bindings::{IRiskGate, BPS, MAX_MATCHES_PER_TAKE};
use alloy::primitives::U256;

/// Why a gate refuses every buy in a market, whatever the book.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GridRefusal {
    /// Rule 6: `maxSize` snapped to the lot is zero.
    SizeZero { max_size: U256, lot: U256 },
    /// Rule 7: the snapped quantity is below the market's minimum order.
    BelowMinimum { quantity: U256, min_qty: U256 },
    /// Rule 20: `max(minQuantity, lotSize)` is below `need`, the least that lets a take at the
    /// match cap still fill `minFillBps` of the quantity.
    MatchCap { quantity: U256, smallest: U256, need: U256 },
}

impl GridRefusal {
    /// The gate's reason code.
    pub fn rule(&self) -> u8 {
        match self {
            Self::SizeZero { .. } => 6,
            Self::BelowMinimum { .. } => 7,
            Self::MatchCap { .. } => 20,
        }
    }
}

impl std::fmt::Display for GridRefusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::SizeZero { max_size, lot } => write!(
                f,
                "rule 6 (size snapped to zero on the lot grid): the gate's maxSize {max_size} is \
                 below the lot {lot}"
            ),
            Self::BelowMinimum { quantity, min_qty } => write!(
                f,
                "rule 7 (size below venue minimum): the gate orders {quantity}, below the \
                 market's minimum {min_qty}"
            ),
            Self::MatchCap { quantity, smallest, need } => write!(
                f,
                "rule 20 (minimum fill beyond the venue's match cap): max(minQuantity, lotSize) \
                 is {smallest}; an order of {quantity} needs at least {need}"
            ),
        }
    }
}

/// The refusal every buy in a market of grid (`lot`, `min_qty`) meets at a gate of `bounds`,
/// if there is one (rules 6, 7, 20 in the gate's order of reading them).
pub fn refusal(bounds: &IRiskGate::Params, lot: U256, min_qty: U256) -> Option<GridRefusal> {
    let quantity = if lot.is_zero() { bounds.maxSize } else { bounds.maxSize / lot * lot };
    if quantity.is_zero() {
        return Some(GridRefusal::SizeZero { max_size: bounds.maxSize, lot });
    }
    if quantity < min_qty {
        return Some(GridRefusal::BelowMinimum { quantity, min_qty });
    }
    let smallest = min_qty.max(lot).max(U256::from(1));
    let cap = U256::from(MAX_MATCHES_PER_TAKE);
    // As GateRules.matchCapBelowMinimum: an order of at most 64 resting orders' worth is never
    // capped; otherwise 64 minimum orders must reach minFillBps of the quantity.
    if smallest >= quantity / cap + U256::from(1) {
        return None;
    }
    let bps = U256::from(bounds.minFillBps);
    if smallest * cap * U256::from(BPS) >= quantity * bps {
        return None;
    }
    let need = (quantity * bps).div_ceil(cap * U256::from(BPS)).min(quantity / cap + U256::from(1));
    Some(GridRefusal::MatchCap { quantity, smallest, need })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gate(max_size: u64, min_fill_bps: u16) -> IRiskGate::Params {
        IRiskGate::Params {
            maxSize: U256::from(max_size),
            minFillBps: min_fill_bps,
            ..Default::default()
        }
    }

    #[test]
    fn the_default_gate_needs_a_minimum_of_390625_against_lot_1000() {
        // keeper deploy's defaults: maxSize 100e6, minFillBps 2500. quantity = 100e6 (a whole
        // number of 1000-lots); 64 orders of m fill 64m, which must reach 25 % of 100e6:
        // m >= 100e6 × 2500 / (64 × 10000) = 390,625.
        let g = gate(100_000_000, 2_500);
        let u = U256::from;
        // The old `keeper market create` defaults (lot 1000, minimum 0): every buy refused.
        assert_eq!(
            refusal(&g, u(1_000), u(0)),
            Some(GridRefusal::MatchCap {
                quantity: u(100_000_000),
                smallest: u(1_000),
                need: u(390_625)
            })
        );
        assert_eq!(refusal(&g, u(1_000), u(390_624)).map(|r| r.rule()), Some(20));
        assert_eq!(refusal(&g, u(1_000), u(390_625)), None);
        // The new default minimum, 400,000 (a round number above 390,625, a multiple of 1000).
        assert_eq!(refusal(&g, u(1_000), u(400_000)), None);
    }

    #[test]
    fn rules_6_and_7_come_before_rule_20() {
        let u = U256::from;
        let g = gate(10_000_000, 2_500);
        // maxSize 10e6 below a lot of 20e6: snaps to zero (rule 6).
        assert_eq!(refusal(&g, u(20_000_000), u(0)).map(|r| r.rule()), Some(6));
        // 10e6 against a minimum of 11e6: rule 7.
        assert_eq!(refusal(&g, u(100), u(11_000_000)).map(|r| r.rule()), Some(7));
        // Lot 100, no minimum: 64 × 100 = 6,400 < 25 % of 10e6 = 2.5e6: rule 20, need
        // ceil(10e6 × 2500 / 640,000) = 39,063 (capped by 10e6 / 64 + 1 = 156,251).
        assert_eq!(
            refusal(&g, u(100), u(0)),
            Some(GridRefusal::MatchCap {
                quantity: u(10_000_000),
                smallest: u(100),
                need: u(39_063)
            })
        );
        // A big lot is never capped: 64 × 200,000 >= 10e6.
        assert_eq!(refusal(&g, u(200_000), u(0)), None);
    }
}
