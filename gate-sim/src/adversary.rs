//! The attacks of issues 7 and 14, each its own scenario over a [`World`] (the reference gate and
//! venue, or the compiled contracts in revm): markets an attacker creates and resolves against
//! the gate (with the attacker untrusted, then a trusted resolver), sandwiches between the
//! keeper's read and its submission, dust asks one tick better than the book, markets that never
//! resolve, both sides of one market, an owner or treasury that tops the gate up after every loss
//! (issue 14: total loss over the gate's life stays within maxDrawdown), and markets created by
//! an outsider naming a trusted resolver (issue 14: rule 19, no slot taken). Every
//! decision is recorded; every accepted order and kept fill is re-checked (`checks`); a refusal
//! must leave the gate's balance, notional and slots as they were; after every step the
//! drawdown invariant `balance >= H - maxDrawdown` must hold and no slot may be held past
//! `expiry + writeOffGrace` once a write-off was possible. Each scenario states the loss it
//! measures and the bound that must hold; the expected number of violations is zero.

use crate::{
    checks,
    ledger::{self, Refusal},
    model::{
        self, Bounds, Decision, GateConfig, Quote, Verdict, PRICE_ONE, REASON_COUNT, REASON_LABELS,
    },
    sim::{self, Rng},
    world::{
        self, GateState, MarketSpec, Row, World, ATTACKER, DEPLOYER, HONEST_RESOLVER, KEEPER,
        MAKER, SILENT_RESOLVER, TREASURY,
    },
};
use alloy::primitives::{Address, U256};
use std::{
    collections::{BTreeMap, BTreeSet},
    fmt::Write,
    time::{Duration, Instant},
};

pub type Result<T> = std::result::Result<T, world::Error>;

/// One attack.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Adversary {
    /// Attacker-created markets resolved against the gate; the attacker is not trusted.
    UntrustedDrain,
    /// The same drain with the attacker among the trusted resolvers (a trusted resolver turned
    /// hostile), against an honest and a compromised keeper.
    TrustedDrain,
    /// The book moved to a worse price between the keeper's read and its submission.
    Sandwich,
    /// A few lots one tick better than the book, to take a slot for almost nothing.
    Dust,
    /// Markets whose resolver never acts, and one that expires at 2^64 - 1.
    NeverResolve,
    /// Both sides of one market at 0.95 each, through a compromised keeper.
    BothSides,
    /// An owner or treasury that takes out what was lost and puts it back, or keeps the gate
    /// funded by deposits and plain transfers, while a trusted resolver drains it (issue 14).
    TopUp,
    /// Anyone creates markets naming a trusted resolver, expiring exactly `maxHorizon` away,
    /// offering the minimum fill at a price the model likes (issue 14).
    HostileCreator,
}

impl Adversary {
    pub const ALL: [Self; 8] = [
        Self::UntrustedDrain,
        Self::TrustedDrain,
        Self::Sandwich,
        Self::Dust,
        Self::NeverResolve,
        Self::BothSides,
        Self::TopUp,
        Self::HostileCreator,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Self::UntrustedDrain => "untrusted-drain",
            Self::TrustedDrain => "trusted-drain",
            Self::Sandwich => "sandwich",
            Self::Dust => "dust",
            Self::NeverResolve => "never-resolve",
            Self::BothSides => "both-sides",
            Self::TopUp => "top-up",
            Self::HostileCreator => "hostile-creator",
        }
    }

    /// What the scenario does and what it expects, for the report.
    pub fn description(self) -> &'static str {
        match self {
            Self::UntrustedDrain => "Each round the attacker creates a market that expires `minHeadroom` seconds out with itself as resolver, lists an ask at 0.42 and a bid at 0.38, and the keeper submits a buy on it (alternately honest, quoting the book plus 50 bps, and compromised, quoting 0.95 with no deadline). After expiry the attacker resolves against the side asked for and calls `redeem`. Expected: every attempt refused with reason 12 (rule 19 fails too: the attacker is not a trusted creator), loss 0.",
            Self::TrustedDrain => "The attacker's address is among the trusted resolvers. Each round the trusted creator makes `maxConcurrent` markets naming the attacker as resolver, expiring `minHeadroom` seconds out; the attacker lists 100 tUSD at 0.42 (rounds with an honest keeper) or 0.95 (rounds with a compromised keeper quoting 0.95 and no deadline), lets the gate buy, resolves every market against the gate and calls `redeem` to free the slots. Halfway through, the owner withdraws 1,000 tUSD (the high-water mark drops by as much, so the drawdown budget is unchanged). Expected: the loss (net of the withdrawal) stops at or below `maxDrawdown` (rule 14 refuses the order that would cross it).",
            Self::Sandwich => "Each round an honest market rests 150 tUSD at 0.420 (asks) and 0.380 (bids) on a 0.001 tick; the keeper reads the book in one block and quotes the side's price plus 50 bps; before its submission lands in the next block (naming the block read as its `readBlock`) the attacker lifts the level and re-offers worse, in six variants: everything re-offered at 0.95 (expected 15), 30 tUSD left (expected PASS at the old price), 20 tUSD left (expected 18, below the 25 % minimum fill), re-offered exactly at the quoted limit (expected PASS within the quote), one tick past it (expected 15), and no attack (PASS). The loss measured is what the gate paid above the price the model was shown; its bound is the slippage the operator allowed (quantity filled x (maxPricePaid - price shown)).",
            Self::Dust => "Each round an honest market rests 500 tUSD at 0.50 / 0.45; the attacker adds k lots one tick better (0.49 ask or 0.46 bid), k cycling 1, 1, 24, 25, 1; the keeper quotes from the book it reads (so its limit is the dust's price). Expected: reason 18 whenever the dust is below the 25 % minimum fill, with no collateral moved and no slot taken; at k = 25 the fill is kept (the boundary). The loss measured is collateral moved plus slots taken by refused rows; bound 0.",
            Self::NeverResolve => "Each round: one market expiring at 2^64 - 1 (expected 13) and four markets expiring in an hour whose trusted resolver never acts; the gate buys where the caps allow (the fourth is refused with 8 while three slots are held). A `writeOff` exactly at expiry + writeOffGrace must be refused (too early); one second later anyone writes every position off and the slots are free again (a `redeem` before that is refused: the market is not final). After the last round the silent resolver wakes up on the first market and the kept claim redeems. Expected: loss <= maxDrawdown (rule 14 stops the buying once the written-off losses approach it), and no slot held past expiry + grace.",
            Self::BothSides => "Each round an honest market rests 300 tUSD at 0.95 on both sides (an ask at 0.95, a bid at 0.05, so DOWN also costs 0.95); a compromised keeper quotes 0.95 with no deadline and submits one side, then the other side (expected: rule 17 fails once the first side is held), then the first side again (adding to a position is allowed within the caps). The market resolves honestly (a coin). The loss measured is the pairs bought, units held on both sides of one market, which would redeem for 1.00 after costing 1.90; bound 0. The drawdown bound holds for the rest.",
            Self::TopUp => "A trusted resolver turned hostile drains the gate as in `trusted-drain` (the trusted creator's markets name it; it lists 100 tUSD at 0.95, a compromised keeper quotes 0.95 with no deadline, and every market resolves against the gate), while the owner's treasury routine makes the gate whole after every round, cycling four ways: withdraw what was lost and deposit it back; deposit it and then withdraw it; send it by plain transfer (a donation); deposit it. Against v2 each top-up reset the drawdown (issue 14 measured 1,485 tUSD lost from 10,000 in two round trips with maxDrawdown 500). Expected: every deposit, withdrawal and donation leaves `H - equity` unchanged (H as the next settlement leaves it), and the total loss over the gate's life, everything put in (initial funding, deposits, donations) minus everything taken out (withdrawals) minus the final balance, stays at or below `maxDrawdown`: rule 14 stops the drain for good.",
            Self::HostileCreator => "Each round an outsider creates `maxConcurrent` markets that name the trusted resolver, expire exactly `maxHorizon` seconds out and rest only the minimum fill (25 tUSD of a 100 tUSD order) at 0.42; the keeper submits BUY_UP on each (alternately honest and compromised). Against v2 three such markets took every slot for 604,800 s. Then the trusted creator's own market (100 tUSD at 0.42, an hour out) is bought and settles honestly, to show the slots stayed free. Expected: every outsider attempt refused with reason 19 and nothing else in its mask, 0 slots taken, no collateral moved; the honest market PASSes (or 14 once the drawdown is spent).",
        }
    }
}

