//! The aggregates RESULTS.md and the chart are rendered from: every figure the pages show,
//! folded one feed row at a time, in a value whose size does not grow with the record.
//!
//! The keeper keeps one [`Summary`] of the rows in its feed (saved in its state database), adds
//! the few rows still waiting to a copy of it to render the pages, and never holds the record
//! itself; `keeper report` folds the rows it re-derives from chain into a fresh one, so both
//! render the same bytes from the same rows.
//!
//! What is kept whole is capped; past a cap the pages say what they leave out, and every total
//! still counts everything:
//! - the latest [`LATEST_ROWS`] decisions;
//! - [`POSITIONS_CAP`] positions in the positions table (the oldest closed ones drop out first);
//! - [`PNL_POINTS_CAP`] points of the realised-P&L line (beyond it, neighbours are merged);
//! - [`MARKED_POINTS_CAP`] points of the marked-P&L line, spread over the whole record
//!   (beyond it, every other point is dropped and points are taken half as often);
//! - [`MODELS_CAP`] model labels, [`SCENARIOS_CAP`] scenarios and [`ARRIVALS_CAP`] arrival
//!   kinds per model (the rest counted under "other");
//! - [`ATTACKS_CAP`] attack groups of [`ATTACK_ROWS_CAP`] rows each.
//!
//! Labels come from a model's server and the operator: each is cut to [`LABEL_BYTES`].

use super::{
    feed::{DecisionRow, FeedRow},
    figures::{self, CalibrationTally},
};
use crate::domain::format::int;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, VecDeque};

/// Decisions shown in "Latest rows".
pub const LATEST_ROWS: usize = 15;
/// Positions listed in the positions table.
pub const POSITIONS_CAP: usize = 100;
/// Points of the cumulative realised P&L line.
pub const PNL_POINTS_CAP: usize = 1000;
/// Points of the marked-to-market P&L line. The summary and the chart are rewritten every
/// cycle, so this bounds what a cycle writes; 256 points over the chart's 790-pixel plot is
/// one every 3 pixels or more. (At 1,000, a long run's bytes per cycle grew by a fifth while
/// the line filled: `keeper/tests/longrun.rs`.)
pub const MARKED_POINTS_CAP: usize = 256;
/// Model labels tallied apart (the rest as one "other" line).
pub const MODELS_CAP: usize = 16;
/// Arrival kinds tallied apart per model.
pub const ARRIVALS_CAP: usize = 8;
/// Scenario labels tallied apart.
pub const SCENARIOS_CAP: usize = 64;
/// Attack groups kept for the adversary section.
pub const ATTACKS_CAP: usize = 16;
/// Rows kept per attack group.
pub const ATTACK_ROWS_CAP: usize = 64;
/// A label is cut to this many bytes (at a character boundary).
pub const LABEL_BYTES: usize = 256;
/// What a label past its cap is counted as.
pub const OTHER: &str = "other";

/// Where the keeper's state database keeps its summary. The version moves whenever the
/// summary's shape does: a state database holding an older one is rebuilt from chain, since a
/// summary read back with its new tallies empty would show wrong figures, not missing ones.
pub const SUMMARY_KEY: &str = "summary.v4";

/// The model label of rows the keeper recorded no model for (a record rebuilt from chain
/// alone).
pub const NOT_RECORDED: &str = "(not recorded)";

/// Scenario labels starting with this are attacks.
pub const ATTACK_PREFIX: &str = "attack ";

/// One model label's tally: (provider, model, what it is, model file sha256).
pub type ModelKey = (String, String, String, String);

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ModelTally {
    pub rows: u64,
    pub arrivals: BTreeMap<String, u64>,
    pub reasons: BTreeMap<u8, u64>,
    /// Its rows' fills that settled, and how many of those won.
    pub settled: u64,
    pub won: u64,
    /// Its rows' realised P&L ([`figures::row_pnl`]: write-offs included), base units.
    pub realised: i128,
    /// Sum of (price paid − outcome)² over its settled fills, 1e-12 units.
    pub squares: i128,
}

/// One model label's record as the pages show it.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ModelRow {
    pub model: String,
    pub provider: String,
    /// What it is ("language model: …", "rules", "replay").
    pub kind: String,
    /// The model file's sha256, where the row recorded one.
    pub sha256: String,
    /// How its answers arrived (a server's content field, a tool call, rules, replay), counted.
    pub arrivals: BTreeMap<String, u64>,
    pub decisions: u64,
    pub passes: u64,
    /// Refusals (every reason but PASS), by reason code.
    pub refusals: BTreeMap<u8, u64>,
    /// Fills whose position settled, and how many of those won.
    pub settled: u64,
    pub won: u64,
    /// won / settled, when any settled.
    pub win_rate: Option<f64>,
    /// Realised P&L of its rows (write-offs included), base units.
    pub realised_pnl: String,
    /// Brier score of the prices paid on its settled fills (lower is better).
    pub brier: Option<f64>,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ScenarioTally {
    pub rows: u64,
    pub reasons: BTreeSet<u8>,
}

