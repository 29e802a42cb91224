//! The reference model of the gate's own accounting in v2, written from issue 7: the collateral
//! balance, the high-water mark `H`, the open notional and slots, and one position per market.
//! It says when `H` is raised (before evaluating a buy, after a redeem, before a write-off) and
//! what a kept fill, a redeem and a write-off change. The simulator's reference gate runs on it,
//! and against the compiled gate it is the shadow every on-chain figure is compared with.
//! It never decides an order: `model::evaluate` does.

use crate::model::{Bounds, HELD_DOWN, HELD_NONE, HELD_UP};
use alloy::primitives::{Address, U256};
use std::collections::BTreeMap;

/// The gate's exposure in one market (`IRiskGate.Position`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Position {
    pub up_units: U256,
    pub down_units: U256,
    /// Collateral actually spent.
    pub notional: U256,
    /// Slot and notional already released by a write-off; the claim is kept.
    pub written_off: bool,
}

impl Position {
    /// `Snapshot.heldSide`: UP if it holds UP units, else DOWN if DOWN units, else none.
    pub fn held_side(&self) -> u8 {
        if !self.up_units.is_zero() {
            HELD_UP
        } else if !self.down_units.is_zero() {
            HELD_DOWN
        } else {
            HELD_NONE
        }
    }
}

/// Why the gate refuses a `redeem` or a `writeOff` (the interface's errors, without their data).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    NoOpenPosition,
    MarketNotFinal,
    MarketAlreadyFinal,
    WriteOffTooEarly { allowed_after_sec: u64 },
    AlreadyWrittenOff,
}

/// The gate's books.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ledger {
    pub bounds: Bounds,
    pub balance: U256,
    pub high_water_mark: U256,
    pub open_notional: U256,
    pub open_positions: u8,
    pub positions: BTreeMap<Address, Position>,
}

impl Ledger {
    pub fn new(bounds: Bounds) -> Self {
        Self {
            bounds,
            balance: U256::ZERO,
            high_water_mark: U256::ZERO,
            open_notional: U256::ZERO,
            open_positions: 0,
            positions: BTreeMap::new(),
        }
    }

    /// Collateral balance + open notional, saturating.
    pub fn equity(&self) -> U256 {
        self.balance.saturating_add(self.open_notional)
    }

    /// `H = max(H, balance + openNotional)`.
    pub fn raise_high_water_mark(&mut self) {
        self.high_water_mark = self.high_water_mark.max(self.equity());
    }

    pub fn position(&self, market: Address) -> Position {
        self.positions.get(&market).copied().unwrap_or_default()
    }

    /// A fill the gate kept: the spend leaves the balance and becomes notional; the first fill in
    /// a market takes a slot.
    pub fn apply_fill(&mut self, market: Address, buy_up: bool, filled: U256, spent: U256) {
        let position = self.positions.entry(market).or_default();
        let was_open = !position.up_units.is_zero() || !position.down_units.is_zero();
        if buy_up {
            position.up_units += filled;
        } else {
            position.down_units += filled;
        }
        position.notional += spent;
        self.balance = self.balance.saturating_sub(spent);
        self.open_notional = self.open_notional.saturating_add(spent);
        if !was_open {
            self.open_positions = self.open_positions.saturating_add(1);
        }
    }

    /// `redeem` in a finalized market: collects `payout`, releases the slot and notional unless a
    /// write-off already did, closes the position, then raises `H` to the equity after.
    pub fn redeem(
        &mut self,
        market: Address,
        finalized: bool,
        payout: U256,
    ) -> Result<(), Refusal> {
        let position = *self.positions.get(&market).ok_or(Refusal::NoOpenPosition)?;
        if !finalized {
            return Err(Refusal::MarketNotFinal);
        }
        self.balance = self.balance.saturating_add(payout);
        if !position.written_off {
            self.release(&position);
        }
        self.positions.remove(&market);
        self.raise_high_water_mark();
        Ok(())
    }

    /// `writeOff` once `now > expiry + writeOffGrace` in a market still not finalized: raises
    /// `H` to the equity before the loss, then releases the slot and the notional.
    pub fn write_off(
        &mut self,
        market: Address,
        now_sec: u64,
        expiry_sec: u64,
        finalized: bool,
    ) -> Result<Position, Refusal> {
        let position = *self.positions.get(&market).ok_or(Refusal::NoOpenPosition)?;
        if position.written_off {
            return Err(Refusal::AlreadyWrittenOff);
        }
        if finalized {
            return Err(Refusal::MarketAlreadyFinal);
        }
        let allowed_after_sec =
            expiry_sec.saturating_add(u64::from(self.bounds.write_off_grace_secs));
        if now_sec <= allowed_after_sec {
            return Err(Refusal::WriteOffTooEarly { allowed_after_sec });
        }
        self.raise_high_water_mark();
        self.release(&position);
        if let Some(p) = self.positions.get_mut(&market) {
            p.written_off = true;
        }
        Ok(position)
    }

    /// `withdrawCollateral`: raises `H` to the equity, then lowers it by `amount` (not below 0).
    pub fn withdraw(&mut self, amount: U256) {
        self.raise_high_water_mark();
        self.balance = self.balance.saturating_sub(amount);
        self.high_water_mark = self.high_water_mark.saturating_sub(amount);
    }