/// What every attack starts from.
#[derive(Clone, Debug)]
pub struct AdversaryConfig {
    pub rounds: usize,
    pub seed: u64,
    pub bounds: Bounds,
    pub initial_collateral: U256,
}

/// The deploy defaults of the v2 decisions (the README table): band [0.05, 0.95], 100 tUSD a
/// decision, 300 s of headroom, 3 slots, 250 tUSD at risk, 7 days of horizon, 500 tUSD of
/// drawdown, one day of grace, 25 % minimum fill.
pub fn default_bounds() -> Bounds {
    Bounds {
        min_price: U256::from(50_000u64),
        max_price: U256::from(950_000u64),
        max_size: U256::from(100_000_000u64),
        min_headroom_secs: 300,
        max_concurrent: 3,
        max_notional: U256::from(250_000_000u64),
        max_horizon_secs: 604_800,
        max_drawdown: U256::from(500_000_000u64),
        write_off_grace_secs: 86_400,
        min_fill_bps: 2_500,
    }
}

/// 10,000 tUSD, the gate of the drain.
pub fn default_initial_collateral() -> U256 {
    U256::from(10_000_000_000u64)
}

/// What one attack did to the gate.
#[derive(Clone, Debug)]
pub struct AdversaryReport {
    pub adversary: Adversary,
    pub backend: &'static str,
    pub config: AdversaryConfig,
    pub decisions: u64,
    pub by_reason: [u64; REASON_COUNT],
    /// Decisions that failed each rule (every bit of the mask).
    pub by_rule: [u64; REASON_COUNT],
    /// What the scenario measures as its loss, and its value.
    pub loss_label: &'static str,
    pub loss: U256,
    pub bound_label: String,
    pub bound: U256,
    pub initial_balance: U256,
    pub final_balance: U256,
    /// Collateral the owner withdrew during the attack (not a loss).
    pub withdrawn: U256,
    /// Collateral deposited and sent by plain transfer during the attack (not gains).
    pub deposited: U256,
    pub donated: U256,
    /// The largest `H - balance` seen after any step.
    pub peak_drawdown: U256,
    pub write_offs: u64,
    /// The most gas one `submitVerdict` used (EVM only).
    pub max_submit_gas: Option<u64>,
    pub notes: Vec<String>,
    pub violations: u64,
    pub violation_examples: Vec<String>,
    pub disagreements: u64,
    pub disagreement_examples: Vec<String>,
    pub elapsed: Duration,
}

impl AdversaryReport {
    pub fn holds(&self) -> bool {
        self.violations == 0 && self.disagreements == 0 && self.loss <= self.bound
    }
}

/// One attack in progress: the world, what it has seen, and the markets the gate may hold.
struct Run<'w> {
    world: &'w mut dyn World,
    bounds: Bounds,
    report: AdversaryReport,
    /// Markets where the gate bought, with their expiry, until they are redeemed.
    held: BTreeMap<Address, u64>,
    finalized: BTreeSet<Address>,
}

/// The market grid of every scenario but the sandwich: 0.01 tick, 1 tUSD lots (1e4 * 1e6 is a
/// multiple of 1e6, as the factory requires).
const TICK: u64 = 10_000;
const LOT: u64 = 1_000_000;

fn tusd(units: u64) -> U256 {
    U256::from(units) * U256::from(LOT)
}

fn spec(tick: u64, expiry_sec: u64, resolver: Address) -> MarketSpec {
    MarketSpec {
        question: format!(
            "Will UP win the {tick}-tick market expiring at {expiry_sec}, as {resolver} resolves it?"
        ),
        tick,
        lot: U256::from(LOT),
        min_quantity: U256::from(LOT),
        expiry_sec,
        resolver,
    }
}

/// A compromised keeper: quotes the band's ceiling and never expires its answers.
fn compromised_quote() -> Quote {
    Quote { max_price_paid: U256::from(950_000u64), deadline_sec: u64::MAX }
}