/// A settlement as the pages show it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Closed {
    pub block: u64,
    pub up_won: bool,
    pub payout: String,
    pub pnl: String,
}

/// One market the gate bought in.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Position {
    pub market: String,
    /// The side its fills bought: "UP", "DOWN", or "UP and DOWN" (the gate's rule 17 refuses
    /// the second side, so a record of this gate never shows the last).
    pub side: String,
    pub fills: u64,
    pub bought: i128,
    pub spent: i128,
    /// What one token of its side is worth, 1e6 units: the average price paid at its first
    /// fill, then [`figures::mark_price`] at each later book the gate read in its market.
    pub mark: i128,
    /// The write-off's block and notional.
    pub written_off: Option<(u64, i128)>,
    pub settled: Option<Closed>,
}

/// A change of realised P&L: (block, 0 for a write-off or 1 for a settlement, delta, chain
/// time).
pub type Realised = (u64, u8, i128, u64);

/// One attack group: its label and its first rows.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AttackGroup {
    pub label: String,
    pub rows: Vec<DecisionRow>,
    /// Rows past [`ATTACK_ROWS_CAP`], counted only.
    pub more: u64,
}

#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub decisions: u64,
    pub passes: u64,
    pub offchain: u64,
    pub write_offs: u64,
    /// Rows per reason code, and rows failing each rule.
    pub reasons: BTreeMap<u8, u64>,
    pub failing: BTreeMap<u8, u64>,
    #[serde(with = "pairs")]
    pub models: BTreeMap<ModelKey, ModelTally>,
    pub scenarios: BTreeMap<String, ScenarioTally>,
    pub attacks: Vec<AttackGroup>,
    /// Attack rows not kept (past either attack cap).
    pub attacks_left_out: u64,
    /// The largest H − balance the gate read at any decision.
    pub peak_drawdown: i128,
    /// Positions in order of their first fill; closed ones beyond the cap dropped first.
    pub positions: VecDeque<Position>,
    pub positions_left_out: u64,
    /// Realised P&L changes, in order (block, kind), merged pairwise past the cap.
    pub realised: Vec<Realised>,
    pub realised_total: i128,
    /// Realised changes folded into their neighbours past [`PNL_POINTS_CAP`].
    pub realised_merged: u64,
    pub latest: VecDeque<DecisionRow>,
    /// Collateral spent by every fill, and by the fills whose position has closed (settled or
    /// written off): what the realised P&L was earned on.
    pub spent: i128,
    pub spent_closed: i128,
    /// The price paid against the outcome, over every settled fill.
    pub calibration: CalibrationTally,
    /// Gas of the transactions that published the decisions, each transaction once: gas
    /// used, and the fee (gas × price) in wei of the chain's native coin.
    pub gas_txs: u64,
    pub gas_used: u128,
    pub gas_fee: u128,
    /// Rows whose transaction's gas is not known (none, in a record read from a node).
    pub gas_unknown: u64,
    /// The last transaction counted, so the rows of one transaction count it once.
    pub last_gas_tx: String,
    /// Realised P&L plus every open position (neither settled nor written off) marked at
    /// [`Position::mark`]: (chain time, value) after every [`Summary::marked_stride`]-th row,
    /// at most [`MARKED_POINTS_CAP`] of them, and after the latest row in `marked_last`.
    pub marked: Vec<(u64, i128)>,
    pub marked_last: Option<(u64, i128)>,
    /// Rows per point of `marked` (doubled each time it would pass its cap), and rows since
    /// its last point.
    pub marked_stride: u64,
    pub marked_since: u64,
    /// Block and chain time of the first and the last decision.
    pub first: Option<(u64, u64)>,
    pub last: Option<(u64, u64)>,
    /// The rows that bought into a position no settlement has closed yet, with what closed
    /// them so far (a write-off): what a later closing row, naming them, is folded against.
    /// Bounded by the positions the gate holds at once and their fills.
    pub open: Vec<DecisionRow>,
}

/// A map whose keys are not strings, as JSON: a list of [key, value] pairs.
mod pairs {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};
    use std::collections::BTreeMap;

    pub fn serialize<K: Serialize, V: Serialize, S: Serializer>(
        map: &BTreeMap<K, V>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        s.collect_seq(map.iter())
    }

    pub fn deserialize<'de, K, V, D>(d: D) -> Result<BTreeMap<K, V>, D::Error>
    where
        K: Deserialize<'de> + Ord,
        V: Deserialize<'de>,
        D: Deserializer<'de>,
    {
        Ok(Vec::<(K, V)>::deserialize(d)?.into_iter().collect())
    }
}

