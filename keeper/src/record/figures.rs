//! What one decision row shows and earns, read one way for every page: RESULTS.md, its chart
//! and the floor. Prices are shown as probabilities and amounts in collateral units with the
//! token's symbol; a row's P&L, whether its side won, and the calibration of the prices paid
//! are defined here once.
//!
//! The calibration and the Brier score are kept as integers (prices in 1e6 units, squared
//! errors in 1e-12 units), so a sum folded row by row is exact and the pages are the same
//! bytes whatever order the sums were taken in.

use crate::{
    domain::decision::DecisionRow,
    domain::format::{int, units},
    kit::bindings::verdict,
};
use serde::{Deserialize, Serialize};

/// Calibration buckets: the average price paid, in tenths.
pub const BUCKETS: usize = 10;
/// A calibration bucket with fewer settled fills than this is said to be too small to mean
/// anything.
pub const CALIBRATION_MIN_FILLS: u64 = 10;
/// One probability in price units (1e6).
const ONE: i128 = crate::kit::bindings::PRICE_ONE as i128;

/// One price level of 1e6 base units as a probability: "0.45", "0.125", "1".
pub fn prob(v: &str) -> String {
    let n = int(v);
    if n <= 0 {
        return "0".into();
    }
    let s = units(&n.to_string());
    let s = s.trim_end_matches('0');
    let s = s.strip_suffix('.').unwrap_or(s);
    if let Some((_, frac)) = s.split_once('.') {
        if frac.len() == 1 {
            return format!("{s}0");
        }
    }
    s.to_string()
}

/// `v` (collateral base units, 6 decimals) with the token's symbol: "4.000000 tUSD".
pub fn amount(v: &str, symbol: &str) -> String {
    format!("{} {symbol}", units(v))
}

/// An integer amount of base units with the symbol.
pub fn amount_of(v: i128, symbol: &str) -> String {
    amount(&v.to_string(), symbol)
}

/// Outcome tokens (1e6 base units a token, paying 1.0 of collateral if their side wins) as a
/// decimal: "10.000000".
pub fn tokens(v: &str) -> String {
    units(v)
}

/// The verdict's name, as the gate's parser names it.
pub fn verdict_name(code: u8) -> &'static str {
    match code {
        verdict::ABSTAIN => "ABSTAIN",
        verdict::BUY_UP => "BUY_UP",
        verdict::BUY_DOWN => "BUY_DOWN",
        verdict::INVALID => "INVALID",
        _ => "UNKNOWN",
    }
}

/// The side a verdict buys, if any.
pub fn side(code: u8) -> Option<&'static str> {
    match code {
        verdict::BUY_UP => Some("UP"),
        verdict::BUY_DOWN => Some("DOWN"),
        _ => None,
    }
}

/// What one outcome token of a side is worth at the book the gate read (UP prices, 1e6
/// units): UP sells at the best bid, DOWN at 1 − the best ask; a side with no such price is
/// marked at 0. The floor and RESULTS.md mark open positions with it.
pub fn mark_price(up: bool, best_bid: &str, best_ask: &str) -> i128 {
    if up {
        int(best_bid).clamp(0, ONE)
    } else {
        let a = int(best_ask);
        if a <= 0 || a >= ONE {
            0
        } else {
            ONE - a
        }
    }
}

/// What one decision row earned, once its position closed: its share of the position's payout
/// (units of the winning side it bought, of all the winning side's units) less what it spent; a
/// row whose position was written off and never settled lost what it spent. None while open.
pub fn row_pnl(d: &DecisionRow) -> Option<i128> {
    let spent = int(&d.spent);
    if int(&d.filled) == 0 {
        return None;
    }
    if let Some(s) = &d.settlement {
        let won = row_won(d)?;
        let winning = int(if s.up_won { &s.up_units } else { &s.down_units });
        let payout = if won && winning > 0 { int(&s.payout) * int(&d.filled) / winning } else { 0 };
        return Some(payout - spent);
    }
    d.write_off.as_ref().map(|_| -spent)
}