impl Run<'_> {
    fn violation(&mut self, what: String) {
        self.report.violations += 1;
        if self.report.violation_examples.len() < 10 {
            self.report.violation_examples.push(what);
        }
    }

    fn note(&mut self, what: String) {
        self.report.notes.push(what);
    }

    /// The honest keeper's quote for `side` on the book it reads now.
    fn honest_quote(&mut self, market: Address, side: Verdict) -> Result<Quote> {
        let (bid, ask) = self.world.best(market)?;
        Ok(world::keeper_quote(
            Some(side),
            bid,
            ask,
            self.world.now(),
            sim::KEEPER_SLIPPAGE_BPS,
            sim::KEEPER_TTL_SECS,
        ))
    }

    /// `submitVerdict` of a prompt rendered from the book as it is now (the current block).
    fn submit(&mut self, market: Address, side: Verdict, quote: &Quote) -> Result<Row> {
        let read_block = self.world.block();
        self.submit_read_at(market, side, quote, read_block)
    }

    /// `submitVerdict` of a prompt rendered at `read_block`, with every check: the block
    /// published as named, an accepted order and its fill against the promises, a refusal
    /// leaves balance, notional and slots alone, reason 18 really is below the minimum; then the
    /// step invariants.
    fn submit_read_at(
        &mut self,
        market: Address,
        side: Verdict,
        quote: &Quote,
        read_block: u64,
    ) -> Result<Row> {
        let before = self.world.state()?;
        let row = self.world.submit(market, side.token().as_bytes(), read_block, quote)?.map_err(
            |e| world::Error::Reverted {
                what: "submitVerdict (the keeper named a block that does not exist yet)".into(),
                revert: format!("{e:?}"),
            },
        )?;
        let after = self.world.state()?;
        if row.read_block != read_block {
            self.violation(format!("a row read at block {read_block} published {row:?}"));
        }
        self.report.decisions += 1;
        if let Some(n) = self.report.by_reason.get_mut(usize::from(row.reason)) {
            *n += 1;
        }
        for (bit, n) in self.report.by_rule.iter_mut().enumerate() {
            *n += u64::from(row.failed_mask & (1 << bit) != 0);
        }
        if let Some(gas) = row.gas_used {
            self.report.max_submit_gas = Some(self.report.max_submit_gas.unwrap_or(0).max(gas));
        }
        let o = row.order;
        match (row.reason, row.snapshot) {
            (0, Some(s)) => {
                let d = Decision {
                    reason: 0,
                    failed_mask: row.failed_mask,
                    price_paid: o.price_paid,
                    quantity: o.quantity,
                    cost: o.cost,
                };
                if let Err(e) =
                    checks::check_accepted(&self.bounds, &s, quote, side.code(), &d, o.limit)
                {
                    self.violation(e);
                }
                if let Err(e) =
                    checks::check_kept_fill(&self.bounds, &d, o.limit, o.filled, o.spent)
                {
                    self.violation(e);
                }
                if after.balance != before.balance.saturating_sub(o.spent) {
                    self.violation(format!(
                        "a kept fill spent {} but moved {before:?} to {after:?}",
                        o.spent
                    ));
                }
                self.held.insert(market, s.expiry_sec);
            }
            (0, None) => self.violation(format!("a PASS without a snapshot: {row:?}")),
            (reason, _) => {
                let unchanged = (before.balance, before.open_notional, before.open_positions)
                    == (after.balance, after.open_notional, after.open_positions);
                if !unchanged {
                    self.violation(format!(
                        "reason {reason} moved the gate's state from {before:?} to {after:?}"
                    ));
                }
                if reason == model::REASON_FILL_BELOW_MINIMUM
                    && !model::fill_below_minimum(&self.bounds, o.quantity, o.filled)
                {
                    self.violation(format!("reason 18 on a fill at or above the minimum: {row:?}"));
                }
            }
        }
        self.step()?;
        Ok(row)
    }

    /// After every step: `balance >= H - maxDrawdown`, and no slot held past expiry + grace in a
    /// market that is not finalized (housekeeping writes those off as soon as it may).
    fn step(&mut self) -> Result<()> {
        let state = self.world.state()?;
        if !ledger::drawdown_holds(state.balance, state.high_water_mark, self.bounds.max_drawdown) {
            self.violation(format!("balance below H - maxDrawdown: {state:?}"));
        }
        // The lifetime form, with H as the next settlement leaves it (a donation not yet counted
        // must not hide a drawdown).
        let settled_h = state.settled_high_water_mark();
        if !ledger::drawdown_holds(state.equity(), settled_h, self.bounds.max_drawdown) {
            self.violation(format!("H {settled_h} - equity above maxDrawdown: {state:?}"));
        }
        let drawdown = state.high_water_mark.saturating_sub(state.balance);
        self.report.peak_drawdown = self.report.peak_drawdown.max(drawdown);
        let now = self.world.now();
        let grace = u64::from(self.bounds.write_off_grace_secs);
        let overdue: Vec<Address> = self
            .held
            .iter()
            .filter(|(m, expiry)| {
                now > expiry.saturating_add(grace) && !self.finalized.contains(*m)
            })
            .map(|(m, _)| *m)
            .collect();
        for m in overdue {
            let p = self.world.position(m)?;
            let holds = !p.up_units.is_zero() || !p.down_units.is_zero();
            if holds && !p.written_off {
                self.violation(format!("slot held past expiry + grace in {m}"));
            }
        }
        Ok(())
    }

    /// Moves the clock, then anyone writes off what may be written off.
    fn advance(&mut self, to_sec: u64) -> Result<()> {
        self.world.set_time(to_sec);
        let grace = u64::from(self.bounds.write_off_grace_secs);
        let due: Vec<Address> = self
            .held
            .iter()
            .filter(|(m, expiry)| {
                to_sec > expiry.saturating_add(grace) && !self.finalized.contains(*m)
            })
            .map(|(m, _)| *m)
            .collect();
        for m in due {
            match self.world.write_off(m)? {
                Ok(()) => self.report.write_offs += 1,
                Err(Refusal::AlreadyWrittenOff | Refusal::NoOpenPosition) => {}
                Err(other) => {
                    self.violation(format!("writeOff({m}) refused once allowed: {other:?}"))
                }
            }
        }
        self.step()
    }

    /// The market's resolver resolves it, and anyone redeems the gate's position.
    fn settle(&mut self, market: Address, resolver: Address, up_won: bool) -> Result<Option<U256>> {
        self.world.resolve(market, resolver, up_won)?;
        self.finalized.insert(market);
        let payout = match self.world.redeem(market)? {
            Ok(p) => Some(p),
            Err(Refusal::NoOpenPosition) => None,
            Err(other) => {
                self.violation(format!("redeem({market}) refused after resolution: {other:?}"));
                None
            }
        };
        self.held.remove(&market);
        self.step()?;
        Ok(payout)
    }

    fn expect_reason(&mut self, row: &Row, expected: &[u8], why: &str) {
        if !expected.contains(&row.reason) {
            self.violation(format!(
                "{why}: expected reason {expected:?}, got {} ({row:?})",
                row.reason
            ));
        }
    }
}

