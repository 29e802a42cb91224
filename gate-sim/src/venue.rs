//! A reference venue for the simulator's reference world, written from `IBinaryMarket`'s
//! NatSpec: one shared book in UP prices, resting bids (buy UP) and asks (buy DOWN), immediate-
//! or-cancel buys that match the best levels up to a limit, resolution by the market's resolver
//! after expiry, and redemption. It is not a model of the Solidity venue's internals (gas, ids,
//! escrow bookkeeping): the attacks only need what a fill costs and who ends up holding what.
//! Against the compiled gate the real `BinaryMarket` runs instead.

use crate::model::PRICE_ONE;
use alloy::primitives::{Address, U256};
use std::collections::{BTreeMap, HashMap, VecDeque};

/// Resting orders one immediate-or-cancel order matches at most; the rest of it is cancelled.
/// `IBinaryMarket.MAX_MATCHES_PER_TAKE`.
pub const MAX_MATCHES: usize = crate::model::MAX_MATCHES_PER_TAKE as usize;

/// Why the venue refuses a call (`IBinaryMarket`'s errors, without their data).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum VenueError {
    PriceOffGrid,
    PriceOutOfRange,
    QuantityOffGrid,
    QuantityBelowMinimum,
    TradingClosed,
    OrderWouldCross,
    NotOrderOwner,
    OrderNotActive,
    NotResolver,
    NotYetExpired,
    AlreadyFinalized,
    NotFinalized,
    /// `tickSize * lotSize` is not a positive multiple of 1e6 (the factory's `InvalidGrid`).
    InvalidGrid,
    /// The question is empty or longer than 280 bytes (the factory's `QuestionEmpty` and
    /// `QuestionTooLong`).
    Question(crate::model::QuestionError),
}

#[derive(Clone, Debug)]
struct Resting {
    id: u64,
    owner: Address,
    quantity: U256,
}

/// One binary market.
#[derive(Clone, Debug)]
pub struct Market {
    pub tick: u64,
    pub lot: U256,
    pub min_quantity: U256,
    pub expiry_sec: u64,
    pub resolver: Address,
    pub finalized: bool,
    pub up_won: bool,
    asks: BTreeMap<u64, VecDeque<Resting>>,
    bids: BTreeMap<u64, VecDeque<Resting>>,
    up: HashMap<Address, U256>,
    down: HashMap<Address, U256>,
    next_id: u64,
}

impl Market {
    /// The factory's checks: `tickSize * lotSize` a positive multiple of 1e6, `tickSize < 1e6`,
    /// expiry in the future.
    pub fn new(
        tick: u64,
        lot: U256,
        min_quantity: U256,
        expiry_sec: u64,
        resolver: Address,
        now_sec: u64,
    ) -> Result<Self, VenueError> {
        let product = U256::from(tick).checked_mul(lot);
        let exact = product.is_some_and(|p| !p.is_zero() && (p % U256::from(PRICE_ONE)).is_zero());
        if tick == 0 || tick >= PRICE_ONE || !exact {
            return Err(VenueError::InvalidGrid);
        }
        if expiry_sec <= now_sec {
            return Err(VenueError::TradingClosed);
        }
        Ok(Self {
            tick,
            lot,
            min_quantity,
            expiry_sec,
            resolver,
            finalized: false,
            up_won: false,
            asks: BTreeMap::new(),
            bids: BTreeMap::new(),
            up: HashMap::new(),
            down: HashMap::new(),
            next_id: 1,
        })
    }

    /// The best bid, 0 when there is none.
    pub fn best_bid(&self) -> u64 {
        self.bids.keys().next_back().copied().unwrap_or(0)
    }

    /// The best ask, 0 when there is none.
    pub fn best_ask(&self) -> u64 {
        self.asks.keys().next().copied().unwrap_or(0)
    }

    fn open(&self, now_sec: u64) -> Result<(), VenueError> {
        if self.finalized || now_sec >= self.expiry_sec {
            return Err(VenueError::TradingClosed);
        }
        Ok(())
    }

    /// Rests a bid (buy UP at `price`) or an ask (buy DOWN at UP price `price`).
    pub fn place(
        &mut self,
        owner: Address,
        is_bid: bool,
        price: u64,
        quantity: U256,
        now_sec: u64,
    ) -> Result<u64, VenueError> {
        self.open(now_sec)?;
        if price == 0 || price >= PRICE_ONE {
            return Err(VenueError::PriceOutOfRange);
        }
        let off_grid = price % self.tick;
        if off_grid != 0 {
            return Err(VenueError::PriceOffGrid);
        }
        if quantity.is_zero() || !(quantity % self.lot).is_zero() {
            return Err(VenueError::QuantityOffGrid);
        }
        if quantity < self.min_quantity {
            return Err(VenueError::QuantityBelowMinimum);
        }
        let crosses = if is_bid {
            self.best_ask() != 0 && price >= self.best_ask()
        } else {
            self.best_bid() != 0 && price <= self.best_bid()
        };
        if crosses {
            return Err(VenueError::OrderWouldCross);
        }
        let id = self.next_id;
        self.next_id += 1;
        let side = if is_bid { &mut self.bids } else { &mut self.asks };
        side.entry(price).or_default().push_back(Resting { id, owner, quantity });
        Ok(id)
    }