/// Whether the side this row bought won (None before settlement or without a side).
pub fn row_won(d: &DecisionRow) -> Option<bool> {
    let s = d.settlement.as_ref()?;
    match d.verdict {
        verdict::BUY_UP => Some(s.up_won),
        verdict::BUY_DOWN => Some(!s.up_won),
        _ => None,
    }
}

/// The average price a fill paid per unit (1e6 units), where something was bought.
pub fn paid(d: &DecisionRow) -> Option<i128> {
    d.average_price_paid.as_deref().map(int).filter(|p| *p > 0)
}

/// A settled fill: the average price it paid (1e6 units) and whether its side won.
pub fn settled_fill(d: &DecisionRow) -> Option<(i128, bool)> {
    Some((paid(d)?, row_won(d)?))
}

/// (price − outcome)² in 1e-12 units: the row's term of the Brier score.
pub fn squared_error(price: i128, won: bool) -> i128 {
    let e = price - if won { ONE } else { 0 };
    e * e
}

/// A sum of squared errors over `n` fills as a Brier score.
pub fn brier(squares: i128, n: u64) -> Option<f64> {
    (n > 0).then(|| squares as f64 / (ONE * ONE) as f64 / n as f64)
}

/// An amount of wei as the chain's native coin, to 18 places with trailing zeros cut (at least
/// 6 kept): "0.000151875".
pub fn native(wei: u128) -> String {
    let digits = format!("{wei:0>19}");
    let (whole, frac) = digits.split_at(digits.len() - 18);
    let mut frac = frac.trim_end_matches('0').to_string();
    while frac.len() < 6 {
        frac.push('0');
    }
    format!("{whole}.{frac}")
}

/// A gas price with its unit: gwei to 3 places ("1.875 gwei"), or wei below 0.001 gwei
/// (a local chain's base fee falls to a few wei: "7 wei", not "0.000 gwei").
pub fn gas_price(wei: u128) -> String {
    if wei < 1_000_000 {
        return format!("{wei} wei");
    }
    format!("{}.{:03} gwei", wei / 1_000_000_000, wei % 1_000_000_000 / 1_000_000)
}

/// A fraction shown as a percentage with one decimal: "41.7%".
pub fn percent(num: i128, den: i128) -> String {
    ratio((den != 0).then(|| num as f64 / den as f64))
}

/// An optional ratio as a percentage to one place, "n/a" when there is none.
pub fn ratio(r: Option<f64>) -> String {
    r.map(|r| format!("{:.1}%", r * 100.0)).unwrap_or_else(|| "n/a".into())
}

/// One bucket of settled fills, folded.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct BucketTally {
    pub count: u64,
    pub won: u64,
    /// Sum of the prices paid, 1e6 units.
    pub prices: i128,
}

/// The calibration of the prices paid, folded one settled fill at a time.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct CalibrationTally {
    pub buckets: [BucketTally; BUCKETS],
    pub settled: u64,
    pub won: u64,
    /// Sum of (price − outcome)², 1e-12 units.
    pub squares: i128,
}

impl CalibrationTally {
    /// Folds a row in; rows that are not a settled fill change nothing.
    pub fn add(&mut self, d: &DecisionRow) {
        let Some((price, won)) = settled_fill(d) else { return };
        let i = usize::try_from(price * BUCKETS as i128 / ONE).unwrap_or(0).min(BUCKETS - 1);
        let b = &mut self.buckets[i];
        b.count += 1;
        b.won += u64::from(won);
        b.prices += price;
        self.settled += 1;
        self.won += u64::from(won);
        self.squares += squared_error(price, won);
    }

    /// won / settled, when any settled.
    pub fn win_rate(&self) -> Option<f64> {
        (self.settled > 0).then(|| self.won as f64 / self.settled as f64)
    }

    pub fn brier(&self) -> Option<f64> {
        brier(self.squares, self.settled)
    }