    fn release(&mut self, position: &Position) {
        self.open_notional = self.open_notional.saturating_sub(position.notional);
        self.open_positions = self.open_positions.saturating_sub(1);
    }

    /// The invariant of issue 7: `balance >= H - maxDrawdown`.
    pub fn drawdown_holds(&self) -> bool {
        drawdown_holds(self.balance, self.high_water_mark, self.bounds.max_drawdown)
    }
}

/// `balance >= H - maxDrawdown`, without underflow.
pub fn drawdown_holds(balance: U256, high_water_mark: U256, max_drawdown: U256) -> bool {
    balance.saturating_add(max_drawdown) >= high_water_mark
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(v: u64) -> U256 {
        U256::from(v)
    }

    fn bounds() -> Bounds {
        Bounds {
            min_price: u(50_000),
            max_price: u(950_000),
            max_size: u(100),
            min_headroom_secs: 300,
            max_concurrent: 3,
            max_notional: u(250),
            max_horizon_secs: 604_800,
            max_drawdown: u(500),
            write_off_grace_secs: 3_600,
            min_fill_bps: 2_500,
        }
    }

    #[test]
    fn a_losing_round_trip_moves_h_only_up_and_keeps_the_invariant() {
        let m = Address::with_last_byte(7);
        let mut l = Ledger { balance: u(10_000), ..Ledger::new(bounds()) };
        // Before the buy: H = max(0, 10_000 + 0) = 10_000.
        l.raise_high_water_mark();
        assert_eq!(l.high_water_mark, u(10_000));
        // 100 UP for 95: balance 9_905, notional 95, one slot; equity still 10_000.
        l.apply_fill(m, true, u(100), u(95));
        assert_eq!((l.balance, l.open_notional, l.open_positions), (u(9_905), u(95), 1));
        assert_eq!(l.position(m).held_side(), HELD_UP);
        // DOWN wins: payout 0; slot and notional released; H stays 10_000 (equity 9_905 < H).
        assert_eq!(l.redeem(m, true, U256::ZERO), Ok(()));
        assert_eq!((l.balance, l.open_notional, l.open_positions), (u(9_905), u(0), 0));
        assert_eq!(l.high_water_mark, u(10_000));
        // 9_905 >= 10_000 - 500 = 9_500.
        assert!(l.drawdown_holds());
        assert_eq!(l.redeem(m, true, U256::ZERO), Err(Refusal::NoOpenPosition));
    }

    #[test]
    fn a_winning_redeem_raises_h_after_collecting() {
        let m = Address::with_last_byte(7);
        let mut l = Ledger { balance: u(1_000), ..Ledger::new(bounds()) };
        l.raise_high_water_mark();
        // 100 DOWN for 40; not final yet: refused, nothing moves.
        l.apply_fill(m, false, u(100), u(40));
        assert_eq!(l.redeem(m, false, u(100)), Err(Refusal::MarketNotFinal));
        assert_eq!(l.balance, u(960));
        // DOWN wins 100: balance 1_060, H raised after: max(1_000, 1_060 + 0) = 1_060.
        assert_eq!(l.redeem(m, true, u(100)), Ok(()));
        assert_eq!((l.balance, l.high_water_mark), (u(1_060), u(1_060)));
    }

    #[test]
    fn write_off_waits_for_expiry_plus_grace_and_keeps_the_claim() {
        let m = Address::with_last_byte(7);
        let mut l = Ledger { balance: u(1_000), ..Ledger::new(bounds()) };
        l.apply_fill(m, true, u(100), u(60));
        // expiry 10_000, grace 3_600: allowed only when now > 13_600.
        assert_eq!(
            l.write_off(m, 13_600, 10_000, false),
            Err(Refusal::WriteOffTooEarly { allowed_after_sec: 13_600 })
        );
        assert_eq!(l.write_off(m, 13_601, 10_000, true), Err(Refusal::MarketAlreadyFinal));
        // H raised before: max(0, 940 + 60) = 1_000; then notional and slot released.
        let p = l.write_off(m, 13_601, 10_000, false).map(|p| p.notional);
        assert_eq!(p, Ok(u(60)));
        assert_eq!((l.high_water_mark, l.open_notional, l.open_positions), (u(1_000), u(0), 0));
        assert_eq!(l.write_off(m, 13_602, 10_000, false), Err(Refusal::AlreadyWrittenOff));
        // 940 >= 1_000 - 500.
        assert!(l.drawdown_holds());
        // The market resolves late, UP wins: redeem collects 100 without releasing twice;
        // balance 1_040, H = max(1_000, 1_040) = 1_040.
        assert_eq!(l.redeem(m, true, u(100)), Ok(()));
        assert_eq!((l.balance, l.open_positions, l.high_water_mark), (u(1_040), 0, u(1_040)));
    }

    #[test]
    fn a_withdrawal_lowers_h_by_the_amount_but_not_below_zero() {
        let mut l = Ledger { balance: u(1_000), ..Ledger::new(bounds()) };
        // H raised to 1_000 first, then 1_000 - 300 = 700; balance 700.
        l.withdraw(u(300));
        assert_eq!((l.balance, l.high_water_mark), (u(700), u(700)));
        l.withdraw(u(10_000));
        assert_eq!((l.balance, l.high_water_mark), (u(0), u(0)));
        assert!(drawdown_holds(u(0), u(500), u(500)));
        assert!(!drawdown_holds(u(0), u(501), u(500)));
    }
}