    /// Cancels a resting order of `owner`.
    pub fn cancel(&mut self, owner: Address, id: u64) -> Result<(), VenueError> {
        for side in [&mut self.bids, &mut self.asks] {
            let found = side.iter().find_map(|(price, level)| {
                level.iter().position(|r| r.id == id).map(|at| (*price, at))
            });
            let Some((price, at)) = found else { continue };
            let level = side.get_mut(&price).ok_or(VenueError::OrderNotActive)?;
            if level[at].owner != owner {
                return Err(VenueError::NotOrderOwner);
            }
            level.remove(at);
            if level.is_empty() {
                side.remove(&price);
            }
            return Ok(());
        }
        Err(VenueError::OrderNotActive)
    }

    /// Immediate-or-cancel. `buy_up`: buys UP from asks priced at or below `up_limit`, paying the
    /// ask. Otherwise buys DOWN from bids priced at or above `up_limit`, paying `1e6 - bid`.
    /// Best levels first, oldest order first, at most `MAX_MATCHES` resting orders. A maker order
    /// a partial fill leaves below `minQuantity` is cancelled (its maker refunded), so no resting
    /// order is ever below the minimum (issue 14). Returns `(filled, spent)`; every on-grid fill
    /// costs an exact integer amount.
    pub fn take(
        &mut self,
        taker: Address,
        buy_up: bool,
        up_limit: u64,
        quantity: U256,
        now_sec: u64,
    ) -> Result<(U256, U256), VenueError> {
        self.open(now_sec)?;
        let one = U256::from(PRICE_ONE);
        let min_quantity = self.min_quantity;
        let (mut filled, mut spent_scaled, mut matches) = (U256::ZERO, U256::ZERO, 0usize);
        let mut fills: Vec<(Address, U256)> = Vec::new();
        while filled < quantity && matches < MAX_MATCHES {
            let best = if buy_up {
                self.asks.keys().next().copied().filter(|&p| p <= up_limit)
            } else {
                self.bids.keys().next_back().copied().filter(|&p| p >= up_limit)
            };
            let Some(price) = best else { break };
            let side = if buy_up { &mut self.asks } else { &mut self.bids };
            let Some(level) = side.get_mut(&price) else { break };
            let Some(front) = level.front_mut() else { break };
            let fill = front.quantity.min(quantity - filled);
            front.quantity -= fill;
            fills.push((front.owner, fill));
            if front.quantity.is_zero() || front.quantity < min_quantity {
                // Filled, or left below the minimum: the remainder is cancelled and refunded.
                level.pop_front();
            }
            if level.is_empty() {
                side.remove(&price);
            }
            let paid_per_unit = if buy_up { U256::from(price) } else { one - U256::from(price) };
            spent_scaled += fill * paid_per_unit;
            filled += fill;
            matches += 1;
        }
        // The maker gets the other side of every pair.
        for (maker, fill) in fills {
            let book = if buy_up { &mut self.down } else { &mut self.up };
            *book.entry(maker).or_default() += fill;
        }
        let book = if buy_up { &mut self.up } else { &mut self.down };
        *book.entry(taker).or_default() += filled;
        // Exact on a valid grid; rounded up all the same, against the taker.
        let spent = spent_scaled.div_ceil(one);
        Ok((filled, spent))
    }

    /// Finalizes the market: only its resolver, only after expiry.
    pub fn resolve(
        &mut self,
        caller: Address,
        up_won: bool,
        now_sec: u64,
    ) -> Result<(), VenueError> {
        if caller != self.resolver {
            return Err(VenueError::NotResolver);
        }
        if now_sec < self.expiry_sec {
            return Err(VenueError::NotYetExpired);
        }
        if self.finalized {
            return Err(VenueError::AlreadyFinalized);
        }
        self.finalized = true;
        self.up_won = up_won;
        Ok(())
    }