/// `s` cut to [`LABEL_BYTES`] at a character boundary.
pub fn cut_label(s: &str) -> String {
    if s.len() <= LABEL_BYTES {
        return s.to_string();
    }
    let mut end = LABEL_BYTES;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &s[..end])
}

/// H − balance at a decision: how far the gate's collateral was below its high-water mark.
pub fn drawdown(d: &DecisionRow) -> Option<i128> {
    let b = d.book.as_ref()?;
    Some((int(&b.high_water_mark) - int(&b.collateral_available)).max(0))
}

impl Summary {
    /// Folds one feed row in.
    pub fn add(&mut self, row: &FeedRow) {
        let time = match row {
            FeedRow::Offchain(_) => {
                self.offchain += 1;
                return;
            }
            FeedRow::Decision(d) => {
                self.add_decision(d);
                d.time
            }
            FeedRow::Settlement(c) | FeedRow::LatePayout(c) => {
                self.add_closing(row);
                c.event.time
            }
            FeedRow::WriteOff(c) => {
                self.add_closing(row);
                c.event.time
            }
        };
        self.add_mark_point(time);
    }

    /// What the open positions are worth at their marks, less what they cost.
    pub fn open_marked(&self) -> i128 {
        let one = i128::from(crate::kit::bindings::PRICE_ONE);
        self.positions
            .iter()
            .filter(|p| p.settled.is_none() && p.written_off.is_none())
            .map(|p| p.bought * p.mark / one - p.spent)
            .sum()
    }

    /// Positions neither settled nor written off.
    pub fn open_positions(&self) -> usize {
        self.positions.iter().filter(|p| p.settled.is_none() && p.written_off.is_none()).count()
    }

    fn add_mark_point(&mut self, time: u64) {
        let point = (time, self.realised_total + self.open_marked());
        self.marked_last = Some(point);
        self.marked_since += 1;
        if self.marked_since < self.marked_stride.max(1) {
            return;
        }
        self.marked_since = 0;
        match self.marked.last_mut() {
            // One block holds many rows: its last value stands for it.
            Some(last) if last.0 == time => *last = point,
            _ => self.marked.push(point),
        }
        if self.marked.len() > MARKED_POINTS_CAP {
            // Keep the even points: the line keeps its whole span at half the detail.
            let mut i = 0;
            self.marked.retain(|_| {
                i += 1;
                i % 2 == 1
            });
            self.marked_stride = self.marked_stride.max(1) * 2;
        }
    }

    /// The realised-P&L line to draw: 0 from the first decision until something closes, then
    /// the running total after each change (write-offs count as losses when they happen, later
    /// payouts as gains when they come).
    pub fn realised_line(&self) -> Vec<(u64, i128)> {
        let mut line: Vec<(u64, i128)> = self.first.map(|(_, t)| (t, 0)).into_iter().collect();
        let mut acc = 0i128;
        for r in &self.realised {
            acc += r.2;
            line.push((r.3, acc));
        }
        line
    }

    /// The marked-P&L line to draw: its points and the latest value.
    pub fn marked_line(&self) -> Vec<(u64, i128)> {
        let mut line = self.marked.clone();
        if let Some(last) = self.marked_last {
            match line.last_mut() {
                Some(l) if l.0 == last.0 => *l = last,
                _ => line.push(last),
            }
        }
        line
    }

    /// A settlement, write-off or late payout: attached to each open row it names, and folded
    /// in as what it changed about that row.
    fn add_closing(&mut self, closing: &FeedRow) {
        for r in closing.closes() {
            let Some(i) = self.open.iter().position(|d| d.tx == r.tx && d.log_index == r.log_index)
            else {
                continue;
            };
            let before = self.open[i].clone();
            closing.attach_to(&mut self.open[i]);
            let after = self.open[i].clone();
            if after.settlement.is_some() {
                self.open.remove(i);
            }
            self.fold_close(&before, &after);
            let same = |d: &DecisionRow| d.tx == r.tx && d.log_index == r.log_index;
            for d in self.latest.iter_mut().filter(|d| same(d)) {
                closing.attach_to(d);
            }
            for g in &mut self.attacks {
                for d in g.rows.iter_mut().filter(|d| same(d)) {
                    closing.attach_to(d);
                }
            }
        }
    }

    fn add_decision(&mut self, d: &DecisionRow) {
        // Folded as it was decided, then as whatever closed it since (a row of a v1 feed
        // carries its settlement).
        let mut bare = d.clone();
        bare.settlement = None;
        bare.write_off = None;
        self.add_bare(&bare);
        if int(&d.filled) > 0 && d.settlement.is_none() {
            self.open.push(d.clone());
        }
        self.fold_close(&bare, d);
        for row in self.latest.iter_mut().chain(self.attacks.iter_mut().flat_map(|g| &mut g.rows)) {
            if row.tx == d.tx && row.log_index == d.log_index {
                row.settlement.clone_from(&d.settlement);
                row.write_off.clone_from(&d.write_off);
            }
        }
    }

