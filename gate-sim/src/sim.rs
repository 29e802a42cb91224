//! The adversarial simulator: synthetic binary markets whose books drift around a hidden
//! probability (with venue pathologies: empty sides, off-grid and crossed quotes, values at and
//! above 1e6), models that answer well, randomly or adversarially, positions that settle, and
//! every decision through the gate. Each accepted order is re-checked here, from the bounds
//! alone, against every limit the gate promises; the expected number of violations is zero.

use crate::{
    abi,
    artifact::GateArtifact,
    diff,
    evm::{self, Chain, Deployed, Outcome, RevmChain},
    model::{self, Bounds, Decision, Snapshot, Verdict, PRICE_ONE, REASON_LABELS},
    strategies,
};
use alloy::primitives::{U256, U512};
use proptest::{
    strategy::{BoxedStrategy, Strategy, ValueTree},
    test_runner::TestRunner,
};
use std::time::{Duration, Instant};

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Evm(#[from] evm::Error),
    #[error("the simulation gate did not deploy: {0:?}")]
    Deploy(Deployed),
    #[error("proptest could not generate an answer: {0}")]
    Generate(String),
}

pub type Result<T> = std::result::Result<T, Error>;

/// How the model answers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum ModelKind {
    /// Trades when its (noisy) view of the hidden probability beats the book by a margin.
    Builtin,
    /// Any valid token, trimmed at random, and some garbage.
    Random,
    /// Hostile strings, and valid buys aimed at the worst book, on a venue full of pathologies.
    Hostile,
}

impl ModelKind {
    pub fn name(self) -> &'static str {
        match self {
            Self::Builtin => "builtin",
            Self::Random => "random",
            Self::Hostile => "hostile",
        }
    }
}

#[derive(Clone, Debug)]
pub struct SimConfig {
    pub markets: usize,
    pub steps: usize,
    pub seed: u64,
    pub model: ModelKind,
    pub bounds: Bounds,
    pub initial_collateral: U256,
    pub step_secs: u64,
}

/// The bounds the simulator runs with: band [0.05, 0.95], 50 tUSD of payout per order,
/// 10 minutes of headroom, 8 positions, 250 tUSD at risk (6 decimals).
pub fn default_bounds() -> Bounds {
    Bounds {
        min_price: U256::from(50_000u64),
        max_price: U256::from(950_000u64),
        max_size: U256::from(50_000_000u64),
        min_headroom_secs: 600,
        max_concurrent: 8,
        max_notional: U256::from(250_000_000u64),
    }
}

// --- a small deterministic generator (splitmix64): the simulation must replay from its seed

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, n); 0 when n is 0.
    fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }

    fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi.saturating_sub(lo).saturating_add(1))
    }

    /// True with probability `per_million / 1e6`.
    fn chance(&mut self, per_million: u64) -> bool {
        self.below(PRICE_ONE) < per_million
    }

    fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }
}

// --- markets

const TICKS: [u64; 7] = [0, 1, 1_000, 5_000, 10_000, 333, 30_000];
// Mostly sane grids; 60 tUSD lots (above maxSize) snap the size to zero now and then.
const LOTS: [u64; 10] = [
    0, 1, 1_000_000, 1_000_000, 1_000_000, 3_000_000, 3_000_000, 7_000_000, 10_000_000, 60_000_000,
];
// Venue minimums; 80 tUSD (above maxSize) is one the gate can never meet.
const MIN_QUANTITIES: [u64; 8] = [0, 0, 1, 1_000_000, 1_000_000, 5_000_000, 20_000_000, 80_000_000];

struct Market {
    hidden_p: u64,
    mid: u64,
    tick: u64,
    lot: u64,
    min_quantity: u64,
    expiry: u64,
    resolve_at: u64,
    finalized: bool,
    up_won: bool,
}

