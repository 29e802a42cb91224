//! The reference model of the gate's own accounting in v2.1, written from issues 7 and 14: the
//! collateral balance, the high-water mark `H`, the gate's own account `K` of the equity it should
//! hold (collateral + open notional), the open notional and slots, and one position per market.
//!
//! "Settling" compares the equity `E = balance + openNotional` with `K`: a surplus is money that
//! arrived some other way than a payout (a plain transfer, a rebase) and raises `H` by exactly
//! its amount (a donation); a deficit is a loss (a token fee, a clawback); then `K = E` and
//! `H = max(H, E)`. The gate settles before evaluating a buy, before and after a redeem, before a
//! write-off, a deposit and a withdrawal. A deposit raises `H` and `K` by what arrived, a
//! withdrawal lowers both by exactly its amount, a buy leaves `K` alone, and so no deposit,
//! withdrawal or donation changes `H - equity`: the drawdown budget is the gate's whole life's.
//! The simulator's reference gate runs on this, and against the compiled gate it is the shadow
//! every on-chain figure is compared with. It never decides an order: `model::evaluate` does.

use crate::model::{Bounds, HELD_DOWN, HELD_NONE, HELD_UP};
use alloy::primitives::{Address, U256, U512};
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

/// Why the gate refuses a `redeem`, a `writeOff`, a `deposit` or a `withdrawCollateral` (the
/// interface's errors, without most of their data).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Refusal {
    NoOpenPosition,
    MarketNotFinal,
    /// `writeOff` of a final market whose `redeem` works: redeem it instead.
    MarketRedeemable,
    WriteOffTooEarly {
        allowed_after_sec: u64,
    },
    AlreadyWrittenOff,
    DepositZero,
    WithdrawExceedsBalance,
}

/// What one settlement found (each at most one of the two is non-zero).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Settlement {
    /// Equity above the account: counted as a deposit, `H` raised by exactly this.
    pub donated: U256,
    /// Equity below the account: a loss.
    pub shortfall: U256,
}