    /// What closing `before` into `after` (the same fill, with a write-off or settlement
    /// attached) changes: the collateral closed positions spent, the calibration, the model's
    /// realised P&L and settled fills, and the position's events.
    fn fold_close(&mut self, before: &DecisionRow, after: &DecisionRow) {
        if int(&after.filled) == 0 {
            return;
        }
        let closed = |d: &DecisionRow| d.settlement.is_some() || d.write_off.is_some();
        if closed(after) && !closed(before) {
            self.spent_closed += int(&after.spent);
        }
        if before.settlement.is_none() {
            self.calibration.add(after);
        }
        let key = self.model_key(after);
        if let Some(t) = self.models.get_mut(&key) {
            t.realised +=
                figures::row_pnl(after).unwrap_or(0) - figures::row_pnl(before).unwrap_or(0);
            if figures::settled_fill(before).is_none() {
                if let Some((price, won)) = figures::settled_fill(after) {
                    t.settled += 1;
                    t.won += u64::from(won);
                    t.squares += figures::squared_error(price, won);
                }
            }
        }
        self.close_position(after);
    }

    fn add_bare(&mut self, d: &DecisionRow) {
        self.decisions += 1;
        if d.reason == 0 {
            self.passes += 1;
        }
        self.first.get_or_insert((d.block, d.time));
        self.last = Some((d.block, d.time));
        self.spent += int(&d.spent);
        match &d.gas {
            // The rows of one transaction are adjacent in feed order: it counts once.
            Some(g) if self.last_gas_tx != d.tx => {
                self.gas_txs += 1;
                self.gas_used += u128::from(g.gas_used);
                self.gas_fee = self.gas_fee.saturating_add(g.fee());
                self.last_gas_tx = d.tx.clone();
            }
            Some(_) => {}
            None => self.gas_unknown += 1,
        }
        *self.reasons.entry(d.reason).or_default() += 1;
        for &rule in &d.failed_rules {
            *self.failing.entry(rule).or_default() += 1;
        }
        self.add_model(d);
        if let Some(sc) = &d.note.scenario {
            let sc = cut_label(sc);
            let key = if self.scenarios.contains_key(&sc) || self.scenarios.len() < SCENARIOS_CAP {
                sc
            } else {
                OTHER.to_string()
            };
            let t = self.scenarios.entry(key).or_default();
            t.rows += 1;
            t.reasons.insert(d.reason);
        }
        self.add_attack(d);
        if let Some(dd) = drawdown(d) {
            self.peak_drawdown = self.peak_drawdown.max(dd);
        }
        self.add_position(d);
        self.latest.push_back(d.clone());
        if self.latest.len() > LATEST_ROWS {
            self.latest.pop_front();
        }
    }

    /// The model label `d` is tallied under: its own, or [`OTHER`] past [`MODELS_CAP`].
    fn model_key(&self, d: &DecisionRow) -> ModelKey {
        let n = &d.note;
        let part = |v: &Option<String>, none: &str| cut_label(v.as_deref().unwrap_or(none));
        let key = if n.provider.is_none() && n.model.is_none() {
            (NOT_RECORDED.into(), NOT_RECORDED.into(), String::new(), String::new())
        } else {
            (
                part(&n.provider, "?"),
                part(&n.model, "?"),
                part(&n.model_kind, ""),
                part(&n.model_sha256, ""),
            )
        };
        if !self.models.contains_key(&key) && self.models.len() >= MODELS_CAP {
            return (OTHER.into(), OTHER.into(), String::new(), String::new());
        }
        key
    }

    fn add_model(&mut self, d: &DecisionRow) {
        let n = &d.note;
        let key = self.model_key(d);
        let t = self.models.entry(key).or_default();
        t.rows += 1;
        *t.reasons.entry(d.reason).or_default() += 1;
        let arrival = cut_label(n.arrival.as_deref().unwrap_or("not recorded"));
        let arrival = if t.arrivals.contains_key(&arrival) || t.arrivals.len() < ARRIVALS_CAP {
            arrival
        } else {
            OTHER.to_string()
        };
        *t.arrivals.entry(arrival).or_default() += 1;
    }

    fn add_attack(&mut self, d: &DecisionRow) {
        let Some(label) = d.note.scenario.as_deref().filter(|s| s.starts_with(ATTACK_PREFIX))
        else {
            return;
        };
        let label = cut_label(label);
        let at = match self.attacks.iter().position(|g| g.label == label) {
            Some(i) => i,
            None if self.attacks.len() < ATTACKS_CAP => {
                self.attacks.push(AttackGroup { label, rows: Vec::new(), more: 0 });
                self.attacks.len() - 1
            }
            None => {
                self.attacks_left_out += 1;
                return;
            }
        };
        let g = &mut self.attacks[at];
        if g.rows.len() < ATTACK_ROWS_CAP {
            g.rows.push(d.clone());
        } else {
            g.more += 1;
            self.attacks_left_out += 1;
        }
    }