impl Market {
    fn new(rng: &mut Rng, now: u64) -> Self {
        let hidden_p = rng.range(20_000, 980_000);
        let expiry = now + rng.range(900, 7_200);
        Self {
            hidden_p,
            mid: rng.range(100_000, 900_000),
            tick: *rng.pick(&TICKS),
            lot: *rng.pick(&LOTS),
            min_quantity: *rng.pick(&MIN_QUANTITIES),
            expiry,
            resolve_at: expiry + rng.range(0, 600),
            finalized: false,
            up_won: false,
        }
    }

    /// Moves the mid toward the hidden probability with noise, and quotes a book around it.
    /// `pathology` (per million) is how often the venue shows something broken.
    fn quote(&mut self, rng: &mut Rng, pathology: u64) -> (U256, U256) {
        let pull = (self.hidden_p as i64 - self.mid as i64) / 20;
        let noise = rng.range(0, 40_000) as i64 - 20_000;
        self.mid = (self.mid as i64 + pull + noise).clamp(1_000, 999_000) as u64;
        let half_spread = rng.range(500, 30_000);
        let snap_down = |v: u64, t: u64| if t == 0 { v } else { v - v % t };
        let bid = snap_down(self.mid.saturating_sub(half_spread).max(1), self.tick);
        let ask =
            snap_down(self.mid + half_spread, self.tick).max(bid + self.tick.max(1)).min(999_999);
        let (mut bid, mut ask) = (U256::from(bid), U256::from(ask));
        if rng.chance(pathology) {
            let weird = [
                U256::ZERO,
                U256::from(1u64),
                U256::from(999_999u64),
                U256::from(PRICE_ONE),
                U256::from(PRICE_ONE + 1),
                U256::MAX,
                U256::from(rng.below(PRICE_ONE)),
                U256::from(rng.next()),
            ];
            match rng.below(3) {
                0 => bid = *rng.pick(&weird),
                1 => ask = *rng.pick(&weird),
                _ => std::mem::swap(&mut bid, &mut ask), // crossed
            }
        }
        (bid, ask)
    }
}

#[derive(Clone, Copy, Default)]
struct Position {
    up_units: U256,
    down_units: U256,
    notional: U256,
}

// --- models

struct Answerer {
    kind: ModelKind,
    runner: TestRunner,
    // Built once: a strategy allocates its tables when it is built, not when it is drawn from.
    valid: BoxedStrategy<Vec<u8>>,
    hostile: BoxedStrategy<Vec<u8>>,
}

impl Answerer {
    fn new(kind: ModelKind, seed: u64) -> Self {
        Self {
            kind,
            runner: diff::seeded_runner(seed, b"sim"),
            valid: strategies::valid_answer().boxed(),
            hostile: strategies::hostile_answer().boxed(),
        }
    }

    fn draw(&mut self, hostile: bool) -> Result<Vec<u8>> {
        let s = if hostile { &self.hostile } else { &self.valid };
        Ok(s.new_tree(&mut self.runner).map_err(|e| Error::Generate(e.to_string()))?.current())
    }

    fn answer(&mut self, rng: &mut Rng, market: &Market, bid: U256, ask: U256) -> Result<Vec<u8>> {
        let dressed = |rng: &mut Rng, v: Verdict| -> Vec<u8> {
            let forms = ["{}", "{}\n", "\"{}\"", " {} ", "'{}'\r\n"];
            rng.pick(&forms).replace("{}", v.token()).into_bytes()
        };
        Ok(match self.kind {
            ModelKind::Builtin => {
                // A decent forecaster: the hidden probability plus noise, traded with a margin.
                let view = (market.hidden_p as i64 + rng.range(0, 60_000) as i64 - 30_000).max(0);
                let view = U256::from(view as u64);
                let margin = U256::from(20_000u64);
                let v = if !ask.is_zero() && view > ask.saturating_add(margin) {
                    Verdict::BuyUp
                } else if !bid.is_zero() && view.saturating_add(margin) < bid {
                    Verdict::BuyDown
                } else {
                    Verdict::Abstain
                };
                dressed(rng, v)
            }
            ModelKind::Random => {
                let hostile = rng.chance(50_000);
                self.draw(hostile)?
            }
            ModelKind::Hostile => {
                if rng.chance(400_000) {
                    self.draw(true)?
                } else {
                    // Buy the side whose price is worst (most expensive), or either at random.
                    let up_price = ask;
                    let down_price = U256::from(PRICE_ONE).saturating_sub(bid);
                    let v = if rng.chance(300_000) {
                        *rng.pick(&[Verdict::BuyUp, Verdict::BuyDown])
                    } else if up_price >= down_price {
                        Verdict::BuyUp
                    } else {
                        Verdict::BuyDown
                    };
                    dressed(rng, v)
                }
            }
        })
    }
}