    /// As the pages and `GET /api/calibration` show it.
    pub fn view(&self) -> Calibration {
        let buckets = self
            .buckets
            .iter()
            .enumerate()
            .map(|(i, b)| Bucket {
                lo: format!("{:.1}", i as f64 / BUCKETS as f64),
                hi: format!("{:.1}", (i + 1) as f64 / BUCKETS as f64),
                count: b.count,
                won: b.won,
                mean_price: (b.count > 0).then(|| b.prices as f64 / ONE as f64 / b.count as f64),
                win_rate: (b.count > 0).then(|| b.won as f64 / b.count as f64),
            })
            .collect();
        Calibration { buckets, settled: self.settled, brier: self.brier() }
    }
}

/// One calibration bucket: settled fills whose average price paid fell in `[lo, hi)`, and how
/// often their side won.
#[derive(Debug, Clone, Serialize)]
pub struct Bucket {
    pub lo: String,
    pub hi: String,
    pub count: u64,
    pub won: u64,
    /// The mean price paid in the bucket, as a probability.
    pub mean_price: Option<f64>,
    pub win_rate: Option<f64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Calibration {
    pub buckets: Vec<Bucket>,
    pub settled: u64,
    /// Mean of (price paid − outcome)² over the settled fills.
    pub brier: Option<f64>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_down_position_is_marked_at_one_minus_the_ask_and_no_price_marks_it_at_zero() {
        // UP sells at the best bid: 0.40. DOWN sells at 1 − the UP ask: 1 − 0.45 = 0.55.
        assert_eq!(mark_price(true, "400000", "450000"), 400_000);
        assert_eq!(mark_price(false, "400000", "450000"), 550_000);
        // No bid, or no ask (0, or the book's "none" of 1.0 and above): nothing to sell at.
        assert_eq!(mark_price(true, "0", "450000"), 0);
        assert_eq!(mark_price(false, "400000", "0"), 0);
        assert_eq!(mark_price(false, "400000", "1000000"), 0);
    }

    #[test]
    fn prices_read_as_probabilities() {
        assert_eq!(prob("450000"), "0.45");
        assert_eq!(prob("125000"), "0.125");
        assert_eq!(prob("1000000"), "1");
        assert_eq!(prob("50000"), "0.05");
        assert_eq!(prob("0"), "0");
    }

    #[test]
    fn the_brier_score_is_exact_integer_arithmetic() {
        // Paid 0.40 and won: (0.40 − 1)² = 0.36; paid 0.25 and lost: 0.25² = 0.0625.
        let a = squared_error(400_000, true);
        let b = squared_error(250_000, false);
        assert_eq!(a, 360_000_000_000);
        assert_eq!(b, 62_500_000_000);
        // (0.36 + 0.0625) / 2 = 0.21125
        assert_eq!(brier(a + b, 2), Some(0.21125));
        assert_eq!(brier(0, 0), None);
        assert_eq!(percent(5, 12), "41.7%");
        assert_eq!(percent(1, 0), "n/a");
        assert_eq!(ratio(None), "n/a");
        // 0.4166 * 100 = 41.66 -> one place: 41.7.
        assert_eq!(ratio(Some(0.4166)), "41.7%");
    }

    #[test]
    fn fees_read_in_the_native_coin() {
        // 151,875 gas at 1 gwei = 151,875 × 1e9 wei = 0.000151875.
        assert_eq!(native(151_875 * 1_000_000_000), "0.000151875");
        assert_eq!(native(0), "0.000000");
        assert_eq!(native(2_500_000_000_000_000_000), "2.500000");
        assert_eq!(gas_price(1_875_000_000), "1.875 gwei");
        // 1,000,000 wei = 0.001 gwei, the smallest shown in gwei; below it, wei.
        assert_eq!(gas_price(1_000_000), "0.001 gwei");
        assert_eq!(gas_price(999_999), "999999 wei");
        assert_eq!(gas_price(7), "7 wei");
    }
}
