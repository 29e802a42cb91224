//! What the floor shows, as values: the record read by [`super::track`] turned into the views
//! the pages and the JSON API serve (status, gate card, decisions, models, calibration), and
//! the feed's filter, parsed and bounded. Nothing here talks to a node, a disk or a socket.
//!
//! Amounts are shown in collateral units with the token's symbol, prices as probabilities; the
//! raw integers stay beside them in the JSON so a check never has to parse a display string.

pub use crate::record::figures::{
    amount, gas_price, native, prob, row_pnl, row_won, side, tokens, verdict_name, Bucket,
    Calibration,
};
pub use crate::record::summary::ModelRow;
use crate::{
    domain::decision::{DecisionRow, GateFacts, OffchainRow, TxGas},
    domain::format::int,
    kit::bindings::verdict,
    record::query::RowFilter,
    record::summary::Summary,
};
use alloy::primitives::Address;
use serde::Serialize;
use std::collections::{BTreeMap, HashMap};

/// The largest page of the feed a request may ask for.
pub const MAX_PER_PAGE: usize = 200;
/// The feed's page size when none is asked for.
pub const DEFAULT_PER_PAGE: usize = 50;
/// The highest page number accepted (with [`MAX_PER_PAGE`], past any real record).
pub const MAX_PAGE: usize = 1_000_000;
/// The longest value of one query parameter, in bytes.
pub const MAX_PARAM_BYTES: usize = 256;
#[derive(Debug, Clone, Serialize)]
pub struct Settled {
    pub block: u64,
    pub tx: String,
    pub up_won: bool,
    /// Whether the side this row bought won.
    pub won: Option<bool>,
    pub payout: String,
    pub pnl: String,
}

/// One decision as the floor shows it and `GET /api/decisions` returns it.
#[derive(Debug, Clone, Serialize)]
pub struct DecisionView {
    pub block: u64,
    pub tx: String,
    pub log_index: u64,
    pub time: u64,
    pub market: String,
    /// The market's question, where its `MarketCreated` carried one that checks.
    pub question: Option<String>,
    /// The answer exactly as submitted (None where only its logged head is known and that is
    /// not all of it).
    pub raw: Option<String>,
    pub raw_length: u64,
    pub raw_hash: String,
    pub verdict: &'static str,
    pub verdict_code: u8,
    pub reason: u8,
    pub label: String,
    pub failed_rules: Vec<u8>,
    pub failed_labels: Vec<String>,
    pub side: Option<&'static str>,
    /// Prices as probabilities.
    pub best_level_price: Option<String>,
    pub limit: Option<String>,
    pub average_price: Option<String>,
    /// Amounts in base units (strings, as the feed holds them) and shown with the symbol.
    pub quantity: String,
    pub cost: String,
    pub filled: String,
    pub spent: String,
    pub cost_shown: String,
    pub spent_shown: String,
    pub settlement: Option<Settled>,
    pub written_off: bool,
    /// This row's P&L once its position closed, in base units.
    pub pnl: Option<String>,
    pub provider: Option<String>,
    pub model: Option<String>,
    pub scenario: Option<String>,
    pub prompt_hash: String,
    pub read_block: u64,
    /// The publishing transaction's gas, and its fee (gas × price) in wei.
    pub gas: Option<TxGas>,
    pub fee: Option<String>,
}

impl DecisionView {
    pub fn new(d: &DecisionRow, labels: &[String], question: Option<&str>, symbol: &str) -> Self {
        let label = |c: u8| labels.get(usize::from(c)).cloned().unwrap_or_else(|| format!("{c}"));
        let priced = d.quote.is_some();
        Self {
            block: d.block,
            tx: d.tx.clone(),
            log_index: d.log_index,
            time: d.time,
            market: d.market.clone(),
            question: question.map(str::to_string),
            raw: d.raw.clone(),
            raw_length: d.raw_length,
            raw_hash: d.raw_hash.clone(),
            verdict: verdict_name(d.verdict),
            verdict_code: d.verdict,
            reason: d.reason,
            label: label(d.reason),
            failed_rules: d.failed_rules.clone(),
            failed_labels: d.failed_rules.iter().map(|&r| label(r)).collect(),
            side: side(d.verdict),
            best_level_price: (priced && int(&d.price_paid) > 0).then(|| prob(&d.price_paid)),
            limit: (priced && int(&d.limit) > 0).then(|| prob(&d.limit)),
            average_price: d.average_price_paid.as_deref().map(prob),
            quantity: d.quantity.clone(),
            cost: d.cost.clone(),
            filled: d.filled.clone(),
            spent: d.spent.clone(),
            cost_shown: amount(&d.cost, symbol),
            spent_shown: amount(&d.spent, symbol),
            settlement: d.settlement.as_ref().map(|s| Settled {
                block: s.block,
                tx: s.tx.clone(),
                up_won: s.up_won,
                won: row_won(d),
                payout: s.payout.clone(),
                pnl: s.pnl.clone(),
            }),
            written_off: d.write_off.is_some(),
            pnl: row_pnl(d).map(|p| p.to_string()),
            provider: d.note.provider.clone(),
            model: d.note.model.clone(),
            scenario: d.note.scenario.clone(),
            prompt_hash: d.prompt_hash.clone(),
            read_block: d.read_block,
            gas: d.gas.clone(),
            fee: d.gas.as_ref().map(|g| g.fee().to_string()),
        }
    }
}