/// The trusted lists a scenario deploys with, sorted as the constructor requires; the honest
/// maker is the one trusted creator, and the keeper is neither.
fn config_with(bounds: Bounds, mut trusted: Vec<Address>) -> GateConfig {
    trusted.sort();
    trusted.dedup();
    GateConfig {
        bounds,
        trusted_resolvers: trusted,
        trusted_creators: vec![MAKER],
        keeper: KEEPER,
        collateral: Address::ZERO,
        factory_collateral: Address::ZERO,
    }
}

/// `H` as the next settlement leaves it, and the equity: their difference is the drawdown used.
fn gap(state: &GateState) -> (U256, U256) {
    (state.settled_high_water_mark(), state.equity())
}

/// Runs one attack from a fresh world (`artifact` set: the compiled contracts in revm).
pub fn run(
    adversary: Adversary,
    config: &AdversaryConfig,
    artifact: Option<&crate::artifact::GateArtifact>,
) -> Result<AdversaryReport> {
    let started = Instant::now();
    let trusted = match adversary {
        Adversary::TrustedDrain | Adversary::TopUp => vec![ATTACKER, HONEST_RESOLVER],
        Adversary::NeverResolve => vec![SILENT_RESOLVER, HONEST_RESOLVER],
        _ => vec![HONEST_RESOLVER],
    };
    let gate_config = config_with(config.bounds, trusted);
    let start_sec = 1_700_000_000;
    let mut world = world::open(artifact, &gate_config, config.initial_collateral, start_sec)?;
    let initial_balance = world.state()?.balance;
    let mut run = Run {
        bounds: config.bounds,
        report: AdversaryReport {
            adversary,
            backend: world.backend(),
            config: config.clone(),
            decisions: 0,
            by_reason: [0; REASON_COUNT],
            by_rule: [0; REASON_COUNT],
            loss_label: "collateral lost (initial balance - final balance - withdrawn)",
            loss: U256::ZERO,
            bound_label: String::new(),
            bound: U256::ZERO,
            initial_balance,
            final_balance: U256::ZERO,
            withdrawn: U256::ZERO,
            deposited: U256::ZERO,
            donated: U256::ZERO,
            peak_drawdown: U256::ZERO,
            write_offs: 0,
            max_submit_gas: None,
            notes: Vec::new(),
            violations: 0,
            violation_examples: Vec::new(),
            disagreements: 0,
            disagreement_examples: Vec::new(),
            elapsed: Duration::ZERO,
        },
        world: world.as_mut(),
        held: BTreeMap::new(),
        finalized: BTreeSet::new(),
    };
    let mut rng = Rng(config.seed ^ 0xADE5_0000_0000_0000 ^ adversary as u64);
    match adversary {
        Adversary::UntrustedDrain => untrusted_drain(&mut run, config.rounds)?,
        Adversary::TrustedDrain => trusted_drain(&mut run, config.rounds)?,
        Adversary::Sandwich => sandwich(&mut run, config.rounds, &mut rng)?,
        Adversary::Dust => dust(&mut run, config.rounds, &mut rng)?,
        Adversary::NeverResolve => never_resolve(&mut run, config.rounds)?,
        Adversary::BothSides => both_sides(&mut run, config.rounds, &mut rng)?,
        Adversary::TopUp => top_up(&mut run, config.rounds)?,
        Adversary::HostileCreator => hostile_creator(&mut run, config.rounds, &mut rng)?,
    }
    let final_balance = run.world.state()?.balance;
    run.report.final_balance = final_balance;
    if run.report.loss_label.starts_with("collateral lost") {
        // Everything put in, minus everything taken out, minus what is left.
        let put_in = initial_balance + run.report.deposited + run.report.donated;
        run.report.loss = put_in.saturating_sub(run.report.withdrawn).saturating_sub(final_balance);
    }
    let disagreements = run.world.disagreements().to_vec();
    run.report.disagreements = disagreements.len() as u64;
    run.report.disagreement_examples = disagreements.into_iter().take(10).collect();
    if run.report.loss > run.report.bound {
        let (loss, bound) = (run.report.loss, run.report.bound);
        run.violation(format!("loss {loss} above its bound {bound}"));
    }
    run.report.elapsed = started.elapsed();
    Ok(run.report)
}

// --- the scenarios

fn untrusted_drain(run: &mut Run, rounds: usize) -> Result<()> {
    run.report.bound_label = "0 (an untrusted resolver's market is never traded)".into();
    let headroom = u64::from(run.bounds.min_headroom_secs);
    for r in 0..rounds {
        let now = run.world.now();
        let expiry = now + headroom;
        let m = run.world.create_market(ATTACKER, &spec(TICK, expiry, ATTACKER))?;
        run.world.place(m, ATTACKER, false, 420_000, tusd(100))?;
        run.world.place(m, ATTACKER, true, 380_000, tusd(100))?;
        let side = if r % 4 < 2 { Verdict::BuyUp } else { Verdict::BuyDown };
        let quote = if r % 2 == 1 { compromised_quote() } else { run.honest_quote(m, side)? };
        let row = run.submit(m, side, &quote)?;
        run.expect_reason(&row, &[12], "an attacker-resolved market");
        run.advance(expiry + 1)?;
        // Against the side asked for; the redeem finds no position.
        run.settle(m, ATTACKER, side == Verdict::BuyDown)?;
    }
    Ok(())
}