/// The gate's books.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Ledger {
    pub bounds: Bounds,
    /// The gate's collateral balance, as the token reports it.
    pub balance: U256,
    pub high_water_mark: U256,
    /// `K`: the equity the gate's own account says it has (collateral it should hold + open
    /// notional), as of the last settlement and the movements since.
    pub accounted: U256,
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
            accounted: U256::ZERO,
            open_notional: U256::ZERO,
            open_positions: 0,
            positions: BTreeMap::new(),
        }
    }

    /// Collateral balance + open notional, saturating.
    pub fn equity(&self) -> U256 {
        self.balance.saturating_add(self.open_notional)
    }

    /// `accountedCollateral()`: `K - openNotional`, the collateral the account says it holds.
    pub fn accounted_collateral(&self) -> U256 {
        self.accounted.saturating_sub(self.open_notional)
    }

    /// Settles the account against the balance: a surplus over `K` raises `H` by its amount, a
    /// deficit is a loss; then `K = E` and `H = max(H, E)`.
    pub fn settle(&mut self) -> Settlement {
        let e = self.equity();
        let mut s = Settlement::default();
        if e > self.accounted {
            s.donated = e - self.accounted;
            self.high_water_mark = self.high_water_mark.saturating_add(s.donated);
        } else if e < self.accounted {
            s.shortfall = self.accounted - e;
        }
        self.accounted = e;
        self.high_water_mark = self.high_water_mark.max(e);
        s
    }

    pub fn position(&self, market: Address) -> Position {
        self.positions.get(&market).copied().unwrap_or_default()
    }

    /// Collateral that reached the gate outside its account (a plain transfer): nothing is
    /// counted until the next settlement.
    pub fn donate(&mut self, amount: U256) {
        self.balance = self.balance.saturating_add(amount);
    }

    /// Collateral that left the gate outside its account (a clawback, a token's fee): a loss
    /// the next settlement finds.
    pub fn lose(&mut self, amount: U256) {
        self.balance = self.balance.saturating_sub(amount);
    }

    /// `deposit(amount)`: settles, then `received` (what the balance grew by, `amount` less any
    /// token fee) raises the balance, `H` and `K` alike.
    pub fn deposit(&mut self, amount: U256, received: U256) -> Result<Settlement, Refusal> {
        if amount.is_zero() {
            return Err(Refusal::DepositZero);
        }
        let s = self.settle();
        self.balance = self.balance.saturating_add(received);
        self.high_water_mark = self.high_water_mark.saturating_add(received);
        self.accounted = self.accounted.saturating_add(received);
        Ok(s)
    }

    /// `withdrawCollateral(amount)`: settles, then lowers the balance, `H` and `K` by exactly
    /// `amount`; refused above the balance.
    pub fn withdraw(&mut self, amount: U256) -> Result<Settlement, Refusal> {
        // A refusal reverts: checked before anything moves (settling never changes the balance).
        if amount > self.balance {
            return Err(Refusal::WithdrawExceedsBalance);
        }
        let s = self.settle();
        self.balance -= amount;
        self.high_water_mark = self.high_water_mark.saturating_sub(amount);
        self.accounted = self.accounted.saturating_sub(amount);
        Ok(s)
    }

    /// A fill the gate kept (after the settlement that preceded its evaluation): the spend
    /// leaves the balance and becomes notional, so `K` is unchanged; the first fill in a market
    /// takes a slot.
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

    /// `redeem` in a finalized market whose payout arrives whole.
    pub fn redeem(
        &mut self,
        market: Address,
        finalized: bool,
        payout: U256,
    ) -> Result<(Settlement, Settlement), Refusal> {
        self.redeem_received(market, finalized, payout, payout)
    }

    /// `redeem`: settles, collects `payout` (of which `received` reaches the balance; less
    /// under a fee-on-transfer token), adds the payout to `K`, releases the slot and the notional
    /// (from the open notional and from `K`) unless a write-off already did, closes the position,
    /// then settles again (a payout short of what was paid is a shortfall there; `H` rises to
    /// the equity after). Returns the two settlements.
    pub fn redeem_received(
        &mut self,
        market: Address,
        finalized: bool,
        payout: U256,
        received: U256,
    ) -> Result<(Settlement, Settlement), Refusal> {
        let position = *self.positions.get(&market).ok_or(Refusal::NoOpenPosition)?;
        if !finalized {
            return Err(Refusal::MarketNotFinal);
        }
        let before = self.settle();
        self.balance = self.balance.saturating_add(received);
        self.accounted = self.accounted.saturating_add(payout);
        if !position.written_off {
            self.release(&position);
        }
        self.positions.remove(&market);
        let after = self.settle();
        Ok((before, after))
    }

    /// `writeOff` once `now > expiry + writeOffGrace`, in a market that is not finalized or is
    /// finalized but whose `redeem` fails (`redeemable == false`): settles (so `H` is the equity
    /// before the loss), then releases the slot and the notional from the open notional and `K`.
    /// The claim stays for `redeem`. The specification does not order the refusals when several
    /// apply; this checks "written off", then the time, then "redeemable".
    pub fn write_off(
        &mut self,
        market: Address,
        now_sec: u64,
        expiry_sec: u64,
        finalized: bool,
        redeemable: bool,
    ) -> Result<Position, Refusal> {
        let position = *self.positions.get(&market).ok_or(Refusal::NoOpenPosition)?;
        if position.written_off {
            return Err(Refusal::AlreadyWrittenOff);
        }
        let allowed_after_sec =
            expiry_sec.saturating_add(u64::from(self.bounds.write_off_grace_secs));
        if now_sec <= allowed_after_sec {
            return Err(Refusal::WriteOffTooEarly { allowed_after_sec });
        }
        if finalized && redeemable {
            return Err(Refusal::MarketRedeemable);
        }
        self.settle();
        self.release(&position);
        if let Some(p) = self.positions.get_mut(&market) {
            p.written_off = true;
        }
        Ok(position)
    }

    /// Frees a position's slot and takes its notional out of the open notional and of `K`
    /// (the equity the account expects falls by exactly what is released).
    fn release(&mut self, position: &Position) {
        self.open_notional = self.open_notional.saturating_sub(position.notional);
        self.accounted = self.accounted.saturating_sub(position.notional);
        self.open_positions = self.open_positions.saturating_sub(1);
    }

    /// The balance form of the invariant: `balance >= H - maxDrawdown` (rule 14 keeps it for
    /// every order; only a shortfall the gate cannot see coming breaks it).
    pub fn drawdown_holds(&self) -> bool {
        drawdown_holds(self.balance, self.high_water_mark, self.bounds.max_drawdown)
    }

    /// The lifetime invariant of issue 14: `H - equity <= maxDrawdown`.
    pub fn equity_drawdown_holds(&self) -> bool {
        drawdown_holds(self.equity(), self.high_water_mark, self.bounds.max_drawdown)
    }
}