/// Which verdicts a filter keeps, by name or code.
pub fn parse_verdict(v: &str) -> Option<u8> {
    match v {
        "ABSTAIN" | "0" => Some(verdict::ABSTAIN),
        "BUY_UP" | "1" => Some(verdict::BUY_UP),
        "BUY_DOWN" | "2" => Some(verdict::BUY_DOWN),
        "INVALID" | "255" => Some(verdict::INVALID),
        _ => None,
    }
}

/// The feed's filter and page, from `?reason=&verdict=&market=&model=&scenario=&page=&per_page=`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FeedQuery {
    pub reason: Option<u8>,
    pub verdict: Option<u8>,
    pub market: Option<Address>,
    pub model: Option<String>,
    pub scenario: Option<String>,
    /// From 1.
    pub page: usize,
    pub per_page: usize,
}

impl Default for FeedQuery {
    fn default() -> Self {
        Self {
            reason: None,
            verdict: None,
            market: None,
            model: None,
            scenario: None,
            page: 1,
            per_page: DEFAULT_PER_PAGE,
        }
    }
}

/// A query the floor refuses, with what was wrong (shown in the 400's body).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BadQuery(pub String);

impl FeedQuery {
    /// Parses the query pairs. An unknown or repeated parameter, a value that does not parse,
    /// one out of range or longer than [`MAX_PARAM_BYTES`] is refused; an empty value is no
    /// filter (what an HTML form sends for "any").
    pub fn parse(pairs: &[(String, String)], reasons: usize) -> Result<Self, BadQuery> {
        let mut q = Self::default();
        let mut seen: Vec<&str> = Vec::new();
        for (k, v) in pairs {
            if seen.contains(&k.as_str()) {
                return Err(BadQuery(format!("parameter {} given twice", shown(k))));
            }
            seen.push(k);
            if v.len() > MAX_PARAM_BYTES {
                return Err(BadQuery(format!(
                    "parameter {} is {} bytes long; at most {MAX_PARAM_BYTES}",
                    shown(k),
                    v.len()
                )));
            }
            if v.is_empty() {
                continue;
            }
            let bad = |want: &str| BadQuery(format!("{k}={} is not {want}", shown(v)));
            match k.as_str() {
                "reason" => {
                    let r: u8 = v.parse().map_err(|_| bad("a reason code"))?;
                    if usize::from(r) >= reasons {
                        return Err(bad(&format!("a reason code (0..{})", reasons - 1)));
                    }
                    q.reason = Some(r);
                }
                "verdict" => {
                    q.verdict = Some(
                        parse_verdict(v)
                            .ok_or_else(|| bad("ABSTAIN, BUY_UP, BUY_DOWN or INVALID"))?,
                    )
                }
                "market" => q.market = Some(v.parse().map_err(|_| bad("an address"))?),
                "model" => q.model = Some(v.clone()),
                "scenario" => q.scenario = Some(v.clone()),
                "page" => {
                    q.page = v
                        .parse()
                        .ok()
                        .filter(|p| (1..=MAX_PAGE).contains(p))
                        .ok_or_else(|| bad(&format!("a page number (1..={MAX_PAGE})")))?
                }
                "per_page" => {
                    q.per_page = v
                        .parse()
                        .ok()
                        .filter(|p| (1..=MAX_PER_PAGE).contains(p))
                        .ok_or_else(|| bad(&format!("a page size (1..={MAX_PER_PAGE})")))?
                }
                _ => {
                    return Err(BadQuery(format!(
                        "unknown parameter {}: the feed takes reason, verdict, market, model, \
                         scenario, page and per_page",
                        shown(k)
                    )))
                }
            }
        }
        Ok(q)
    }