fn trusted_drain(run: &mut Run, rounds: usize) -> Result<()> {
    run.report.bound_label = format!("maxDrawdown ({} tUSD)", sim::usdc(run.bounds.max_drawdown));
    run.report.bound = run.bounds.max_drawdown;
    let headroom = u64::from(run.bounds.min_headroom_secs);
    let slots = usize::from(run.bounds.max_concurrent);
    let mut compromised_spent = U256::ZERO;
    for r in 0..rounds {
        if r == rounds / 2 {
            let amount = tusd(1_000);
            let before = run.world.state()?;
            run.world.withdraw(amount)?;
            run.report.withdrawn += amount;
            let after = run.world.state()?;
            // The account is settled first (H raised to the equity), then H drops by the amount.
            let expected_h = before.settled_high_water_mark().saturating_sub(amount);
            if after.high_water_mark != expected_h || after.balance + amount != before.balance {
                run.violation(format!("withdrawing {amount}: {before:?} -> {after:?}"));
            }
            run.step()?;
        }
        let compromised = r % 2 == 1;
        let now = run.world.now();
        let expiry = now + headroom;
        let mut markets = Vec::new();
        for i in 0..slots {
            // A trusted creator's market naming the hostile trusted resolver.
            let m = run.world.create_market(MAKER, &spec(TICK, expiry, ATTACKER))?;
            let side = if (r + i) % 2 == 0 { Verdict::BuyUp } else { Verdict::BuyDown };
            // The gate's side priced at 0.95 (compromised rounds) or 0.42 (honest rounds).
            let paid = if compromised { 950_000 } else { 420_000 };
            match side {
                Verdict::BuyUp => run.world.place(m, ATTACKER, false, paid, tusd(100))?,
                _ => run.world.place(m, ATTACKER, true, PRICE_ONE - paid, tusd(100))?,
            };
            let quote = if compromised { compromised_quote() } else { run.honest_quote(m, side)? };
            let row = run.submit(m, side, &quote)?;
            if compromised {
                compromised_spent += row.order.spent * U256::from(u8::from(row.reason == 0));
            }
            markets.push((m, side));
        }
        run.advance(expiry + 1)?;
        for (m, side) in markets {
            run.settle(m, ATTACKER, side == Verdict::BuyDown)?;
        }
    }
    let refused_by_14 = run.report.by_reason[14];
    run.note(format!(
        "Spent through the compromised keeper: {} tUSD. Orders refused by rule 14 once the losses reached the drawdown budget: {refused_by_14}; by rule 9 (notional cap): {}. Withdrawn by the owner: {} tUSD.",
        sim::usdc(compromised_spent),
        run.report.by_reason[9],
        sim::usdc(run.report.withdrawn)
    ));
    Ok(())
}

fn sandwich(run: &mut Run, rounds: usize, rng: &mut Rng) -> Result<()> {
    const FINE_TICK: u64 = 1_000;
    run.report.loss_label = "paid above the price the model was shown";
    let (mut over_seen, mut allowance, mut above_quote, mut v1_exposure) =
        (U256::ZERO, U256::ZERO, U256::ZERO, U256::ZERO);
    let one = U256::from(PRICE_ONE);
    for r in 0..rounds {
        let now = run.world.now();
        let expiry = now + 3_600;
        let m = run.world.create_market(MAKER, &spec(FINE_TICK, expiry, HONEST_RESOLVER))?;
        run.world.place(m, MAKER, false, 420_000, tusd(150))?;
        run.world.place(m, MAKER, true, 380_000, tusd(150))?;
        let side = if r % 2 == 0 { Verdict::BuyUp } else { Verdict::BuyDown };
        let up = side == Verdict::BuyUp;
        let quote = run.honest_quote(m, side)?;
        // The prompt is rendered from this block; the attacker moves the book in the next one.
        let read_block = run.world.block();
        let seen: u64 = if up { 420_000 } else { 620_000 };
        let mpp = u64::try_from(quote.max_price_paid).unwrap_or(u64::MAX);
        // The order's limit for the token bought, and as the UP price the market sees.
        let limit = if up {
            mpp - mpp % FINE_TICK
        } else {
            PRICE_ONE - (PRICE_ONE - mpp).div_ceil(FINE_TICK) * FINE_TICK
        };
        let up_limit = if up { limit } else { PRICE_ONE - limit };
        let variant = (r / 2) % 6;
        // (lots left at the shown level, re-offer as an UP price, expected reasons)
        let worse_up = |p: u64| if up { p } else { PRICE_ONE - p };
        let (left, reoffer, expected): (u64, Option<u64>, &[u8]) = match variant {
            0 => (0, Some(worse_up(950_000)), &[15]),
            1 => (30, Some(worse_up(950_000)), &[0]),
            2 => (20, Some(worse_up(950_000)), &[18]),
            3 => (0, Some(up_limit), &[0]),
            4 => (0, Some(if up { up_limit + FINE_TICK } else { up_limit - FINE_TICK }), &[15]),
            _ => (150, None, &[0]),
        };
        run.world.set_time(now + 12);
        if left < 150 {
            let shown_level = if up { 420_000 } else { 380_000 };
            run.world.take(m, ATTACKER, up, shown_level, tusd(150 - left))?;
        }
        if let Some(p) = reoffer {
            run.world.place(m, ATTACKER, !up, p, tusd(200))?;
        }
        let (bid, ask) = run.world.best(m)?;
        let exec = if up { ask } else { PRICE_ONE - bid };
        if exec > seen {
            // A v1 gate priced at execution with no quote would have paid this much more.
            v1_exposure += U256::from(exec - seen) * run.bounds.max_size / one;
        }
        let row = run.submit_read_at(m, side, &quote, read_block)?;
        let why = format!("sandwich variant {variant} on {}", side.token());
        run.expect_reason(&row, expected, &why);
        if row.reason == 0 {
            let o = row.order;
            let at_quote = (o.filled * quote.max_price_paid).div_ceil(one);
            above_quote += o.spent.saturating_sub(at_quote);
            over_seen += o.spent.saturating_sub(o.filled * U256::from(seen) / one);
            allowance += (o.filled * U256::from(mpp - seen)).div_ceil(one);
        }
        run.advance(expiry + 1)?;
        run.settle(m, HONEST_RESOLVER, rng.chance(500_000))?;
    }
    run.report.loss = over_seen;
    run.report.bound = allowance;
    run.report.bound_label =
        "the allowed slippage: sum of ceil(filled x (maxPricePaid - price shown) / 1e6)".into();
    if !above_quote.is_zero() {
        run.violation(format!("paid {above_quote} above the quoted maxPricePaid"));
    }
    run.note(format!(
        "Paid above the keeper's maxPricePaid: {} tUSD. The same sandwiches against a gate that priced at execution with no quote (v1) would have cost up to {} tUSD.",
        sim::usdc(above_quote),
        sim::usdc(v1_exposure)
    ));
    Ok(())
}