// --- the gate under simulation: the reference model, or the compiled contract in revm

enum Gate {
    Reference,
    Evm { chain: Box<RevmChain>, address: alloy::primitives::Address },
}

/// The parsed verdict code (or 255 when the answer did not parse) and the decision.
fn decide(
    gate: &mut Gate,
    bounds: &Bounds,
    raw: &[u8],
    snapshot: &Snapshot,
    disagreements: &mut u64,
) -> Result<(u8, Decision)> {
    let reference = match model::parse_verdict(raw) {
        Ok(v) => (v.code(), model::evaluate(bounds, snapshot, v.code())),
        Err(_) => (255, model::evaluate(bounds, snapshot, 255)),
    };
    match gate {
        Gate::Reference => Ok(reference),
        Gate::Evm { chain, address } => {
            // The contract decides; the reference is checked against it on the way.
            let parsed = chain.call(*address, abi::parse_verdict_calldata(raw))?;
            if parsed != diff::expected_parse(raw) {
                *disagreements += 1;
            }
            let code = match &parsed {
                Outcome::Returned(d) if d.len() == 32 => d[31],
                _ => 255,
            };
            let out = chain.call(*address, abi::evaluate_calldata(snapshot, code))?;
            let decision = match &out {
                Outcome::Returned(d) => abi::decode_decision(d),
                _ => None,
            };
            match decision {
                Some(d) => {
                    if (code, d) != reference {
                        *disagreements += 1;
                    }
                    Ok((code, d))
                }
                None => {
                    // `evaluate` must never revert: count it, and refuse the order.
                    *disagreements += 1;
                    Ok((code, Decision { reason: 255, failed_mask: 0, ..Decision::default() }))
                }
            }
        }
    }
}

/// Every promise the gate makes about an accepted order, checked from the bounds and the
/// snapshot alone. `Err` names the first broken promise.
pub fn check_accepted(
    b: &Bounds,
    s: &Snapshot,
    verdict: u8,
    d: &Decision,
) -> std::result::Result<(), String> {
    let one = U256::from(PRICE_ONE);
    let fail = |what: &str| Err(format!("{what}: bounds {b:?}, snapshot {s:?}, decision {d:?}"));
    if d.reason != 0 || d.failed_mask != 0 {
        return fail("not a PASS");
    }
    let up = match verdict {
        1 => true,
        2 => false,
        _ => return fail("accepted a verdict that is not a buy"),
    };
    if s.finalized {
        return fail("accepted on a finalized market");
    }
    if s.expiry_sec <= s.now_sec || s.expiry_sec - s.now_sec < u64::from(b.min_headroom_secs) {
        return fail("accepted inside the expiry headroom");
    }
    if d.price_paid < b.min_price || d.price_paid > b.max_price || d.price_paid >= one {
        return fail("price paid outside the band");
    }
    // The UP limit price sent to the venue, on the tick grid and marketable.
    let limit = if up { d.price_paid } else { one - d.price_paid };
    if !s.tick_size.is_zero() && !(limit % s.tick_size).is_zero() {
        return fail("limit price off the tick grid");
    }
    if up && (s.best_ask.is_zero() || limit < s.best_ask) {
        return fail("BUY_UP limit below the best ask (or no ask)");
    }
    if !up && (s.best_bid.is_zero() || limit > s.best_bid) {
        return fail("BUY_DOWN limit above the best bid (or no bid)");
    }
    if d.quantity.is_zero() || d.quantity > b.max_size || d.quantity < s.min_quantity {
        return fail("quantity outside (0, maxSize] or below the venue minimum");
    }
    if !s.lot_size.is_zero() && !(d.quantity % s.lot_size).is_zero() {
        return fail("quantity off the lot grid");
    }
    // cost covers the worst case and is not more than one unit above it.
    let exact = U512::from(d.quantity) * U512::from(d.price_paid);
    let cost_scaled = U512::from(d.cost) * U512::from(PRICE_ONE);
    if cost_scaled < exact || cost_scaled >= exact + U512::from(PRICE_ONE) {
        return fail("cost is not ceil(quantity * price / 1e6)");
    }
    if s.open_positions >= b.max_concurrent {
        return fail("accepted with the concurrent positions cap reached");
    }
    if U512::from(s.open_notional) + U512::from(d.cost) > U512::from(b.max_notional) {
        return fail("openNotional + cost above maxNotional");
    }
    if d.cost > s.collateral_available {
        return fail("cost above the collateral available");
    }
    Ok(())
}