    fn add_position(&mut self, d: &DecisionRow) {
        // Any row that read the book of a market held re-marks it (before its own fill).
        if let Some(b) = &d.book {
            for p in self.positions.iter_mut().filter(|p| p.market == d.market) {
                if p.settled.is_none() && p.written_off.is_none() {
                    p.mark = figures::mark_price(p.side != "DOWN", &b.best_bid, &b.best_ask);
                }
            }
        }
        // A closed position takes no more rows (the gate buys in no settled market, and in none
        // past its expiry), so one that left the table never comes back.
        if d.filled == "0" {
            return;
        }
        let at = match self.positions.iter().position(|p| p.market == d.market) {
            Some(i) => i,
            None => {
                self.positions.push_back(Position {
                    market: d.market.clone(),
                    side: String::new(),
                    fills: 0,
                    bought: 0,
                    spent: 0,
                    mark: d.average_price_paid.as_deref().map(int).unwrap_or(0),
                    written_off: None,
                    settled: None,
                });
                self.positions.len() - 1
            }
        };
        {
            let p = &mut self.positions[at];
            p.fills += 1;
            let side = figures::side(d.verdict).unwrap_or("?");
            if p.side.is_empty() {
                p.side = side.to_string();
            } else if p.side != side {
                p.side = "UP and DOWN".to_string();
            }
            p.bought += int(&d.filled);
            p.spent += int(&d.spent);
        }
        self.cap_positions();
    }

    /// The write-off or settlement `d` carries, as its position's event (once per position).
    fn close_position(&mut self, d: &DecisionRow) {
        let Some(at) = self.positions.iter().position(|p| p.market == d.market) else { return };
        let mut events: Vec<Realised> = Vec::new();
        {
            let p = &mut self.positions[at];
            if let (None, Some(w)) = (&p.written_off, &d.write_off) {
                p.written_off = Some((w.block, int(&w.notional)));
                events.push((w.block, 0, -int(&w.notional), w.time));
            }
            if let (None, Some(st)) = (&p.settled, &d.settlement) {
                p.settled = Some(Closed {
                    block: st.block,
                    up_won: st.up_won,
                    payout: st.payout.clone(),
                    pnl: st.pnl.clone(),
                });
                // After a write-off (its loss already counted) the payout is a gain.
                let late = p.written_off.is_some_and(|(b, _)| b <= st.block);
                let delta = if late { int(&st.payout) } else { int(&st.pnl) };
                events.push((st.block, 1, delta, st.time));
            }
        }
        if events.iter().any(|e| e.1 == 0) {
            self.write_offs += 1;
        }
        for e in events {
            self.add_realised(e);
        }
        self.cap_positions();
    }

    /// Drops the oldest closed (settled or written-off) positions past the cap. An open one is
    /// never dropped, since it can still change: the table may exceed the cap by the positions
    /// open at once, which the gate's maxConcurrent bounds.
    fn cap_positions(&mut self) {
        while self.positions.len() > POSITIONS_CAP {
            let closed = |p: &Position| p.settled.is_some() || p.written_off.is_some();
            let Some(i) = self.positions.iter().position(closed) else { break };
            self.positions.remove(i);
            self.positions_left_out += 1;
        }
    }

    fn add_realised(&mut self, e: Realised) {
        self.realised_total += e.2;
        // In order of (block, kind); equal keys keep the order they came in.
        let at = self.realised.partition_point(|r| (r.0, r.1) <= (e.0, e.1));
        self.realised.insert(at, e);
        if self.realised.len() > PNL_POINTS_CAP {
            // Merge the oldest pair: the line keeps its shape and its end point.
            let b = self.realised.remove(1);
            let a = &mut self.realised[0];
            *a = (b.0, b.1, a.2 + b.2, b.3);
            self.realised_merged += 1;
        }
    }