fn dust(run: &mut Run, rounds: usize, rng: &mut Rng) -> Result<()> {
    run.report.loss_label = "collateral moved and slots taken by refused dust fills";
    run.report.bound_label = "0".into();
    const DUST_LOTS: [u64; 5] = [1, 1, 24, 25, 1];
    let mut moved = U256::ZERO;
    let (mut refused, mut kept_at_boundary) = (0u64, 0u64);
    for r in 0..rounds {
        let now = run.world.now();
        let expiry = now + 3_600;
        let m = run.world.create_market(MAKER, &spec(TICK, expiry, HONEST_RESOLVER))?;
        run.world.place(m, MAKER, false, 500_000, tusd(500))?;
        run.world.place(m, MAKER, true, 450_000, tusd(500))?;
        let side = if r % 2 == 0 { Verdict::BuyUp } else { Verdict::BuyDown };
        let k = DUST_LOTS[r % DUST_LOTS.len()];
        match side {
            Verdict::BuyUp => run.world.place(m, ATTACKER, false, 490_000, tusd(k))?,
            _ => run.world.place(m, ATTACKER, true, 460_000, tusd(k))?,
        };
        let quote = run.honest_quote(m, side)?;
        let before = run.world.state()?;
        let row = run.submit(m, side, &quote)?;
        let after = run.world.state()?;
        // k lots of a 100-lot order: kept only at k * 10_000 >= 100 * 2_500, i.e. k >= 25.
        let below = k * u64::from(model::BPS) < 100 * u64::from(run.bounds.min_fill_bps);
        let expected: &[u8] = if below { &[18] } else { &[0] };
        run.expect_reason(&row, expected, &format!("{k} dust lots on {}", side.token()));
        if row.reason == model::REASON_FILL_BELOW_MINIMUM {
            refused += 1;
            moved += before.balance.abs_diff(after.balance)
                + U256::from(after.open_positions.saturating_sub(before.open_positions));
        } else if row.reason == 0 {
            kept_at_boundary += 1;
        }
        run.advance(expiry + 1)?;
        run.settle(m, HONEST_RESOLVER, rng.chance(500_000))?;
    }
    run.report.loss = moved;
    run.note(format!(
        "Dust rounds refused with 18: {refused}; fills kept at the 25 % boundary (25 lots): {kept_at_boundary}."
    ));
    Ok(())
}

fn never_resolve(run: &mut Run, rounds: usize) -> Result<()> {
    run.report.bound_label = format!("maxDrawdown ({} tUSD)", sim::usdc(run.bounds.max_drawdown));
    run.report.bound = run.bounds.max_drawdown;
    let grace = u64::from(run.bounds.write_off_grace_secs);
    let mut first_market = None;
    let mut too_early_refused = 0u64;
    for _ in 0..rounds {
        let now = run.world.now();
        // Expiry 2^64 - 1: beyond every horizon.
        let forever = run.world.create_market(MAKER, &spec(TICK, u64::MAX, SILENT_RESOLVER))?;
        run.world.place(forever, MAKER, false, 400_000, tusd(200))?;
        let quote = run.honest_quote(forever, Verdict::BuyUp)?;
        let row = run.submit(forever, Verdict::BuyUp, &quote)?;
        run.expect_reason(&row, &[13], "a market expiring at 2^64 - 1");
        let expiry = now + 3_600;
        let mut bought = Vec::new();
        for _ in 0..4 {
            let m = run.world.create_market(MAKER, &spec(TICK, expiry, SILENT_RESOLVER))?;
            run.world.place(m, MAKER, false, 400_000, tusd(200))?;
            run.world.place(m, MAKER, true, 350_000, tusd(200))?;
            let quote = run.honest_quote(m, Verdict::BuyUp)?;
            let row = run.submit(m, Verdict::BuyUp, &quote)?;
            if row.reason == 0 {
                bought.push(m);
                first_market.get_or_insert(m);
            }
        }
        // Not final: redeem is refused; exactly at expiry + grace: writeOff is too early.
        if let Some(&m) = bought.first() {
            match run.world.redeem(m)? {
                Err(Refusal::MarketNotFinal) => {}
                other => run.violation(format!("redeem in an unresolved market: {other:?}")),
            }
            run.world.set_time(expiry + grace);
            match run.world.write_off(m)? {
                Err(Refusal::WriteOffTooEarly { .. }) => too_early_refused += 1,
                other => run.violation(format!("writeOff at expiry + grace exactly: {other:?}")),
            }
            run.step()?;
        }
        run.advance(expiry + grace + 1)?;
        let state = run.world.state()?;
        if state.open_positions != 0 {
            run.violation(format!("slots still held after every write-off: {state:?}"));
        }
    }
    let written_off = run.report.write_offs;
    // The silent resolver wakes up: the written-off claim still redeems.
    let mut late = U256::ZERO;
    if let Some(m) = first_market {
        let now = run.world.now();
        run.world.set_time(now + 60);
        run.finalized.insert(m);
        run.world.resolve(m, SILENT_RESOLVER, true)?;
        match run.world.redeem(m)? {
            Ok(payout) => late = payout,
            Err(e) => run.violation(format!("a written-off claim did not redeem: {e:?}")),
        }
        run.step()?;
    }
    run.note(format!(
        "Positions written off: {written_off}; write-offs refused at exactly expiry + grace: {too_early_refused}; refused by 13 (horizon): {}, by 8 (slots full): {}, by 14 (drawdown): {}. A late resolution of a written-off market redeemed {} tUSD.",
        run.report.by_reason[13],
        run.report.by_reason[8],
        run.report.by_reason[14],
        sim::usdc(late)
    ));
    Ok(())
}

