//! The market-model simulator: synthetic binary markets whose books drift around a hidden
//! probability (with venue pathologies: empty sides, off-grid and crossed quotes, values at and
//! above 1e6, untrusted resolvers, far expiries, resolvers that never act), models that answer
//! well, randomly or adversarially, a keeper that quotes from the book it read (or, under the
//! hostile model, a compromised one), books that move between the read and the submission,
//! immediate-or-cancel fills up to the order's limit, positions that settle or are written off,
//! and every decision through the gate. Each accepted order and each kept fill is re-checked here
//! (`checks`), and after every step the drawdown invariant and "no slot held past expiry +
//! writeOffGrace"; the expected number of violations is zero. The gate's accounting is the
//! reference [`Ledger`]; `evaluate` is the reference model or, with `--evm`, the compiled
//! contract in revm. The attacks that need the real venue are in `adversary`.

use crate::{
    abi,
    artifact::GateArtifact,
    checks, diff,
    evm::{self, Chain, Deployed, Outcome, RevmChain},
    ledger::{self, Ledger},
    model::{
        self, Bounds, Decision, GateConfig, Quote, Snapshot, Verdict, PRICE_ONE, REASON_LABELS,
    },
    strategies, world,
};
use alloy::primitives::{Address, U256, U512};
use proptest::{
    strategy::{BoxedStrategy, Strategy, ValueTree},
    test_runner::TestRunner,
};
use std::time::{Duration, Instant};

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error(transparent)]
    Evm(#[from] evm::Error),
    #[error(transparent)]
    Fixture(#[from] diff::Error),
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
    /// Hostile strings, and valid buys aimed at the worst book, on a venue full of pathologies,
    /// through a keeper that is compromised a third of the time.
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
/// 10 minutes of headroom, 8 positions, 250 tUSD at risk, a 7-day horizon, 500 tUSD of
/// drawdown, the one-hour write-off floor and a 25 % minimum fill (6 decimals).
pub fn default_bounds() -> Bounds {
    Bounds {
        min_price: U256::from(50_000u64),
        max_price: U256::from(950_000u64),
        max_size: U256::from(50_000_000u64),
        min_headroom_secs: 600,
        max_concurrent: 8,
        max_notional: U256::from(250_000_000u64),
        max_horizon_secs: 604_800,
        max_drawdown: U256::from(500_000_000u64),
        write_off_grace_secs: model::WRITE_OFF_GRACE_FLOOR_SECS,
        min_fill_bps: 2_500,
    }
}

/// The keeper's default slippage and answer lifetime (issue 7).
pub const KEEPER_SLIPPAGE_BPS: u64 = 50;
pub const KEEPER_TTL_SECS: u64 = 60;

// --- a small deterministic generator (splitmix64): the simulation must replay from its seed

pub(crate) struct Rng(pub(crate) u64);

impl Rng {
    pub(crate) fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in [0, n); 0 when n is 0.
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        if n == 0 {
            0
        } else {
            self.next() % n
        }
    }

    pub(crate) fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi.saturating_sub(lo).saturating_add(1))
    }

    /// True with probability `per_million / 1e6`.
    pub(crate) fn chance(&mut self, per_million: u64) -> bool {
        self.below(PRICE_ONE) < per_million
    }

    pub(crate) fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
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

/// How often (per million) a market of each model is hostile in each way:
/// (untrusted resolver, never resolves, expiry past the horizon, untrusted creator).
fn market_hazards(model: ModelKind) -> (u64, u64, u64, u64) {
    match model {
        ModelKind::Builtin => (0, 20_000, 0, 0),
        ModelKind::Random => (50_000, 50_000, 20_000, 50_000),
        ModelKind::Hostile => (150_000, 100_000, 100_000, 150_000),
    }
}

struct Market {
    /// A fresh address per market, the key of its position.
    address: Address,
    hidden_p: u64,
    mid: u64,
    tick: u64,
    lot: u64,
    min_quantity: u64,
    expiry: u64,
    resolve_at: u64,
    resolver_trusted: bool,
    /// Created by one of the trusted creators (issue 14).
    creator_trusted: bool,
    never_resolves: bool,
    finalized: bool,
    up_won: bool,
}