/// `value >= H - maxDrawdown`, without underflow.
pub fn drawdown_holds(value: U256, high_water_mark: U256, max_drawdown: U256) -> bool {
    value.saturating_add(max_drawdown) >= high_water_mark
}

/// `H - equity` is the same before and after: `h0 - e0 == h1 - e1`, compared as
/// `h0 + e1 == h1 + e0` in 512 bits (either side may be negative).
pub fn gap_unchanged(h0: U256, e0: U256, h1: U256, e1: U256) -> bool {
    U512::from(h0) + U512::from(e1) == U512::from(h1) + U512::from(e0)
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

    /// A gate funded with `amount` by a plain transfer, then settled (as before its first buy).
    fn funded(amount: u64) -> Ledger {
        let mut l = Ledger::new(bounds());
        l.donate(u(amount));
        l.settle();
        l
    }

    #[test]
    fn a_losing_round_trip_moves_h_only_up_and_keeps_the_invariant() {
        let m = Address::with_last_byte(7);
        let mut l = Ledger::new(bounds());
        l.donate(u(10_000));
        // Before the buy: E = 10_000 > K = 0, a donation of 10_000: H = 0 + 10_000, K = 10_000.
        assert_eq!(l.settle(), Settlement { donated: u(10_000), shortfall: U256::ZERO });
        assert_eq!((l.high_water_mark, l.accounted), (u(10_000), u(10_000)));
        // 100 UP for 95: balance 9_905, notional 95, one slot; equity and K still 10_000.
        l.apply_fill(m, true, u(100), u(95));
        assert_eq!((l.balance, l.open_notional, l.open_positions), (u(9_905), u(95), 1));
        assert_eq!((l.accounted, l.accounted_collateral()), (u(10_000), u(9_905)));
        assert_eq!(l.position(m).held_side(), HELD_UP);
        // DOWN wins: payout 0; K = 10_000 + 0 - 95 = 9_905 = E, no shortfall; H stays 10_000.
        let (before, after) = l.redeem(m, true, U256::ZERO).unwrap();
        assert_eq!((before, after), (Settlement::default(), Settlement::default()));
        assert_eq!((l.balance, l.open_notional, l.open_positions), (u(9_905), u(0), 0));
        assert_eq!((l.high_water_mark, l.accounted), (u(10_000), u(9_905)));
        // 9_905 >= 10_000 - 500 = 9_500.
        assert!(l.drawdown_holds() && l.equity_drawdown_holds());
        assert_eq!(l.redeem(m, true, U256::ZERO), Err(Refusal::NoOpenPosition));
    }

    #[test]
    fn a_winning_redeem_raises_h_after_collecting() {
        let m = Address::with_last_byte(7);
        let mut l = funded(1_000);
        // 100 DOWN for 40; not final yet: refused, nothing moves.
        l.apply_fill(m, false, u(100), u(40));
        let snapshot = l.clone();
        assert_eq!(l.redeem(m, false, u(100)), Err(Refusal::MarketNotFinal));
        assert_eq!(l, snapshot);
        // DOWN wins 100: balance 1_060; K = 1_000 + 100 - 40 = 1_060 = E, not a donation;
        // H raised after: max(1_000, 1_060) = 1_060.
        let (_, after) = l.redeem(m, true, u(100)).unwrap();
        assert_eq!(after, Settlement::default());
        assert_eq!((l.balance, l.high_water_mark, l.accounted), (u(1_060), u(1_060), u(1_060)));
    }

    #[test]
    fn write_off_waits_for_expiry_plus_grace_and_keeps_the_claim() {
        let m = Address::with_last_byte(7);
        let mut l = funded(1_000);
        l.apply_fill(m, true, u(100), u(60));
        // expiry 10_000, grace 3_600: allowed only when now > 13_600.
        assert_eq!(
            l.write_off(m, 13_600, 10_000, false, false),
            Err(Refusal::WriteOffTooEarly { allowed_after_sec: 13_600 })
        );
        // Final and its redeem works: redeem instead.
        assert_eq!(l.write_off(m, 13_601, 10_000, true, true), Err(Refusal::MarketRedeemable));
        // H = max(1_000, 940 + 60) = 1_000; then notional and slot released, K 1_000 - 60 = 940.
        let p = l.write_off(m, 13_601, 10_000, false, false).map(|p| p.notional);
        assert_eq!(p, Ok(u(60)));
        assert_eq!((l.high_water_mark, l.open_notional, l.open_positions), (u(1_000), u(0), 0));
        assert_eq!(l.accounted, u(940));
        assert_eq!(l.write_off(m, 13_602, 10_000, false, false), Err(Refusal::AlreadyWrittenOff));
        // 940 >= 1_000 - 500.
        assert!(l.drawdown_holds());
        // The market resolves late, UP wins: redeem collects 100 without releasing twice;
        // K = 940 + 100 = 1_040 = E (no donation); H = max(1_000, 1_040) = 1_040.
        let (_, after) = l.redeem(m, true, u(100)).unwrap();
        assert_eq!(after, Settlement::default());
        assert_eq!((l.balance, l.open_positions, l.high_water_mark), (u(1_040), 0, u(1_040)));
    }

    #[test]
    fn a_final_market_that_cannot_pay_is_written_off_after_the_grace() {
        let m = Address::with_last_byte(7);
        let mut l = funded(1_000);
        l.apply_fill(m, true, u(100), u(42));
        // Final, but its redeem reverts (a fee-on-transfer winner): too early at 13_600 ...
        assert_eq!(
            l.write_off(m, 13_600, 10_000, true, false),
            Err(Refusal::WriteOffTooEarly { allowed_after_sec: 13_600 })
        );
        // ... and written off one second later: slot and notional free, K = 1_000 - 42 = 958.
        assert_eq!(l.write_off(m, 13_601, 10_000, true, false).map(|p| p.notional), Ok(u(42)));
        assert_eq!((l.open_positions, l.open_notional, l.accounted), (0, u(0), u(958)));
        // H - equity = 1_000 - 958 = 42, within 500.
        assert!(l.equity_drawdown_holds());
    }

    #[test]
    fn a_withdrawal_lowers_h_by_exactly_the_amount() {
        let mut l = funded(1_000);
        // H 1_000 - 300 = 700; balance 700; K 700.
        assert!(l.withdraw(u(300)).is_ok());
        assert_eq!((l.balance, l.high_water_mark, l.accounted), (u(700), u(700), u(700)));
        // More than the balance: refused, nothing moves.
        let snapshot = l.clone();
        assert_eq!(l.withdraw(u(701)), Err(Refusal::WithdrawExceedsBalance));
        assert_eq!(l, snapshot);
        assert!(l.withdraw(u(700)).is_ok());
        assert_eq!((l.balance, l.high_water_mark), (u(0), u(0)));
        assert!(drawdown_holds(u(0), u(500), u(500)));
        assert!(!drawdown_holds(u(0), u(501), u(500)));
    }

    /// Issue 14's first finding: lose 450, withdraw what was lost, then put it back. In v2 the redeposit reset the drawdown to 0; here `H - equity` stays 450 through
    /// every movement, so only 50 more can be lost.
    #[test]
    fn withdrawing_and_redepositing_never_refills_the_budget() {
        let m = Address::with_last_byte(7);
        let mut l = funded(10_000);
        // Buy 500 units for 450 and lose it: balance 9_550, H 10_000, H - E = 450.
        l.apply_fill(m, true, u(500), u(450));
        l.redeem(m, true, U256::ZERO).unwrap();
        assert_eq!((l.balance, l.high_water_mark), (u(9_550), u(10_000)));
        let gap = |l: &Ledger| (l.high_water_mark, l.equity());
        // Withdraw the 450 lost: H 10_000 - 450 = 9_550, balance 9_100; H - E = 450.
        let (h0, e0) = gap(&l);
        l.withdraw(u(450)).unwrap();
        let (h1, e1) = gap(&l);
        assert_eq!((h1, e1), (u(9_550), u(9_100)));
        assert!(gap_unchanged(h0, e0, h1, e1));
        // Redeposit it: H 9_550 + 450 = 10_000, balance 9_550; H - E = 450 still.
        l.deposit(u(450), u(450)).unwrap();
        let (h2, e2) = gap(&l);
        assert_eq!((h2, e2), (u(10_000), u(9_550)));
        assert!(gap_unchanged(h1, e1, h2, e2));
        // And the other order: deposit 1_000 then withdraw it: H 11_000 then 10_000.
        l.deposit(u(1_000), u(1_000)).unwrap();
        assert_eq!(l.high_water_mark, u(11_000));
        l.withdraw(u(1_000)).unwrap();
        assert_eq!(gap(&l), (u(10_000), u(9_550)));
        assert_eq!(l.deposit(U256::ZERO, U256::ZERO), Err(Refusal::DepositZero));
    }

    #[test]
    fn a_donation_raises_h_by_its_amount_at_the_next_settlement() {
        let mut l = funded(1_000);
        l.lose(u(200));
        // A clawback of 200: E 800 < K 1_000, a shortfall; H stays 1_000, K = 800.
        assert_eq!(l.settle(), Settlement { donated: U256::ZERO, shortfall: u(200) });
        assert_eq!((l.high_water_mark, l.accounted), (u(1_000), u(800)));
        // A plain transfer of 300: nothing counted until the next settlement, then H 1_000 + 300
        // = 1_300 and K 800 + 300 = 1_100 = E; H - E = 200 before and after.
        l.donate(u(300));
        assert_eq!((l.high_water_mark, l.accounted), (u(1_000), u(800)));
        assert_eq!(l.settle(), Settlement { donated: u(300), shortfall: U256::ZERO });
        assert_eq!((l.high_water_mark, l.accounted, l.balance), (u(1_300), u(1_100), u(1_100)));
        assert!(gap_unchanged(u(1_000), u(800), u(1_300), u(1_100)));
    }

    #[test]
    fn a_fee_on_transfer_token_counts_what_arrived_and_short_payouts_as_losses() {
        let m = Address::with_last_byte(7);
        let mut l = funded(1_000);
        // A 1 % fee: deposit 500, 495 arrive: H 1_000 + 495 = 1_495, K 1_495, balance 1_495.
        l.deposit(u(500), u(495)).unwrap();
        assert_eq!((l.balance, l.high_water_mark, l.accounted), (u(1_495), u(1_495), u(1_495)));
        // 100 UP for 40; UP wins 100 but 99 arrive: K = 1_495 + 100 - 40 = 1_555, E = 1_455 +
        // 99 = 1_554: a shortfall of 1 after the redeem; H = max(1_495, 1_554) = 1_554.
        l.apply_fill(m, true, u(100), u(40));
        let (before, after) = l.redeem_received(m, true, u(100), u(99)).unwrap();
        assert_eq!(before, Settlement::default());
        assert_eq!(after, Settlement { donated: U256::ZERO, shortfall: u(1) });
        assert_eq!((l.balance, l.high_water_mark, l.accounted), (u(1_554), u(1_554), u(1_554)));
    }
}