fn both_sides(run: &mut Run, rounds: usize, rng: &mut Rng) -> Result<()> {
    run.report.loss_label = "units held on both sides of one market";
    run.report.bound_label = "0".into();
    let mut pairs = U256::ZERO;
    let mut opposite_refused = 0u64;
    for r in 0..rounds {
        let now = run.world.now();
        let expiry = now + 3_600;
        let m = run.world.create_market(MAKER, &spec(TICK, expiry, HONEST_RESOLVER))?;
        run.world.place(m, MAKER, false, 950_000, tusd(300))?;
        run.world.place(m, MAKER, true, 50_000, tusd(300))?;
        let (first, other) = if r % 2 == 0 {
            (Verdict::BuyUp, Verdict::BuyDown)
        } else {
            (Verdict::BuyDown, Verdict::BuyUp)
        };
        let quote = compromised_quote();
        let row = run.submit(m, first, &quote)?;
        if row.reason == 0 {
            // Rule 17 fails whatever else does (14 may be the lowest code once the drawdown
            // budget is spent).
            let row = run.submit(m, other, &quote)?;
            if row.failed_mask & (1 << 17) == 0 || row.reason == 0 {
                run.violation(format!(
                    "the opposite side of a held position, rule 17 passed: {row:?}"
                ));
            }
            opposite_refused += u64::from(row.failed_mask & (1 << 17) != 0);
            // The same side again: allowed within the caps (9 or 14 may stop it).
            let row = run.submit(m, first, &quote)?;
            run.expect_reason(&row, &[0, 9, 14], "adding to the side held");
        }
        let p = run.world.position(m)?;
        pairs += p.up_units.min(p.down_units);
        run.advance(expiry + 1)?;
        run.settle(m, HONEST_RESOLVER, rng.chance(500_000))?;
    }
    run.report.loss = pairs;
    run.note(format!(
        "Opposite-side orders refused with rule 17 in their mask: {opposite_refused}; decisions whose lowest failing rule was 14 (drawdown): {}.",
        run.report.by_reason[14]
    ));
    Ok(())
}

/// One money movement of the treasury routine, with the check issue 14 pins: `H - equity` (H as
/// the next settlement leaves it) is the same before and after.
fn money_move(
    run: &mut Run,
    what: &str,
    moved: &mut dyn FnMut(&mut dyn World) -> Result<()>,
) -> Result<()> {
    let before = run.world.state()?;
    moved(&mut *run.world)?;
    let after = run.world.state()?;
    let ((h0, e0), (h1, e1)) = (gap(&before), gap(&after));
    if !ledger::gap_unchanged(h0, e0, h1, e1) {
        run.violation(format!("{what} changed H - equity: {before:?} -> {after:?}"));
    }
    run.step()
}

fn top_up(run: &mut Run, rounds: usize) -> Result<()> {
    run.report.bound_label = format!(
        "maxDrawdown ({} tUSD), over the gate's whole life",
        sim::usdc(run.bounds.max_drawdown)
    );
    run.report.bound = run.bounds.max_drawdown;
    let headroom = u64::from(run.bounds.min_headroom_secs);
    let slots = usize::from(run.bounds.max_concurrent);
    let mut moves = [0u64; 4];
    for r in 0..rounds {
        let now = run.world.now();
        let expiry = now + headroom;
        let mut markets = Vec::new();
        for i in 0..slots {
            let m = run.world.create_market(MAKER, &spec(TICK, expiry, ATTACKER))?;
            let side = if (r + i) % 2 == 0 { Verdict::BuyUp } else { Verdict::BuyDown };
            match side {
                Verdict::BuyUp => run.world.place(m, ATTACKER, false, 950_000, tusd(100))?,
                _ => run.world.place(m, ATTACKER, true, PRICE_ONE - 950_000, tusd(100))?,
            };
            run.submit(m, side, &compromised_quote())?;
            markets.push((m, side));
        }
        run.advance(expiry + 1)?;
        for (m, side) in markets {
            run.settle(m, ATTACKER, side == Verdict::BuyDown)?;
        }
        // What has been lost (the drawdown used, H - equity): the treasury puts it back, every
        // round, in one of four ways. Against v2 each of them reset the drawdown to 0.
        let (h, e) = gap(&run.world.state()?);
        let lost = h.saturating_sub(e);
        if lost.is_zero() {
            continue;
        }
        let variant = r % 4;
        moves[variant] += 1;
        match variant {
            0 => {
                money_move(run, "withdrawing what was lost", &mut |w| w.withdraw(lost))?;
                run.report.withdrawn += lost;
                money_move(run, "depositing it back", &mut |w| deposit_ok(w, lost))?;
                run.report.deposited += lost;
            }
            1 => {
                money_move(run, "depositing what was lost", &mut |w| deposit_ok(w, lost))?;
                run.report.deposited += lost;
                money_move(run, "withdrawing it again", &mut |w| w.withdraw(lost))?;
                run.report.withdrawn += lost;
            }
            2 => {
                money_move(run, "a plain transfer of what was lost", &mut |w| {
                    w.donate(TREASURY, lost)
                })?;
                run.report.donated += lost;
            }
            _ => {
                money_move(run, "a top-up deposit", &mut |w| deposit_ok(w, lost))?;
                run.report.deposited += lost;
            }
        }
    }
    // A deposit of 0 is refused and moves nothing.
    let before = run.world.state()?;
    match run.world.deposit(DEPLOYER, U256::ZERO)? {
        Err(Refusal::DepositZero) => {}
        other => run.violation(format!("deposit(0): {other:?}")),
    }
    if run.world.state()? != before {
        run.violation("a refused deposit moved the gate's figures".into());
    }
    let state = run.world.state()?;
    let put_in = run.report.initial_balance + run.report.deposited + run.report.donated;
    let lifetime_loss = put_in.saturating_sub(run.report.withdrawn).saturating_sub(state.balance);
    run.note(format!(
        "Total loss over the gate's life: {} tUSD (bound {} tUSD) = put in {} tUSD (initial {}, deposited {}, donated {}) - withdrawn {} tUSD - final balance {} tUSD. Treasury rounds: {} withdraw-then-redeposit, {} deposit-then-withdraw, {} plain transfers, {} deposits. Orders refused by rule 14: {}; H - equity at the end {} tUSD.",
        sim::usdc(lifetime_loss),
        sim::usdc(run.bounds.max_drawdown),
        sim::usdc(put_in),
        sim::usdc(run.report.initial_balance),
        sim::usdc(run.report.deposited),
        sim::usdc(run.report.donated),
        sim::usdc(run.report.withdrawn),
        sim::usdc(state.balance),
        moves[0],
        moves[1],
        moves[2],
        moves[3],
        run.report.by_reason[14],
        sim::usdc(state.settled_high_water_mark().saturating_sub(state.equity())),
    ));
    Ok(())
}

/// A deposit the scenario needs to go through.
fn deposit_ok(world: &mut dyn World, amount: U256) -> Result<()> {
    match world.deposit(DEPLOYER, amount)? {
        Ok(received) if received == amount => Ok(()),
        other => Err(world::Error::Reverted {
            what: format!("deposit({amount})"),
            revert: format!("{other:?}"),
        }),
    }
}