    /// Pays one unit per winning unit `holder` has and burns its units.
    pub fn redeem(&mut self, holder: Address) -> Result<U256, VenueError> {
        if !self.finalized {
            return Err(VenueError::NotFinalized);
        }
        let up = self.up.remove(&holder).unwrap_or_default();
        let down = self.down.remove(&holder).unwrap_or_default();
        Ok(if self.up_won { up } else { down })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn u(v: u64) -> U256 {
        U256::from(v)
    }

    #[test]
    fn an_ioc_buy_walks_the_levels_up_to_its_limit_only() {
        let (maker, taker) = (Address::with_last_byte(1), Address::with_last_byte(2));
        // tick 0.01, lot 1 tUSD (1e6 units): 10_000 * 1e6 is a multiple of 1e6.
        let mut m = Market::new(10_000, u(1_000_000), u(1_000_000), 1_000, maker, 0).unwrap();
        m.place(maker, false, 420_000, u(30_000_000), 0).unwrap();
        m.place(maker, false, 600_000, u(100_000_000), 0).unwrap();
        m.place(maker, true, 380_000, u(10_000_000), 0).unwrap();
        assert_eq!((m.best_bid(), m.best_ask()), (380_000, 420_000));
        // A bid at 0.42 would cross the ask.
        assert_eq!(
            m.place(maker, true, 420_000, u(1_000_000), 0),
            Err(VenueError::OrderWouldCross)
        );
        // Buy 100 UP up to 0.50: only the 30 at 0.42 fill, for 30 * 0.42 = 12.6 tUSD.
        assert_eq!(
            m.take(taker, true, 500_000, u(100_000_000), 10),
            Ok((u(30_000_000), u(12_600_000)))
        );
        assert_eq!(m.best_ask(), 600_000);
        // Buy 5 DOWN against bids at or above UP 0.38: 5 * (1 - 0.38) = 3.1 tUSD.
        assert_eq!(
            m.take(taker, false, 380_000, u(5_000_000), 10),
            Ok((u(5_000_000), u(3_100_000)))
        );
        // Too early to resolve; then DOWN wins: the taker redeems its 5 DOWN.
        assert_eq!(m.resolve(maker, false, 999), Err(VenueError::NotYetExpired));
        assert_eq!(m.resolve(taker, false, 1_000), Err(VenueError::NotResolver));
        m.resolve(maker, false, 1_000).unwrap();
        assert_eq!(m.redeem(taker), Ok(u(5_000_000)));
        assert_eq!(m.redeem(taker), Ok(U256::ZERO));
    }

    #[test]
    fn a_partial_fill_never_leaves_a_resting_order_below_the_minimum() {
        let (maker, taker) = (Address::with_last_byte(1), Address::with_last_byte(2));
        // lot 1 tUSD, minimum 5 tUSD; one ask of 12 tUSD at 0.42, another of 10 at 0.43.
        let mut m = Market::new(10_000, u(1_000_000), u(5_000_000), 1_000, maker, 0).unwrap();
        m.place(maker, false, 420_000, u(12_000_000), 0).unwrap();
        m.place(maker, false, 430_000, u(10_000_000), 0).unwrap();
        // Taking 8 leaves 4 < 5 at 0.42: the 4 are cancelled, the best ask becomes 0.43.
        assert_eq!(m.take(taker, true, 500_000, u(8_000_000), 1), Ok((u(8_000_000), u(3_360_000))));
        assert_eq!(m.best_ask(), 430_000);
        // Taking 5 of the 10 leaves exactly the minimum: it stays.
        assert_eq!(m.take(taker, true, 500_000, u(5_000_000), 1), Ok((u(5_000_000), u(2_150_000))));
        assert_eq!(m.best_ask(), 430_000);
    }

    #[test]
    fn an_ioc_matches_at_most_64_resting_orders() {
        let (maker, taker) = (Address::with_last_byte(1), Address::with_last_byte(2));
        // tick 0.01, lot 100 units (1e4 * 100 = 1e6), minimum 100: 70 one-lot asks at 0.42.
        let mut m = Market::new(10_000, u(100), u(100), 1_000, maker, 0).unwrap();
        for _ in 0..70 {
            m.place(maker, false, 420_000, u(100), 0).unwrap();
        }
        // 64 matches of 100 = 6_400 units for 6_400 * 0.42 = 2_688; the rest is dropped.
        assert_eq!(m.take(taker, true, 420_000, u(100_000), 1), Ok((u(6_400), u(2_688))));
    }

    #[test]
    fn the_factory_grid_rule() {
        let r = Address::with_last_byte(1);
        assert!(Market::new(10_000, u(100), u(1), 10, r, 0).is_ok());
        // 10_000 * 99 = 990_000 is not a multiple of 1e6.
        assert_eq!(Market::new(10_000, u(99), u(1), 10, r, 0).err(), Some(VenueError::InvalidGrid));
        assert_eq!(Market::new(0, u(100), u(1), 10, r, 0).err(), Some(VenueError::InvalidGrid));
        assert_eq!(
            Market::new(10_000, u(100), u(1), 0, r, 0).err(),
            Some(VenueError::TradingClosed)
        );
    }
}