    /// The filter as the state database's reader takes it.
    pub fn filter(&self) -> RowFilter {
        RowFilter {
            reason: self.reason,
            verdict: self.verdict,
            market: self.market.map(|m| m.to_checksum(None)),
            model: self.model.clone(),
            scenario: self.scenario.clone(),
        }
    }

    /// Rows a page skips before its first.
    pub fn offset(&self) -> u64 {
        ((self.page - 1) as u64).saturating_mul(self.per_page as u64)
    }

    /// The query string of this filter at page `page` (for links; values URL-encoded).
    pub fn link(&self, page: usize) -> String {
        let mut parts = Vec::new();
        let mut add = |k: &str, v: String| parts.push(format!("{k}={}", urlencode(&v)));
        if let Some(r) = self.reason {
            add("reason", r.to_string());
        }
        if let Some(v) = self.verdict {
            add("verdict", verdict_name(v).to_string());
        }
        if let Some(m) = self.market {
            add("market", m.to_checksum(None));
        }
        if let Some(m) = &self.model {
            add("model", m.clone());
        }
        if let Some(s) = &self.scenario {
            add("scenario", s.clone());
        }
        add("page", page.to_string());
        add("per_page", self.per_page.to_string());
        format!("?{}", parts.join("&"))
    }
}

/// A query parameter's name or value inside an error message: JSON-quoted and cut.
fn shown(s: &str) -> String {
    let cut: String = s.chars().take(40).collect();
    serde_json::to_string(&cut).unwrap_or_default()
}

/// Percent-encodes everything but unreserved characters.
pub fn urlencode(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for b in s.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// One page of the feed, newest first.
#[derive(Debug, Clone, Serialize)]
pub struct Page {
    pub total: usize,
    pub page: usize,
    pub per_page: usize,
    pub pages: usize,
    pub decisions: Vec<DecisionView>,
}

/// The page `q` asks for: `rows`, the page's decisions newest first, of `total` passing its
/// filter (as [`crate::record::query`] reads them), with the checked `questions` of their
/// markets.
pub fn page(
    total: u64,
    rows: &[DecisionRow],
    q: &FeedQuery,
    labels: &[String],
    questions: &HashMap<String, String>,
    symbol: &str,
) -> Page {
    let total = usize::try_from(total).unwrap_or(usize::MAX);
    let decisions = rows
        .iter()
        .map(|d| {
            let question = questions.get(&d.market).map(String::as_str);
            DecisionView::new(d, labels, question, symbol)
        })
        .collect();
    Page { total, page: q.page, per_page: q.per_page, pages: total.div_ceil(q.per_page), decisions }
}

/// The head of the chain and what the floor holds of the record.
#[derive(Debug, Clone, Serialize)]
pub struct Status {
    pub chain_id: u64,
    pub head: u64,
    pub head_time: u64,
    /// The block the record is read to (head − confirmations).
    pub confirmed: u64,
    pub confirmations: u64,
    pub gate: String,
    /// "live" (following an RPC) or "saved state" (a reloaded anvil state).
    pub mode: String,
    pub decisions: usize,
    pub offchain: usize,
    pub open_positions: u8,
    /// Chain time of the newest decision.
    pub last_decision_time: Option<u64>,
}

/// The gate's fixed bounds, shown: prices as probabilities, amounts with the symbol.
#[derive(Debug, Clone, Serialize)]
pub struct Bounds {
    pub min_price: String,
    pub max_price: String,
    pub max_size: String,
    pub min_headroom_s: u32,
    pub max_concurrent: u8,
    pub max_notional: String,
    pub max_horizon_s: u32,
    pub max_drawdown: String,
    pub write_off_grace_s: u32,
    pub min_fill_bps: u16,
}

/// What the chain says of the gate now, read at the confirmed block.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Live {
    pub owner: Option<String>,
    pub paused: Option<bool>,
    /// The gate's collateral balance, base units.
    pub collateral_held: String,
    pub open_positions: u8,
    pub open_notional: String,
    /// H, base units.
    pub high_water_mark: String,
}