/// What one simulation run saw.
#[derive(Clone, Debug)]
pub struct SimReport {
    pub config: SimConfig,
    pub backend: &'static str,
    pub decisions: u64,
    pub by_reason: [u64; 12],
    pub by_rule: [u64; 12],
    pub by_verdict: [u64; 4],
    pub violations: u64,
    pub violation_examples: Vec<String>,
    pub disagreements: u64,
    pub markets_settled: u64,
    pub units_bought: U256,
    pub spent: U256,
    pub payout: U256,
    pub final_collateral: U256,
    pub peak_open_notional: U256,
    pub peak_open_positions: u8,
    pub elapsed: Duration,
}

impl SimReport {
    /// Decisions that passed every rule (reason 0).
    pub fn accepted(&self) -> u64 {
        self.by_reason[0]
    }

    pub fn decisions_per_sec(&self) -> f64 {
        self.decisions as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// Runs one simulation. `artifact` set means every decision goes through the compiled contract
/// (in revm), cross-checked against the reference.
pub fn run(config: &SimConfig, artifact: Option<&GateArtifact>) -> Result<SimReport> {
    let started = Instant::now();
    let bounds = config.bounds;
    let mut gate = match artifact {
        None => Gate::Reference,
        Some(a) => {
            let mut chain = RevmChain::new();
            match chain.deploy(a.initcode(&bounds))? {
                Deployed::At(address) => Gate::Evm { chain: Box::new(chain), address },
                other => return Err(Error::Deploy(other)),
            }
        }
    };
    let mut rng = Rng(config.seed ^ 0x5EED_0000_0000_0000);
    let mut answerer = Answerer::new(config.model, config.seed);
    let pathology = match config.model {
        ModelKind::Hostile => 250_000,
        _ => 30_000,
    };
    let mut now: u64 = 1_700_000_000;
    let mut markets: Vec<Market> =
        (0..config.markets).map(|_| Market::new(&mut rng, now)).collect();
    let mut positions: Vec<Option<Position>> = vec![None; config.markets];
    let mut report = SimReport {
        config: config.clone(),
        backend: if artifact.is_some() { "compiled RiskGate in revm" } else { "reference model" },
        decisions: 0,
        by_reason: [0; 12],
        by_rule: [0; 12],
        by_verdict: [0; 4],
        violations: 0,
        violation_examples: Vec::new(),
        disagreements: 0,
        markets_settled: 0,
        units_bought: U256::ZERO,
        spent: U256::ZERO,
        payout: U256::ZERO,
        final_collateral: U256::ZERO,
        peak_open_notional: U256::ZERO,
        peak_open_positions: 0,
        elapsed: Duration::ZERO,
    };
    let mut collateral = config.initial_collateral;
    let mut open_notional = U256::ZERO;
    let mut open_positions: u8 = 0;

    for _ in 0..config.steps {
        now += config.step_secs;
        for (i, market) in markets.iter_mut().enumerate() {
            let (bid, ask) = market.quote(&mut rng, pathology);
            let raw = answerer.answer(&mut rng, market, bid, ask)?;
            let snapshot = Snapshot {
                best_bid: bid,
                best_ask: ask,
                tick_size: U256::from(market.tick),
                lot_size: U256::from(market.lot),
                min_quantity: U256::from(market.min_quantity),
                expiry_sec: market.expiry,
                now_sec: now,
                finalized: market.finalized,
                open_positions,
                open_notional,
                collateral_available: collateral,
            };
            let (code, d) = decide(&mut gate, &bounds, &raw, &snapshot, &mut report.disagreements)?;
            report.decisions += 1;
            report.by_verdict[usize::from(code.min(3))] += 1;
            if let Some(n) = report.by_reason.get_mut(usize::from(d.reason)) {
                *n += 1;
            }
            for (bit, n) in report.by_rule.iter_mut().enumerate() {
                if d.failed_mask & (1 << bit) != 0 {
                    *n += 1;
                }
            }
            if d.accepted() {
                if let Err(what) = check_accepted(&bounds, &snapshot, code, &d) {
                    violation(&mut report, what);
                    continue;
                }
                // Immediate-or-cancel: some lots fill, the rest is refunded at once; the spend is
                // what actually filled, at the limit price, rounded up.
                let lots =
                    if market.lot == 0 { d.quantity } else { d.quantity / U256::from(market.lot) };
                let filled_lots = if rng.chance(700_000) {
                    lots
                } else {
                    U256::from(rng.below(u64::try_from(lots).unwrap_or(u64::MAX).saturating_add(1)))
                };
                let filled = if market.lot == 0 {
                    filled_lots
                } else {
                    filled_lots * U256::from(market.lot)
                };
                let spent = model::cost_ceil(filled, d.price_paid);
                if spent > d.cost {
                    violation(
                        &mut report,
                        format!("spent {spent} above the checked cost {}", d.cost),
                    );
                }
                collateral = collateral.saturating_sub(spent);
                open_notional = open_notional.saturating_add(spent);
                let position = positions[i].get_or_insert_with(|| {
                    open_positions = open_positions.saturating_add(1);
                    Position::default()
                });
                if code == 1 {
                    position.up_units += filled;
                } else {
                    position.down_units += filled;
                }
                position.notional += spent;
                report.units_bought += filled;
                report.spent += spent;
                if open_notional > bounds.max_notional {
                    violation(
                        &mut report,
                        format!("open notional {open_notional} above maxNotional"),
                    );
                }
                if open_positions > bounds.max_concurrent {
                    violation(
                        &mut report,
                        format!("{open_positions} open positions above the cap"),
                    );
                }
                report.peak_open_notional = report.peak_open_notional.max(open_notional);
                report.peak_open_positions = report.peak_open_positions.max(open_positions);
            }
            // Life cycle: resolve after expiry; redeem and replace a final market.
            if market.finalized {
                if let Some(p) = positions[i].take() {
                    let payout = if market.up_won { p.up_units } else { p.down_units };
                    collateral = collateral.saturating_add(payout);
                    open_notional = open_notional.saturating_sub(p.notional);
                    open_positions = open_positions.saturating_sub(1);
                    report.payout += payout;
                }
                report.markets_settled += 1;
                *market = Market::new(&mut rng, now);
            } else if now >= market.resolve_at {
                market.finalized = true;
                market.up_won = rng.below(PRICE_ONE) < market.hidden_p;
            }
        }
    }
    report.final_collateral = collateral;
    report.elapsed = started.elapsed();
    Ok(report)
}

fn violation(report: &mut SimReport, what: String) {
    report.violations += 1;
    if report.violation_examples.len() < 10 {
        report.violation_examples.push(what);
    }
}

fn usdc(v: U256) -> String {
    // 6-decimal collateral shown as units with two decimals (display only).
    let cents = v / U256::from(10_000u64);
    let whole = cents / U256::from(100u64);
    let frac = cents % U256::from(100u64);
    format!("{whole}.{frac:0>2}")
}

/// The markdown section of one run.
pub fn markdown(r: &SimReport, command: &str) -> String {
    use std::fmt::Write;
    let b = &r.config.bounds;
    let mut out = String::new();
    let _ = writeln!(out, "## Model `{}`\n", r.config.model.name());
    let _ = writeln!(out, "Command: `{command}`\n");
    let _ = writeln!(out, "| parameter | value |\n| --- | --- |");
    let _ = writeln!(out, "| gate | {} |", r.backend);
    let _ = writeln!(out, "| seed | {} |", r.config.seed);
    let _ = writeln!(out, "| markets (concurrent slots) | {} |", r.config.markets);
    let _ = writeln!(out, "| steps | {} ({} s each) |", r.config.steps, r.config.step_secs);
    let _ = writeln!(
        out,
        "| band | [{}, {}] ({} .. {}) |",
        model::probability(b.min_price),
        model::probability(b.max_price),
        b.min_price,
        b.max_price
    );
    let _ = writeln!(out, "| maxSize | {} |", b.max_size);
    let _ = writeln!(out, "| minHeadroom | {} s |", b.min_headroom_secs);
    let _ = writeln!(out, "| maxConcurrent | {} |", b.max_concurrent);
    let _ = writeln!(out, "| maxNotional | {} ({} tUSD) |", b.max_notional, usdc(b.max_notional));
    let _ = writeln!(out, "| initial collateral | {} tUSD |\n", usdc(r.config.initial_collateral));

    let _ = writeln!(out, "| decisions | accepted | ABSTAIN | BUY_UP | BUY_DOWN | unparseable | violations | throughput |");
    let _ = writeln!(out, "| --- | --- | --- | --- | --- | --- | --- | --- |");
    let _ = writeln!(
        out,
        "| {} | {} | {} | {} | {} | {} | **{}** | {:.0} decisions/s ({:.2} s) |\n",
        r.decisions,
        r.accepted(),
        r.by_verdict[0],
        r.by_verdict[1],
        r.by_verdict[2],
        r.by_verdict[3],
        r.violations,
        r.decisions_per_sec(),
        r.elapsed.as_secs_f64()
    );
    let _ = writeln!(out, "Per-rule breakdown: *as reason* counts decisions whose lowest failing rule it was; *in mask* counts every decision that failed it.\n");
    let _ = writeln!(out, "| code | label | as reason | in mask |\n| --- | --- | --- | --- |");
    for (code, label) in REASON_LABELS.iter().enumerate() {
        let in_mask = if code == 0 { "-".to_string() } else { r.by_rule[code].to_string() };
        let _ = writeln!(out, "| {code} | {label} | {} | {in_mask} |", r.by_reason[code]);
    }
    let _ = writeln!(out);
    if r.backend != "reference model" {
        let _ = writeln!(
            out,
            "Disagreements between the contract and the reference model: **{}**.\n",
            r.disagreements
        );
    }
    let _ = writeln!(
        out,
        "Markets settled: {}. Bought {} tUSD of payout; spent {} tUSD; paid out {} tUSD; collateral at the end {} tUSD. Peak open notional {} tUSD (cap {}), peak open positions {} (cap {}).\n",
        r.markets_settled,
        usdc(r.units_bought),
        usdc(r.spent),
        usdc(r.payout),
        usdc(r.final_collateral),
        usdc(r.peak_open_notional),
        usdc(b.max_notional),
        r.peak_open_positions,
        b.max_concurrent
    );
    let _ = writeln!(out, "Violations found: **{}**.", r.violations);
    for v in &r.violation_examples {
        let _ = writeln!(out, "- {v}");
    }
    let _ = writeln!(out);
    out
}

/// The checks listed once at the top of the report.
pub const CHECKS: &str = "Every accepted order is re-checked from the bounds and the snapshot alone: a buy verdict; market not finalized; at least `minHeadroom` seconds before expiry; price paid inside [minPrice, maxPrice] and below 1.0; the UP limit price on the tick grid and marketable (BUY_UP at or above the best ask, BUY_DOWN at or below the best bid); quantity on the lot grid, in (0, maxSize] and at least the venue minimum; cost exactly ceil(quantity x price / 1e6); open positions below the cap; openNotional + cost <= maxNotional; cost <= collateral available. After each fill: open notional <= maxNotional, open positions <= maxConcurrent, spend <= checked cost.";

#[cfg(test)]
mod tests {
    use super::*;

    fn u(v: u64) -> U256 {
        U256::from(v)
    }

    /// Band [0.30, 0.70], maxSize 1000, headroom 3600 s, 3 positions, notional 10_000; a book
    /// bid 0.40 / ask 0.45 on a 0.01 tick, lot 10, 10_000 s left.
    fn case() -> (Bounds, Snapshot) {
        let b = Bounds {
            min_price: u(300_000),
            max_price: u(700_000),
            max_size: u(1_000),
            min_headroom_secs: 3_600,
            max_concurrent: 3,
            max_notional: u(10_000),
        };
        let s = Snapshot {
            best_bid: u(400_000),
            best_ask: u(450_000),
            tick_size: u(10_000),
            lot_size: u(10),
            min_quantity: u(10),
            expiry_sec: 20_000,
            now_sec: 10_000,
            finalized: false,
            open_positions: 0,
            open_notional: U256::ZERO,
            collateral_available: u(1_000_000),
        };
        (b, s)
    }

    fn pass(price: u64, quantity: u64, cost: u64) -> Decision {
        Decision {
            reason: 0,
            failed_mask: 0,
            price_paid: u(price),
            quantity: u(quantity),
            cost: u(cost),
        }
    }

    #[test]
    fn the_checker_accepts_a_correct_order_and_flags_each_broken_promise() {
        let (b, s) = case();
        // BUY_UP lifts the ask 450_000 (on the grid); 1000 units; cost = 1000 * 0.45 = 450.
        assert_eq!(check_accepted(&b, &s, 1, &pass(450_000, 1_000, 450)), Ok(()));
        // BUY_DOWN hits the bid 400_000 and pays 1e6 - 400_000 = 600_000; cost 600.
        assert_eq!(check_accepted(&b, &s, 2, &pass(600_000, 1_000, 600)), Ok(()));
        let broken = [
            // not a buy
            (0u8, pass(450_000, 1_000, 450)),
            // cost one unit under and one over ceil(450) = 450
            (1, pass(450_000, 1_000, 449)),
            (1, pass(450_000, 1_000, 451)),
            // 995 is not a multiple of the lot 10 (cost 995 * 0.45 = 447.75 -> 448 is right)
            (1, pass(450_000, 995, 448)),
            // 1010 > maxSize 1000 (cost 454.5 -> 455)
            (1, pass(450_000, 1_010, 455)),
            // 455_000 is off the 10_000 tick (cost 455)
            (1, pass(455_000, 1_000, 455)),
            // 440_000 is below the ask 450_000: not marketable (cost 440)
            (1, pass(440_000, 1_000, 440)),
            // 710_000 is above maxPrice 700_000 (cost 710)
            (1, pass(710_000, 1_000, 710)),
            // DOWN limit 1e6 - 590_000 = 410_000 is above the bid 400_000 (cost 590)
            (2, pass(590_000, 1_000, 590)),
        ];
        for (verdict, d) in broken {
            assert!(check_accepted(&b, &s, verdict, &d).is_err(), "{verdict} {d:?}");
        }
        // A refusal passed off as a PASS.
        let refused = Decision { reason: 5, failed_mask: 1 << 5, ..pass(450_000, 1_000, 450) };
        assert!(check_accepted(&b, &s, 1, &refused).is_err());
        // The state-based limits: finalized, 3599 s of headroom, 3 positions open, notional
        // 9_551 + 450 = 10_001 > 10_000, collateral 449 < 450.
        let d = pass(450_000, 1_000, 450);
        for bad in [
            Snapshot { finalized: true, ..s },
            Snapshot { expiry_sec: 13_599, ..s },
            Snapshot { open_positions: 3, ..s },
            Snapshot { open_notional: u(9_551), ..s },
            Snapshot { collateral_available: u(449), ..s },
        ] {
            assert!(check_accepted(&b, &bad, 1, &d).is_err(), "{bad:?}");
        }
    }
}