    /// One row per model label, best realised P&L first (then most decisions).
    pub fn models_ranked(&self) -> Vec<ModelRow> {
        let mut out: Vec<(i128, ModelRow)> = self
            .models
            .iter()
            .map(|((provider, model, kind, sha), t)| {
                let passes = t.reasons.get(&0).copied().unwrap_or(0);
                let refusals = t.reasons.iter().filter(|(c, _)| **c != 0).map(|(c, n)| (*c, *n));
                let row = ModelRow {
                    model: model.clone(),
                    provider: provider.clone(),
                    kind: kind.clone(),
                    sha256: sha.clone(),
                    arrivals: t.arrivals.clone(),
                    decisions: t.rows,
                    passes,
                    refusals: refusals.collect(),
                    settled: t.settled,
                    won: t.won,
                    win_rate: (t.settled > 0).then(|| t.won as f64 / t.settled as f64),
                    realised_pnl: t.realised.to_string(),
                    brier: figures::brier(t.squares, t.settled),
                };
                (t.realised, row)
            })
            .collect();
        out.sort_by(|a, b| b.0.cmp(&a.0).then(b.1.decisions.cmp(&a.1.decisions)));
        out.into_iter().map(|(_, m)| m).collect()
    }

    /// Realised P&L ÷ the collateral its closed positions spent, when any closed.
    pub fn return_on_capital(&self) -> Option<f64> {
        (self.spent_closed > 0).then(|| self.realised_total as f64 / self.spent_closed as f64)
    }

    /// Decisions per reason code.
    pub fn reason_count(&self, code: u8) -> u64 {
        self.reasons.get(&code).copied().unwrap_or(0)
    }