/// The gate card (`GET /api/gate`).
#[derive(Debug, Clone, Serialize)]
pub struct GateCard {
    pub gate: String,
    pub chain_id: u64,
    pub deploy_block: Option<u64>,
    pub owner: Option<String>,
    pub keeper: String,
    pub collateral: String,
    pub symbol: String,
    pub factory: String,
    pub params_hash: String,
    pub bounds: Bounds,
    /// The bounds in base units, as `bounds()` returns them.
    pub bounds_raw: BTreeMap<&'static str, String>,
    pub trusted_resolvers: Vec<String>,
    pub trusted_creators: Vec<String>,
    /// Who submits and what a reader must trust: relayed or attested (issue 35), in words.
    pub mode: String,
    /// An attested gate's attestors, ascending (empty on a relayed gate), and its threshold.
    pub attestors: Vec<String>,
    pub threshold: Option<u8>,
    /// Whether the runtime code on chain matches contracts/src compiled here, and how it was
    /// checked.
    pub code_matches: bool,
    pub code_check: String,
    pub paused: Option<bool>,
    pub collateral_held: String,
    pub collateral_held_shown: String,
    pub open_positions: u8,
    pub open_notional: String,
    pub open_notional_shown: String,
    pub high_water_mark: String,
    /// H − balance: how far the balance is below the high-water mark (base units).
    pub drawdown_used: String,
    pub drawdown_used_shown: String,
    pub max_drawdown: String,
    /// drawdown_used / maxDrawdown.
    pub drawdown_fraction: f64,
    /// The largest H − balance any decision read.
    pub peak_drawdown: String,
}

impl GateCard {
    pub fn new(
        facts: &GateFacts,
        live: &Live,
        symbol: &str,
        code: (bool, &str),
        summary: &Summary,
    ) -> Self {
        let b = &facts.bounds;
        let used = (int(&live.high_water_mark) - int(&live.collateral_held)).max(0);
        let max_dd = i128::try_from(b.maxDrawdown).unwrap_or(i128::MAX);
        let raw: BTreeMap<&'static str, String> = [
            ("minPrice", b.minPrice.to_string()),
            ("maxPrice", b.maxPrice.to_string()),
            ("maxSize", b.maxSize.to_string()),
            ("minHeadroom", b.minHeadroom.to_string()),
            ("maxConcurrent", b.maxConcurrent.to_string()),
            ("maxNotional", b.maxNotional.to_string()),
            ("maxHorizon", b.maxHorizon.to_string()),
            ("maxDrawdown", b.maxDrawdown.to_string()),
            ("writeOffGrace", b.writeOffGrace.to_string()),
            ("minFillBps", b.minFillBps.to_string()),
        ]
        .into_iter()
        .collect();
        let checksum = |a: &Address| a.to_checksum(None);
        Self {
            gate: checksum(&facts.gate),
            chain_id: facts.chain_id,
            deploy_block: facts.deploy_block,
            owner: live.owner.clone(),
            keeper: checksum(&facts.keeper),
            collateral: checksum(&facts.collateral),
            symbol: symbol.to_string(),
            factory: checksum(&facts.factory),
            params_hash: facts.params_hash.to_string(),
            bounds: Bounds {
                min_price: prob(&b.minPrice.to_string()),
                max_price: prob(&b.maxPrice.to_string()),
                max_size: format!("{} tokens", tokens(&b.maxSize.to_string())),
                min_headroom_s: b.minHeadroom,
                max_concurrent: b.maxConcurrent,
                max_notional: amount(&b.maxNotional.to_string(), symbol),
                max_horizon_s: b.maxHorizon,
                max_drawdown: amount(&b.maxDrawdown.to_string(), symbol),
                write_off_grace_s: b.writeOffGrace,
                min_fill_bps: b.minFillBps,
            },
            bounds_raw: raw,
            trusted_resolvers: facts.trusted_resolvers.iter().map(checksum).collect(),
            trusted_creators: facts.trusted_creators.iter().map(checksum).collect(),
            mode: facts.mode_line(),
            attestors: facts
                .attestors
                .as_ref()
                .map(|a| a.signers.iter().map(checksum).collect())
                .unwrap_or_default(),
            threshold: facts.attestors.as_ref().map(|a| a.threshold),
            code_matches: code.0,
            code_check: code.1.to_string(),
            paused: live.paused,
            collateral_held: live.collateral_held.clone(),
            collateral_held_shown: amount(&live.collateral_held, symbol),
            open_positions: live.open_positions,
            open_notional: live.open_notional.clone(),
            open_notional_shown: amount(&live.open_notional, symbol),
            high_water_mark: live.high_water_mark.clone(),
            drawdown_used: used.to_string(),
            drawdown_used_shown: amount(&used.to_string(), symbol),
            max_drawdown: b.maxDrawdown.to_string(),
            drawdown_fraction: if max_dd > 0 { used as f64 / max_dd as f64 } else { 0.0 },
            peak_drawdown: summary.peak_drawdown.to_string(),
        }
    }
}