fn hostile_creator(run: &mut Run, rounds: usize, rng: &mut Rng) -> Result<()> {
    run.report.loss_label = "slots taken and collateral moved by outsiders' markets";
    run.report.bound_label = "0 (a market from an untrusted creator is never traded)".into();
    let horizon = u64::from(run.bounds.max_horizon_secs);
    let slots = usize::from(run.bounds.max_concurrent);
    let (mut attempts, mut taken, mut honest_bought) = (0u64, U256::ZERO, 0u64);
    // The minimum fill of a 100 tUSD order at 25 %: 100 * 2_500 / 10_000 = 25 tUSD.
    let minimum =
        run.bounds.max_size * U256::from(run.bounds.min_fill_bps) / U256::from(model::BPS);
    for r in 0..rounds {
        let now = run.world.now();
        for i in 0..slots {
            let m =
                run.world.create_market(ATTACKER, &spec(TICK, now + horizon, HONEST_RESOLVER))?;
            run.world.place(m, ATTACKER, false, 420_000, minimum)?;
            let quote = if (r + i) % 2 == 1 {
                compromised_quote()
            } else {
                run.honest_quote(m, Verdict::BuyUp)?
            };
            let before = run.world.state()?;
            let row = run.submit(m, Verdict::BuyUp, &quote)?;
            let after = run.world.state()?;
            attempts += 1;
            if (row.reason, row.failed_mask) != (model::REASON_CREATOR_NOT_TRUSTED, 1 << 19) {
                run.violation(format!("an outsider's market was not refused by 19 alone: {row:?}"));
            }
            taken += U256::from(after.open_positions.saturating_sub(before.open_positions))
                + before.balance.abs_diff(after.balance);
        }
        // The trusted creator's market still trades: the outsiders took no slot.
        let expiry = now + 3_600;
        let m = run.world.create_market(MAKER, &spec(TICK, expiry, HONEST_RESOLVER))?;
        run.world.place(m, MAKER, false, 420_000, tusd(100))?;
        let quote = run.honest_quote(m, Verdict::BuyUp)?;
        let row = run.submit(m, Verdict::BuyUp, &quote)?;
        run.expect_reason(&row, &[0, 14], "the trusted creator's market");
        honest_bought += u64::from(row.reason == 0);
        run.advance(expiry + 1)?;
        run.settle(m, HONEST_RESOLVER, rng.chance(500_000))?;
    }
    run.report.loss = taken;
    run.note(format!(
        "Outsider markets submitted: {attempts}, refused with reason 19: {}; slots taken by them: 0 expected, {} measured; the trusted creator's markets bought afterwards: {honest_bought} of {rounds}.",
        run.report.by_reason[19], taken
    ));
    Ok(())
}

// --- the report

/// The summary table of every attack, then one section each.
pub fn markdown(reports: &[AdversaryReport], command: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "## Adversaries\n");
    let _ = writeln!(out, "Command: `{command}`\n");
    if let Some(first) = reports.first() {
        let _ = writeln!(out, "| parameter | value |\n| --- | --- |");
        let _ = writeln!(out, "| gate | {} |", first.backend);
        let _ = writeln!(out, "| rounds per adversary | {} |", first.config.rounds);
        let _ = writeln!(out, "| seed | {} |", first.config.seed);
        out.push_str(&sim::bounds_rows(&first.config.bounds));
        let _ =
            writeln!(out, "| initial collateral | {} tUSD |\n", sim::usdc(first.initial_balance));
    }
    let _ = writeln!(out, "| adversary | decisions | reasons | loss | bound | peak H - balance | violations | disagreements |");
    let _ = writeln!(out, "| --- | --- | --- | --- | --- | --- | --- | --- |");
    for r in reports {
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} tUSD | {} tUSD | {} tUSD | **{}** | {} |",
            r.adversary.name(),
            r.decisions,
            reasons(&r.by_reason),
            sim::usdc(r.loss),
            sim::usdc(r.bound),
            sim::usdc(r.peak_drawdown),
            r.violations,
            if r.backend == "reference model" {
                "-".to_string()
            } else {
                r.disagreements.to_string()
            }
        );
    }
    let _ = writeln!(out);
    for r in reports {
        let _ = writeln!(out, "### `{}`\n", r.adversary.name());
        let _ = writeln!(out, "{}\n", r.adversary.description());
        let _ = writeln!(
            out,
            "- Loss measured: {}: **{} tUSD** ({} base units); bound: {}: {} tUSD.",
            r.loss_label,
            sim::usdc(r.loss),
            r.loss,
            r.bound_label,
            sim::usdc(r.bound)
        );
        let _ = writeln!(
            out,
            "- Balance {} -> {} tUSD; largest H - balance after a step {} tUSD (maxDrawdown {} tUSD); positions written off {}.",
            sim::usdc(r.initial_balance),
            sim::usdc(r.final_balance),
            sim::usdc(r.peak_drawdown),
            sim::usdc(r.config.bounds.max_drawdown),
            r.write_offs
        );
        if let Some(gas) = r.max_submit_gas {
            let _ = writeln!(out, "- Most gas of one `submitVerdict`: {gas}.");
        }
        for n in &r.notes {
            let _ = writeln!(out, "- {n}");
        }
        let _ = writeln!(out, "- Violations: **{}**.", r.violations);
        for v in &r.violation_examples {
            let _ = writeln!(out, "  - {v}");
        }
        if r.backend != "reference model" {
            let _ = writeln!(
                out,
                "- Disagreements between the compiled contracts and the reference model: **{}**.",
                r.disagreements
            );
            for d in &r.disagreement_examples {
                let _ = writeln!(out, "  - {d}");
            }
        }
        let _ = writeln!(out);
    }
    out
}

/// `12 x10, 0 x3` style: every reason that occurred, with its label on hover-free markdown.
fn reasons(by_reason: &[u64; REASON_COUNT]) -> String {
    let parts: Vec<String> = by_reason
        .iter()
        .enumerate()
        .filter(|(_, n)| **n > 0)
        .map(|(code, n)| format!("{code} ({}) x{n}", REASON_LABELS[code]))
        .collect();
    if parts.is_empty() {
        "-".into()
    } else {
        parts.join(", ")
    }
}