    /// Decisions failing `rule`.
    pub fn failing_count(&self, rule: u8) -> u64 {
        self.failing.get(&rule).copied().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::domain::decision::{Settlement, WriteOff};

    fn row(block: u64, market: &str, filled: &str) -> DecisionRow {
        DecisionRow {
            gate: "0x0".into(),
            time: block * 2,
            raw: Some("BUY_UP".into()),
            raw_length: 6,
            verdict: 1,
            reason: if filled == "0" { 3 } else { 0 },
            filled: filled.into(),
            spent: filled.into(),
            ..DecisionRow::blank(block, market)
        }
    }

    fn settled(block: u64, payout: &str, pnl: &str) -> Settlement {
        Settlement {
            block,
            tx: String::new(),
            up_won: true,
            up_units: "0".into(),
            down_units: "0".into(),
            notional: "0".into(),
            payout: payout.into(),
            pnl: pnl.into(),
            time: 0,
        }
    }

    #[test]
    fn realised_is_ordered_by_block_and_a_late_payout_is_a_gain() {
        let mut s = Summary::default();
        // Market a: written off (4.0) at block 10 and paid 10.0 at block 20; market c: settled
        // at a loss of 1.0 at block 5, folded after a.
        let mut a = row(1, "a", "4000000");
        a.write_off = Some(WriteOff {
            block: 10,
            time: 0,
            tx: String::new(),
            up_units: "0".into(),
            down_units: "0".into(),
            notional: "4000000".into(),
            expiry: 0,
        });
        a.settlement = Some(settled(20, "10000000", "6000000"));
        let mut c = row(2, "c", "1000000");
        c.settlement = Some(settled(5, "0", "-1000000"));
        s.add(&FeedRow::Decision(a));
        s.add(&FeedRow::Decision(c));
        assert_eq!(
            s.realised,
            vec![(5, 1, -1_000_000, 0), (10, 0, -4_000_000, 0), (20, 1, 10_000_000, 0)]
        );
        // -1.0 - 4.0 + 10.0 = 5.0
        assert_eq!(s.realised_total, 5_000_000);
        assert_eq!(s.write_offs, 1);
    }

    /// The same record, folded as a v1 feed held it (each bought row carrying what closed its
    /// position) and as the v2 event log writes it (decisions first, closing rows later naming
    /// them), gives the same summary: the pages do not depend on the feed's shape.
    #[test]
    fn an_event_log_folds_to_the_summary_of_the_joined_rows() {
        use crate::domain::decision::{Closing, DecisionRef};
        // Market a: two UP fills (4.0 and 2.0 units at 0.5), written off at block 10, paid at
        // block 20 (UP won: 6.0 units pay 6.0); market c: one UP fill (1.0), settled at block 5
        // (DOWN won: pays 0); block 4 bought nothing.
        let mut a1 = row(1, "a", "4000000");
        let mut a2 = row(2, "a", "2000000");
        let mut c = row(3, "c", "1000000");
        let d = row(4, "d", "0");
        for (r, model) in [(&mut a1, "m1"), (&mut a2, "m2"), (&mut c, "m1")] {
            r.average_price_paid = Some("500000".into());
            r.spent = (int(&r.filled) / 2).to_string();
            r.note.provider = Some("p".into());
            r.note.model = Some(model.into());
        }
        let wo = WriteOff {
            block: 10,
            time: 20,
            tx: "0xw".into(),
            up_units: "6000000".into(),
            down_units: "0".into(),
            notional: "3000000".into(),
            expiry: 9,
        };
        let paid = Settlement {
            block: 20,
            tx: "0xp".into(),
            up_won: true,
            up_units: "6000000".into(),
            down_units: "0".into(),
            notional: "3000000".into(),
            payout: "6000000".into(),
            pnl: "3000000".into(),
            time: 40,
        };
        let lost = Settlement {
            block: 5,
            tx: "0xs".into(),
            up_won: false,
            up_units: "1000000".into(),
            down_units: "0".into(),
            notional: "500000".into(),
            payout: "0".into(),
            pnl: "-500000".into(),
            time: 10,
        };
        fn closing<E>(event: E, closes: &[&DecisionRow]) -> Closing<E> {
            Closing {
                chain_id: 1,
                gate: "0x0".into(),
                log_index: 0,
                market: closes[0].market.clone(),
                closes: closes
                    .iter()
                    .map(|r| DecisionRef { tx: r.tx.clone(), log_index: 0 })
                    .collect(),
                event,
            }
        }
        let log = vec![
            FeedRow::Decision(a1.clone()),
            FeedRow::Decision(a2.clone()),
            FeedRow::Decision(c.clone()),
            FeedRow::Decision(d.clone()),
            FeedRow::Settlement(closing(lost.clone(), &[&c])),
            FeedRow::WriteOff(closing(wo.clone(), &[&a1, &a2])),
            FeedRow::LatePayout(closing(paid.clone(), &[&a1, &a2])),
        ];
        let mut v2 = Summary::default();
        for r in &log {
            v2.add(r);
        }
        for r in [&mut a1, &mut a2] {
            r.write_off = Some(wo.clone());
            r.settlement = Some(paid.clone());
        }
        c.settlement = Some(lost);
        let mut v1 = Summary::default();
        for r in [a1, a2, c, d] {
            v1.add(&FeedRow::Decision(r));
        }
        assert!(v2.open.is_empty(), "every bought row was settled");
        // Except the marked-P&L line: a time series in the order things happened, which only
        // the event log knows (a joined row carries its closing at its decision's place). A
        // v1 feed is migrated to the event log before it is folded, so no page folds joined
        // rows.
        assert_eq!(v2.marked_last.map(|p| p.1), Some(v2.realised_total));
        for s in [&mut v1, &mut v2] {
            s.marked.clear();
            s.marked_last = None;
            s.marked_since = 0;
        }
        assert_eq!(v2, v1);
        // Realised: -0.5 (c) at block 5, -3.0 (a's write-off) at 10, +6.0 (late payout) at 20.
        assert_eq!(v2.realised_total, 2_500_000);
        assert_eq!(v2.write_offs, 1);
        // m1: a1's share 4/6 of 6.0 = 4.0 less 2.0 spent, and c's -0.5: +1.5; m2: 2.0 - 1.0.
        let m = |name: &str| {
            v2.models.iter().find(|(k, _)| k.1 == name).map(|(_, t)| t.realised).unwrap()
        };
        assert_eq!((m("m1"), m("m2")), (1_500_000, 1_000_000));
        assert_eq!(v2.spent_closed, 3_500_000);
        assert_eq!(v2.calibration.settled, 3);
        // Mid-way, after the write-off only: both of a's rows are still open, and lost.
        let mut mid = Summary::default();
        for r in &log[..6] {
            mid.add(r);
        }
        assert_eq!(mid.open.len(), 2);
        assert_eq!(mid.realised_total, -3_500_000);
    }

    /// Who could mislead: nobody in particular; the risk is a page that shows only realised
    /// P&L while an open position has lost most of its value. The marked line counts every
    /// open position at the last price the gate read for its side.
    #[test]
    fn open_positions_are_marked_at_the_last_price_the_gate_read() {
        use crate::domain::decision::{BookRead, Closing, DecisionRef};
        fn book(bid: &str, ask: &str) -> BookRead {
            BookRead {
                best_bid: bid.into(),
                best_ask: ask.into(),
                tick_size: "0".into(),
                lot_size: "0".into(),
                min_quantity: "0".into(),
                expiry: 0,
                now: 0,
                finalized: false,
                open_positions: 0,
                open_notional: "0".into(),
                collateral_available: "0".into(),
                resolver_trusted: true,
                held_side: 0,
                high_water_mark: "0".into(),
                creator_trusted: true,
            }
        }
        let mut s = Summary::default();
        // Block 1 (time 2): 10 UP tokens bought at 0.40 for 4.0, the book it read (bid 0.38)
        // before its fill: the position starts at the price paid, 10 × 0.40 − 4.0 = 0.
        let mut buy = row(1, "a", "10000000");
        buy.spent = "4000000".into();
        buy.average_price_paid = Some("400000".into());
        buy.book = Some(book("380000", "400000"));
        s.add(&FeedRow::Decision(buy.clone()));
        assert_eq!(s.marked_line(), vec![(2, 0)]);
        // Block 2 (time 4): an ABSTAIN in the same market reads bid 0.55: 10 × 0.55 − 4.0 = +1.5.
        let mut later = row(2, "a", "0");
        later.book = Some(book("550000", "600000"));
        s.add(&FeedRow::Decision(later));
        // Block 3 (time 6): another market's book leaves a's mark alone.
        let mut other = row(3, "b", "0");
        other.book = Some(book("10000", "20000"));
        s.add(&FeedRow::Decision(other));
        assert_eq!(s.marked_line(), vec![(2, 0), (4, 1_500_000), (6, 1_500_000)]);
        assert_eq!((s.open_positions(), s.open_marked()), (1, 1_500_000));
        // Block 4 (time 8): no bid left in a: 10 × 0 − 4.0 = −4.0, while realised P&L stays 0.
        let mut empty = row(4, "a", "0");
        empty.book = Some(book("0", "600000"));
        s.add(&FeedRow::Decision(empty));
        assert_eq!(s.marked_last, Some((8, -4_000_000)));
        assert_eq!(s.realised_total, 0);
        // Time 10: UP won, 10 tokens pay 10.0: realised 10.0 − 4.0 = +6.0, nothing open.
        let mut won = settled(5, "10000000", "6000000");
        won.time = 10;
        s.add(&FeedRow::Settlement(Closing {
            chain_id: 1,
            gate: "0x0".into(),
            log_index: 0,
            market: "a".into(),
            closes: vec![DecisionRef { tx: buy.tx.clone(), log_index: 0 }],
            event: won,
        }));
        assert_eq!(s.marked_last, Some((10, 6_000_000)));
        assert_eq!((s.open_positions(), s.open_marked()), (0, 0));
        // A DOWN position is marked at 1 − the best ask: 10 DOWN at 0.30 (3.0), ask 0.60 →
        // 10 × 0.40 − 3.0 = +1.0, on top of the realised 6.0.
        let mut down = row(6, "c", "10000000");
        down.verdict = crate::kit::bindings::verdict::BUY_DOWN;
        down.spent = "3000000".into();
        down.average_price_paid = Some("300000".into());
        s.add(&FeedRow::Decision(down));
        let mut read = row(7, "c", "0");
        read.book = Some(book("550000", "600000"));
        s.add(&FeedRow::Decision(read));
        assert_eq!(s.marked_last, Some((14, 7_000_000)));
    }

    #[test]
    fn a_year_of_rows_stays_bounded() {
        // 50,000 decisions over 5,000 markets, each market bought twice and settled; every row
        // carries a 1 KB answer. The summary keeps its caps and its totals count everything.
        let mut s = Summary::default();
        let raw = "x".repeat(1024);
        for i in 0..50_000u64 {
            let market = format!("m{}", i / 10);
            let mut r = row(i, &market, if i % 10 < 2 { "1000000" } else { "0" });
            r.raw = Some(raw.clone());
            r.note.scenario = Some(format!("scenario {}", i % 100));
            r.note.provider = Some("p".into());
            r.note.model = Some(format!("model {}", i % 40));
            if r.filled != "0" {
                r.settlement = Some(settled(i + 5, "2000000", "1000000"));
            }
            s.add(&FeedRow::Decision(r));
        }
        assert_eq!(s.decisions, 50_000);
        assert_eq!(s.latest.len(), LATEST_ROWS);
        assert_eq!(s.positions.len(), POSITIONS_CAP);
        assert_eq!(s.positions_left_out, 5_000 - POSITIONS_CAP as u64);
        assert_eq!(s.realised.len(), PNL_POINTS_CAP);
        // 5,000 settlements of +1.0 each.
        assert_eq!(s.realised_total, 5_000_000_000);
        assert_eq!(s.realised.iter().map(|r| r.2).sum::<i128>(), 5_000_000_000);
        // The marked line spans the whole record at bounded detail: 50,000 rows and 5,000
        // closings, one point per stride of rows.
        assert!(s.marked.len() <= MARKED_POINTS_CAP, "{}", s.marked.len());
        assert!(s.marked.len() > MARKED_POINTS_CAP / 2, "{}", s.marked.len());
        assert!(s.marked[0].0 < 2 * 1_000, "starts near the first row: {:?}", s.marked[0]);
        assert_eq!(s.marked_last, Some((2 * 49_999, 5_000_000_000)));
        assert_eq!(s.scenarios.len(), SCENARIOS_CAP + 1);
        assert_eq!(s.models.len(), MODELS_CAP + 1);
        let text = serde_json::to_string(&s).unwrap();
        let bytes = text.len();
        let back: Summary = serde_json::from_str(&text).unwrap();
        assert_eq!(back, s, "the summary is saved and read back whole");
        // Bounded by the caps, not the rows: the latest 15 rows carry 15 KB of answers, the
        // rest is tallies.
        println!("summary of 50,000 rows: {bytes} bytes");
        assert!(bytes < 200 * 1024, "{bytes}");
    }
}