/// An off-chain row as the floor lists it.
#[derive(Debug, Clone, Serialize)]
pub struct OffchainView {
    pub block: u64,
    pub time: u64,
    pub market: String,
    pub error: String,
    pub model: Option<String>,
    pub scenario: Option<String>,
}

impl From<&OffchainRow> for OffchainView {
    fn from(o: &OffchainRow) -> Self {
        Self {
            block: o.block,
            time: o.time,
            market: o.market.clone(),
            error: o.error.clone(),
            model: o.note.model.clone(),
            scenario: o.note.scenario.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pairs(q: &[(&str, &str)]) -> Vec<(String, String)> {
        q.iter().map(|(k, v)| (k.to_string(), v.to_string())).collect()
    }

    #[test]
    fn prices_show_as_probabilities() {
        // 450000 / 1e6 = 0.45; 125000 / 1e6 = 0.125; 1e6 / 1e6 = 1; 10000 / 1e6 = 0.01.
        assert_eq!(prob("450000"), "0.45");
        assert_eq!(prob("125000"), "0.125");
        assert_eq!(prob("1000000"), "1");
        assert_eq!(prob("10000"), "0.01");
        assert_eq!(prob("500000"), "0.50");
        assert_eq!(prob("0"), "0");
        assert_eq!(amount("4000000", "tUSD"), "4.000000 tUSD");
    }

    #[test]
    fn the_feed_query_is_bounded_and_refuses_what_it_does_not_know() {
        let q = FeedQuery::parse(&pairs(&[("reason", "14"), ("verdict", "BUY_UP")]), 21).unwrap();
        assert_eq!((q.reason, q.verdict, q.page, q.per_page), (Some(14), Some(1), 1, 50));
        // An empty value is "any", as an HTML form sends it.
        assert_eq!(FeedQuery::parse(&pairs(&[("reason", "")]), 21).unwrap(), FeedQuery::default());
        for bad in [
            vec![("reason", "21")],
            vec![("reason", "-1")],
            vec![("verdict", "SELL")],
            vec![("market", "0x12")],
            vec![("page", "0")],
            vec![("per_page", "201")],
            vec![("per_page", "x")],
            vec![("sort", "asc")],
            vec![("page", "1"), ("page", "2")],
        ] {
            assert!(FeedQuery::parse(&pairs(&bad), 21).is_err(), "{bad:?} accepted");
        }
        let long = "a".repeat(MAX_PARAM_BYTES + 1);
        let e = FeedQuery::parse(&pairs(&[("model", &long)]), 21).unwrap_err();
        assert!(e.0.contains("257 bytes"), "{e}");
    }

    #[test]
    fn links_round_trip_through_the_parser() {
        let q = FeedQuery {
            model: Some("a b&c=\"<x>".into()),
            reason: Some(3),
            per_page: 10,
            ..Default::default()
        };
        let link = q.link(4);
        let back: Vec<(String, String)> = link
            .trim_start_matches('?')
            .split('&')
            .map(|kv| {
                let (k, v) = kv.split_once('=').unwrap();
                (k.to_string(), String::from_utf8(percent_decode(v)).unwrap())
            })
            .collect();
        assert_eq!(FeedQuery::parse(&back, 21).unwrap(), FeedQuery { page: 4, ..q });
    }

    fn percent_decode(s: &str) -> Vec<u8> {
        let b = s.as_bytes();
        let mut out = Vec::new();
        let mut i = 0;
        while i < b.len() {
            if b[i] == b'%' {
                out.push(u8::from_str_radix(&s[i + 1..i + 3], 16).unwrap());
                i += 3;
            } else {
                out.push(b[i]);
                i += 1;
            }
        }
        out
    }
}