impl Market {
    fn new(rng: &mut Rng, now: u64, serial: u64, model: ModelKind) -> Self {
        let (untrusted, silent, far, outsider) = market_hazards(model);
        let hidden_p = rng.range(20_000, 980_000);
        let expiry = if rng.chance(far) {
            now + rng.range(604_801, 700_000)
        } else {
            now + rng.range(900, 7_200)
        };
        let mut bytes = [0xbb; 20];
        bytes[12..].copy_from_slice(&serial.to_be_bytes());
        Self {
            address: Address::new(bytes),
            hidden_p,
            mid: rng.range(100_000, 900_000),
            tick: *rng.pick(&TICKS),
            lot: *rng.pick(&LOTS),
            min_quantity: *rng.pick(&MIN_QUANTITIES),
            expiry,
            resolve_at: expiry + rng.range(0, 600),
            resolver_trusted: !rng.chance(untrusted),
            creator_trusted: !rng.chance(outsider),
            never_resolves: rng.chance(silent),
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

/// The keeper's quote for `raw` on the book it read. The hostile model's keeper is compromised a
/// third of the time: it quotes the ceiling (or 2^256 - 1) with no deadline, or a stale one.
fn keeper_quote(
    rng: &mut Rng,
    kind: ModelKind,
    raw: &[u8],
    bid: U256,
    ask: U256,
    now: u64,
) -> Quote {
    let verdict = model::parse_verdict(raw).ok();
    if kind == ModelKind::Hostile && rng.chance(333_333) {
        return match rng.below(3) {
            0 => Quote { max_price_paid: U256::from(PRICE_ONE), deadline_sec: u64::MAX },
            1 => Quote { max_price_paid: U256::MAX, deadline_sec: u64::MAX },
            _ => Quote { max_price_paid: U256::MAX, deadline_sec: now.saturating_sub(1) },
        };
    }
    // A book value the keeper cannot read as a price is shown to it as an empty side.
    let seen = |v: U256| u64::try_from(v).ok().filter(|&p| p < PRICE_ONE).unwrap_or(0);
    world::keeper_quote(verdict, seen(bid), seen(ask), now, KEEPER_SLIPPAGE_BPS, KEEPER_TTL_SECS)
}

// --- the gate under simulation: the reference model, or the compiled contract in revm

enum Gate {
    Reference,
    Evm { chain: Box<RevmChain>, address: Address },
}

/// The parsed verdict code (or 255 when the answer did not parse) and the decision.
fn decide(
    gate: &mut Gate,
    bounds: &Bounds,
    raw: &[u8],
    snapshot: &Snapshot,
    quote: &Quote,
    disagreements: &mut u64,
) -> Result<(u8, Decision)> {
    let reference = match model::parse_verdict(raw) {
        Ok(v) => (v.code(), model::evaluate(bounds, snapshot, quote, v.code())),
        Err(_) => (255, model::evaluate(bounds, snapshot, quote, 255)),
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
            let out = chain.call(*address, abi::evaluate_calldata(snapshot, quote, code))?;
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

/// What one simulation run saw.
#[derive(Clone, Debug)]
pub struct SimReport {
    pub config: SimConfig,
    pub backend: &'static str,
    pub decisions: u64,
    pub by_reason: [u64; model::REASON_COUNT],
    pub by_rule: [u64; model::REASON_COUNT],
    pub by_verdict: [u64; 4],
    pub violations: u64,
    pub violation_examples: Vec<String>,
    pub disagreements: u64,
    pub markets_settled: u64,
    pub written_off: u64,
    pub units_bought: U256,
    pub spent: U256,
    pub payout: U256,
    pub final_collateral: U256,
    pub final_high_water_mark: U256,
    /// The largest `H - balance` seen after any step (the invariant bounds it by maxDrawdown).
    pub peak_drawdown: U256,
    pub peak_open_notional: U256,
    pub peak_open_positions: u8,
    pub elapsed: Duration,
}

impl SimReport {
    /// Decisions that passed every rule and kept their fill (reason 0).
    pub fn accepted(&self) -> u64 {
        self.by_reason[0]
    }

    pub fn decisions_per_sec(&self) -> f64 {
        self.decisions as f64 / self.elapsed.as_secs_f64().max(1e-9)
    }
}

/// The gate for a simulation: the reference, or the compiled contract deployed in revm against a
/// real `MarketFactory` (the constructor reads its collateral).
fn open_gate(config: &SimConfig, artifact: Option<&GateArtifact>) -> Result<Gate> {
    let Some(a) = artifact else { return Ok(Gate::Reference) };
    let mut chain = RevmChain::new();
    let fixture = diff::Fixture::deploy(&mut chain, a)?;
    let gate_config = GateConfig {
        bounds: config.bounds,
        trusted_resolvers: vec![world::HONEST_RESOLVER],
        trusted_creators: vec![world::MAKER],
        keeper: abi::DUMMY_KEEPER,
        collateral: abi::DUMMY_COLLATERAL,
        factory_collateral: abi::DUMMY_COLLATERAL,
    };
    match chain.deploy(a.initcode(&gate_config, fixture.factory))? {
        Deployed::At(address) => Ok(Gate::Evm { chain: Box::new(chain), address }),
        other => Err(Error::Deploy(other)),
    }
}

/// An immediate-or-cancel fill of an accepted order: some lots fill (all of them 70 % of the
/// time), the first part at the price paid and the rest at levels up to the limit; the spend is
/// rounded up against the gate.
fn fill(rng: &mut Rng, market: &Market, d: &Decision, limit: U256) -> (U256, U256) {
    let lot = U256::from(market.lot);
    let lots = if lot.is_zero() { d.quantity } else { d.quantity / lot };
    let filled_lots = if rng.chance(700_000) {
        lots
    } else {
        U256::from(rng.below(u64::try_from(lots).unwrap_or(u64::MAX).saturating_add(1)))
    };
    let filled = if lot.is_zero() { filled_lots } else { filled_lots * lot };
    let at_best = filled * U256::from(rng.range(0, 100)) / U256::from(100u64);
    let deeper = filled - at_best;
    let scaled =
        U512::from(at_best) * U512::from(d.price_paid) + U512::from(deeper) * U512::from(limit);
    let spent = model::narrow_saturating(scaled.div_ceil(U512::from(PRICE_ONE)));
    (filled, spent)
}

/// Runs one simulation. `artifact` set means every decision goes through the compiled contract's
/// `evaluate` (in revm), cross-checked against the reference.
pub fn run(config: &SimConfig, artifact: Option<&GateArtifact>) -> Result<SimReport> {
    let started = Instant::now();
    let bounds = config.bounds;
    let mut gate = open_gate(config, artifact)?;
    let mut rng = Rng(config.seed ^ 0x5EED_0000_0000_0000);
    let mut answerer = Answerer::new(config.model, config.seed);
    let (pathology, moved_book) = match config.model {
        ModelKind::Hostile => (250_000, 200_000),
        _ => (30_000, 50_000),
    };
    let mut now: u64 = 1_700_000_000;
    let mut serial = 0u64;
    let mut markets: Vec<Market> = (0..config.markets)
        .map(|_| {
            serial += 1;
            Market::new(&mut rng, now, serial, config.model)
        })
        .collect();
    // Written-off markets that may still resolve late, and be redeemed then.
    let mut orphans: Vec<Market> = Vec::new();
    let mut report = SimReport {
        config: config.clone(),
        backend: if artifact.is_some() { "compiled RiskGate in revm" } else { "reference model" },
        decisions: 0,
        by_reason: [0; model::REASON_COUNT],
        by_rule: [0; model::REASON_COUNT],
        by_verdict: [0; 4],
        violations: 0,
        violation_examples: Vec::new(),
        disagreements: 0,
        markets_settled: 0,
        written_off: 0,
        units_bought: U256::ZERO,
        spent: U256::ZERO,
        payout: U256::ZERO,
        final_collateral: U256::ZERO,
        final_high_water_mark: U256::ZERO,
        peak_drawdown: U256::ZERO,
        peak_open_notional: U256::ZERO,
        peak_open_positions: 0,
        elapsed: Duration::ZERO,
    };
    // Funded by a plain transfer before the first call: the first settlement counts it.
    let mut ledger = Ledger::new(bounds);
    ledger.donate(config.initial_collateral);

    for _ in 0..config.steps {
        now += config.step_secs;
        // Housekeeping first: anyone writes off a position whose market stayed unresolved past
        // expiry + writeOffGrace, and the market is replaced.
        for market in &mut markets {
            let grace_end = market.expiry + u64::from(bounds.write_off_grace_secs);
            if !market.never_resolves || now <= grace_end {
                continue;
            }
            if ledger.positions.contains_key(&market.address) {
                match ledger.write_off(market.address, now, market.expiry, false, false) {
                    Ok(_) => report.written_off += 1,
                    Err(e) => violation(&mut report, format!("write-off refused: {e:?}")),
                }
            }
            serial += 1;
            let replaced =
                std::mem::replace(market, Market::new(&mut rng, now, serial, config.model));
            // One in four silent resolvers wakes up later; the kept claim then redeems.
            if rng.chance(250_000) && ledger.positions.contains_key(&replaced.address) {
                orphans.push(replaced);
            }
        }
        for i in 0..markets.len() {
            let market = &mut markets[i];
            let (bid, ask) = market.quote(&mut rng, pathology);
            let raw = answerer.answer(&mut rng, market, bid, ask)?;
            let quote = keeper_quote(&mut rng, config.model, &raw, bid, ask, now);
            // Between the read and the submission the book may move against the gate (a
            // sandwich), and time may pass.
            let (mut bid_now, mut ask_now, mut submit_at) = (bid, ask, now);
            if rng.chance(moved_book) {
                let step = U256::from(market.tick.max(1) * rng.range(1, 30));
                ask_now = ask_now.saturating_add(step);
                bid_now = bid_now.saturating_sub(step);
                submit_at += rng.range(0, 2 * KEEPER_TTL_SECS);
            }
            let is_buy =
                matches!(model::parse_verdict(&raw), Ok(Verdict::BuyUp | Verdict::BuyDown));
            if is_buy {
                // submitVerdict settles the account (and raises H) before evaluating a buy.
                ledger.settle();
            }
            let position = ledger.position(market.address);
            let snapshot = Snapshot {
                best_bid: bid_now,
                best_ask: ask_now,
                tick_size: U256::from(market.tick),
                lot_size: U256::from(market.lot),
                min_quantity: U256::from(market.min_quantity),
                expiry_sec: market.expiry,
                now_sec: submit_at,
                finalized: market.finalized,
                open_positions: ledger.open_positions,
                open_notional: ledger.open_notional,
                collateral_available: ledger.balance,
                resolver_trusted: market.resolver_trusted,
                held_side: position.held_side(),
                high_water_mark: ledger.high_water_mark,
                creator_trusted: market.creator_trusted,
            };
            let (code, mut d) =
                decide(&mut gate, &bounds, &raw, &snapshot, &quote, &mut report.disagreements)?;
            report.decisions += 1;
            report.by_verdict[usize::from(code.min(3))] += 1;
            if d.accepted() {
                let side = if code == 1 { Verdict::BuyUp } else { Verdict::BuyDown };
                let limit =
                    model::order_limit(&bounds, &snapshot, &quote, side).unwrap_or_default();
                if let Err(what) =
                    checks::check_accepted(&bounds, &snapshot, &quote, code, &d, limit)
                {
                    violation(&mut report, what);
                } else {
                    let (filled, spent) = fill(&mut rng, market, &d, limit);
                    if model::fill_below_minimum(&bounds, d.quantity, filled) {
                        // Rule 18: undone, nothing moves, no slot.
                        d = Decision {
                            reason: model::REASON_FILL_BELOW_MINIMUM,
                            failed_mask: 1 << model::REASON_FILL_BELOW_MINIMUM,
                            ..Decision::default()
                        };
                    } else {
                        if let Err(what) =
                            checks::check_kept_fill(&bounds, &d, limit, filled, spent)
                        {
                            violation(&mut report, what);
                        }
                        ledger.apply_fill(market.address, code == 1, filled, spent);
                        report.units_bought += filled;
                        report.spent += spent;
                        if ledger.open_notional > bounds.max_notional {
                            let n = ledger.open_notional;
                            violation(&mut report, format!("open notional {n} above maxNotional"));
                        }
                        if ledger.open_positions > bounds.max_concurrent {
                            let n = ledger.open_positions;
                            violation(&mut report, format!("{n} open positions above the cap"));
                        }
                    }
                }
            }
            if let Some(n) = report.by_reason.get_mut(usize::from(d.reason)) {
                *n += 1;
            }
            for (bit, n) in report.by_rule.iter_mut().enumerate() {
                if d.failed_mask & (1 << bit) != 0 {
                    *n += 1;
                }
            }
            report.peak_open_notional = report.peak_open_notional.max(ledger.open_notional);
            report.peak_open_positions = report.peak_open_positions.max(ledger.open_positions);
            // Life cycle: resolve after expiry (unless the resolver never acts); redeem and
            // replace a final market; write off one that stays unresolved past the grace.
            let market = &mut markets[i];
            if market.finalized {
                if ledger.positions.contains_key(&market.address) {
                    let p = ledger.position(market.address);
                    let payout = if market.up_won { p.up_units } else { p.down_units };
                    if ledger.redeem(market.address, true, payout).is_ok() {
                        report.payout += payout;
                    }
                }
                report.markets_settled += 1;
                serial += 1;
                *market = Market::new(&mut rng, now, serial, config.model);
            } else if !market.never_resolves && now >= market.resolve_at {
                market.finalized = true;
                market.up_won = rng.below(PRICE_ONE) < market.hidden_p;
            }
            step_invariants(&mut report, &ledger, &markets, now);
        }
        // Late resolutions of written-off markets: the claim still collects.
        if !orphans.is_empty() && rng.chance(10_000) {
            let m = orphans.swap_remove(0);
            let p = ledger.position(m.address);
            let payout = if rng.below(PRICE_ONE) < m.hidden_p { p.up_units } else { p.down_units };
            if ledger.redeem(m.address, true, payout).is_ok() {
                report.payout += payout;
            }
        }
    }
    report.final_collateral = ledger.balance;
    report.final_high_water_mark = ledger.high_water_mark;
    report.elapsed = started.elapsed();
    Ok(report)
}

/// After every step: `balance >= H - maxDrawdown`, and no slot held by a market past
/// `expiry + writeOffGrace` while it is not finalized (the housekeeping above writes those off).
fn step_invariants(report: &mut SimReport, ledger: &Ledger, markets: &[Market], now: u64) {
    let b = &ledger.bounds;
    if !ledger::drawdown_holds(ledger.balance, ledger.high_water_mark, b.max_drawdown) {
        let (bal, h) = (ledger.balance, ledger.high_water_mark);
        violation(report, format!("balance {bal} below H {h} - maxDrawdown"));
    }
    if !ledger.equity_drawdown_holds() {
        let (e, h) = (ledger.equity(), ledger.high_water_mark);
        violation(report, format!("equity {e} below H {h} - maxDrawdown"));
    }
    report.peak_drawdown =
        report.peak_drawdown.max(ledger.high_water_mark.saturating_sub(ledger.balance));
    for m in markets {
        let p = ledger.position(m.address);
        let held = !p.written_off && ledger.positions.contains_key(&m.address);
        if held && !m.finalized && now > m.expiry.saturating_add(u64::from(b.write_off_grace_secs))
        {
            violation(report, format!("slot held past expiry + grace by {}", m.address));
        }
    }
}

fn violation(report: &mut SimReport, what: String) {
    report.violations += 1;
    if report.violation_examples.len() < 10 {
        report.violation_examples.push(what);
    }
}

/// 6-decimal collateral shown as units with two decimals (display only).
pub fn usdc(v: U256) -> String {
    let cents = v / U256::from(10_000u64);
    let whole = cents / U256::from(100u64);
    let frac = cents % U256::from(100u64);
    format!("{whole}.{frac:0>2}")
}

/// The bounds as table rows.
pub fn bounds_rows(b: &Bounds) -> String {
    format!(
        "| band | [{}, {}] ({} .. {}) |\n| maxSize | {} ({} tUSD) |\n| minHeadroom | {} s |\n| maxConcurrent | {} |\n| maxNotional | {} ({} tUSD) |\n| maxHorizon | {} s |\n| maxDrawdown | {} ({} tUSD) |\n| writeOffGrace | {} s |\n| minFillBps | {} |\n",
        model::probability(b.min_price),
        model::probability(b.max_price),
        b.min_price,
        b.max_price,
        b.max_size,
        usdc(b.max_size),
        b.min_headroom_secs,
        b.max_concurrent,
        b.max_notional,
        usdc(b.max_notional),
        b.max_horizon_secs,
        b.max_drawdown,
        usdc(b.max_drawdown),
        b.write_off_grace_secs,
        b.min_fill_bps
    )
}

/// The markdown section of one run.
pub fn markdown(r: &SimReport, command: &str) -> String {
    use std::fmt::Write;
    let b = &r.config.bounds;
    let mut out = String::new();
    let _ = writeln!(out, "## Model `{}`\n", r.config.model.name());
    let _ = writeln!(out, "Command: `{command}`\n");
    let _ = writeln!(out, "| parameter | value |\n| --- | --- |");
    let _ = writeln!(out, "| gate | {} (the gate's accounting: the reference ledger) |", r.backend);
    let _ = writeln!(out, "| seed | {} |", r.config.seed);
    let _ = writeln!(out, "| markets (concurrent slots) | {} |", r.config.markets);
    let _ = writeln!(out, "| steps | {} ({} s each) |", r.config.steps, r.config.step_secs);
    out.push_str(&bounds_rows(b));
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
    let _ = writeln!(out, "Per-rule breakdown: *as reason* counts decisions whose lowest failing rule it was; *in mask* counts every decision that failed it (18 is decided after the fill and is always alone).\n");
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
        "Markets settled: {}; positions written off: {}. Bought {} tUSD of payout; spent {} tUSD; paid out {} tUSD; collateral at the end {} tUSD (H {} tUSD). Largest H - balance after a step: {} tUSD (bound: maxDrawdown {} tUSD). Peak open notional {} tUSD (cap {}), peak open positions {} (cap {}).\n",
        r.markets_settled,
        r.written_off,
        usdc(r.units_bought),
        usdc(r.spent),
        usdc(r.payout),
        usdc(r.final_collateral),
        usdc(r.final_high_water_mark),
        usdc(r.peak_drawdown),
        usdc(b.max_drawdown),
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
pub const CHECKS: &str = "Every accepted order is re-checked from the bounds, the snapshot and the keeper's quote alone (`checks::check_accepted`): a buy verdict; market not finalized, its resolver and its creator trusted, at least `minHeadroom` and at most `maxHorizon` seconds before expiry; the quote's deadline not passed; not the side opposite the one held; price paid inside [minPrice, maxPrice], below 1.0 and at most the quote's maxPricePaid; the limit at most min(maxPrice, maxPricePaid), at least the price paid, on the grid of the price the market gets and no tighter than the grid needs; the price paid marketable and on the tick grid; quantity on the lot grid, in (0, maxSize] and at least the venue minimum; the minimum fill within reach of one IOC under the venue's 64-match cap (64 x max(minQuantity, lotSize, 1) >= the quantity or its minFillBps share); cost exactly ceil(quantity x limit / 1e6); open positions below the cap; openNotional + cost <= maxNotional; cost <= collateral available; balance - cost >= H - maxDrawdown. Each kept fill (`checks::check_kept_fill`): filled <= quantity and at least minFillBps of it, spent <= cost and on average no more than the limit per unit. After every step: balance >= H - maxDrawdown and H - equity <= maxDrawdown (the lifetime bound of issue 14), no slot held past expiry + writeOffGrace while the market is unresolved, open notional <= maxNotional and open positions <= maxConcurrent.";
