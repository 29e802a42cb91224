//! Fixtures the checks and the tests share: one healthy snapshot, stated once.

use crate::model::{Snapshot, HELD_NONE};
use alloy::primitives::U256;

/// A healthy book: bid 0.40, ask 0.45, tick 0.01, lot 10, minimum 10, 10,000 s left (expiry
/// 20,000 at now 10,000), nothing open, trusted resolver and creator, nothing held, high-water
/// mark 0 (so H is the equity, 1,000,000 base units).
pub fn healthy_snapshot() -> Snapshot {
    let u = U256::from;
    Snapshot {
        best_bid: u(400_000u64),
        best_ask: u(450_000u64),
        tick_size: u(10_000u64),
        lot_size: u(10u64),
        min_quantity: u(10u64),
        expiry_sec: 20_000,
        now_sec: 10_000,
        finalized: false,
        open_positions: 0,
        open_notional: U256::ZERO,
        collateral_available: u(1_000_000u64),
        resolver_trusted: true,
        held_side: HELD_NONE,
        high_water_mark: U256::ZERO,
        creator_trusted: true,
    }
}
