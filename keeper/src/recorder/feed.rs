//! Feed rows and their decoding from chain logs.

use super::{RecordError, Result};
use crate::{
    bindings::{reason, IRiskGate, REASON_COUNT},
    collectors::logs_in_ranges,
};
use alloy::{
    primitives::{Address, Bytes, TxHash, B256, U256},
    providers::{DynProvider, Provider},
    rpc::types::Log,
    sol_types::SolEvent,
};
use futures::{stream, StreamExt};
use serde::{Deserialize, Serialize};
use std::{
    collections::{BTreeMap, HashMap},
    path::Path,
};

/// What the keeper itself says about a row (not on chain): who answered, under which strategy,
/// in which labelled scenario.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Annotation {
    pub provider: Option<String>,
    pub model: Option<String>,
    pub strategy_hash: Option<String>,
    pub scenario: Option<String>,
}

/// What the gate read, as published in the `Decision` event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BookRead {
    pub best_bid: String,
    pub best_ask: String,
    pub tick_size: String,
    pub lot_size: String,
    pub min_quantity: String,
    pub expiry: u64,
    pub now: u64,
    pub finalized: bool,
    pub open_positions: u8,
    pub open_notional: String,
    pub collateral_available: String,
    /// The market's `resolver()` is one of the gate's trusted resolvers.
    pub resolver_trusted: bool,
    /// The gate's position in this market before the decision: 0 none, 1 UP, 2 DOWN.
    pub held_side: u8,
    /// The high-water mark H the rules read (already raised to the equity seen).
    pub high_water_mark: String,
}

/// The keeper's quote as the gate evaluated it (BUY_UP and BUY_DOWN only).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct QuoteRead {
    /// Worst price accepted for the token bought, 1e6 units.
    pub max_price_paid: String,
    /// Chain time after which the answer is stale.
    pub deadline: u64,
}

/// Reason 18: what the market offered and the gate undid; nothing moved.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AttemptedFill {
    pub filled: String,
    pub spent: String,
}

/// A position's settlement, attached to the rows that built it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Settlement {
    pub block: u64,
    pub tx: String,
    pub up_won: bool,
    pub up_units: String,
    pub down_units: String,
    pub notional: String,
    pub payout: String,
    /// payout - notional, in collateral base units (signed).
    pub pnl: String,
}

/// A position counted as lost because its market did not finalize by `expiry + writeOffGrace`;
/// its slot and notional were released. A later settlement still collects.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WriteOff {
    pub block: u64,
    pub time: u64,
    pub tx: String,
    pub up_units: String,
    pub down_units: String,
    pub notional: String,
    pub expiry: u64,
}

/// One published decision, rebuilt from its `Decision` event.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DecisionRow {
    pub chain_id: u64,
    pub block: u64,
    pub log_index: u64,
    pub tx: String,
    pub time: u64,
    pub market: String,
    pub prompt_hash: String,
    /// The model's whole answer exactly as submitted (JSON-escaped by serialization). The chain
    /// logs only its first 64 bytes, its length and its keccak256, so this comes from the
    /// keeper's record and is checked against them; `None` when rebuilt from chain alone and the
    /// logged head is not the whole answer.
    pub raw: Option<String>,
    /// Length of the answer in bytes, from the chain.
    pub raw_length: u64,
    /// keccak256 of the answer, from the chain.
    pub raw_hash: String,
    /// 0 ABSTAIN, 1 BUY_UP, 2 BUY_DOWN, 255 unparseable.
    pub verdict: u8,
    pub reason: u8,
    pub reason_label: String,
    pub failed_mask: u32,
    pub failed_rules: Vec<u8>,
    /// What the gate read; None when it evaluated nothing (ABSTAIN, unparseable).
    pub book: Option<BookRead>,
    /// The keeper's quote as the gate evaluated it; None when it evaluated nothing.
    pub quote: Option<QuoteRead>,
    pub price_paid: String,
    /// The order's limit for the token bought: min(maxPrice, maxPricePaid) on the tick grid.
    pub limit: String,
    pub quantity: String,
    pub cost: String,
    /// Units bought and collateral spent (0 on reason 18, where the fill was undone).
    pub filled: String,
    pub spent: String,
    /// Reason 18 only: the fill the market offered, undone by the gate.
    pub attempted_fill: Option<AttemptedFill>,
    pub settlement: Option<Settlement>,
    pub write_off: Option<WriteOff>,
    #[serde(flatten)]
    pub note: Annotation,
}

/// What the keeper knows about one of its decisions that the chain does not: who answered and
/// in which scenario, and the whole answer (the chain has its head, length and hash).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RowNote {
    pub note: Annotation,
    pub raw: Option<String>,
}

/// A failure that never reached the chain (inference error, send error, revert).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct OffchainRow {
    pub chain_id: u64,
    /// Head block when the failure was observed.
    pub block: u64,
    pub time: u64,
    pub market: String,
    pub prompt_hash: Option<String>,
    pub error: String,
    /// What the failed inference exchange returned, when it was one.
    #[serde(flatten)]
    pub transport: TransportDetail,
    #[serde(flatten)]
    pub note: Annotation,
}

/// The facts of a failed inference exchange an off-chain row keeps: the HTTP status and body
/// (truncated) when a response came back, its `finish_reason`, and which attempt failed. Rows
/// written before these fields existed read back with them absent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TransportDetail {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub http_status: Option<u16>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub finish_reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub attempt: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
// Rows are few and short-lived; boxing the big variant would only add noise to every match.
#[allow(clippy::large_enum_variant)]
pub enum FeedRow {
    Decision(DecisionRow),
    Offchain(OffchainRow),
}

impl FeedRow {
    fn sort_key(&self) -> (u64, u8, u64) {
        match self {
            Self::Decision(d) => (d.block, 0, d.log_index),
            Self::Offchain(o) => (o.block, 1, 0),
        }
    }
}

/// The gate's record as the chain holds it.
#[derive(Debug, Clone, Default)]
pub struct ChainRecord {
    pub decisions: Vec<DecisionRow>,
    /// `raw_heads[i]` is the head of the answer as logged by `decisions[i]`'s event: what a full
    /// answer from the keeper's record must start with.
    pub raw_heads: Vec<Bytes>,
    pub settlements: Vec<(String, Settlement)>,
    pub write_offs: Vec<(String, WriteOff)>,
}

/// The gate's fixed facts, read from chain for RESULTS.md.
#[derive(Debug, Clone)]
pub struct GateFacts {
    pub gate: Address,
    pub chain_id: u64,
    pub deploy_block: Option<u64>,
    pub params_hash: B256,
    pub bounds: IRiskGate::Params,
    pub trusted_resolvers: Vec<Address>,
    pub keeper: Address,
    pub collateral: Address,
    pub factory: Address,
    /// reasonLabel(0..=18), verbatim from the gate.
    pub labels: Vec<String>,
}

pub async fn gate_facts(
    provider: &DynProvider,
    gate: Address,
    chain_id: u64,
    from: u64,
    to: u64,
    range: u64,
) -> Result<GateFacts> {
    let g = IRiskGate::new(gate, provider);
    let e = |e: alloy::contract::Error| RecordError::Chain(crate::chain::short(&e.to_string()));
    let mut labels = Vec::with_capacity(REASON_COUNT as usize);
    for code in 0..REASON_COUNT {
        labels.push(g.reasonLabel(code).call().await.map_err(e)?);
    }
    let deployed = logs_in_ranges(
        provider,
        gate,
        vec![IRiskGate::GateDeployed::SIGNATURE_HASH],
        from,
        to,
        range,
    )
    .await
    .map_err(|x| RecordError::Chain(crate::error_chain(&x)))?;
    Ok(GateFacts {
        gate,
        chain_id,
        deploy_block: deployed.first().and_then(|l| l.block_number),
        params_hash: g.paramsHash().call().await.map_err(e)?,
        bounds: g.bounds().call().await.map_err(e)?,
        trusted_resolvers: g.trustedResolvers().call().await.map_err(e)?,
        keeper: g.keeper().call().await.map_err(e)?,
        collateral: g.collateral().call().await.map_err(e)?,
        factory: g.marketFactory().call().await.map_err(e)?,
        labels,
    })
}

/// Decodes the `abi.encode(Snapshot, Quote)` bytes of a `Decision`: what the gate read and the
/// keeper's quote it evaluated. Empty means nothing was evaluated (ABSTAIN, unparseable).
pub fn decode_snapshot(bytes: &[u8]) -> Option<(BookRead, QuoteRead)> {
    use alloy::sol_types::SolValue;
    if bytes.is_empty() {
        return None;
    }
    let (sn, q) = <(IRiskGate::Snapshot, IRiskGate::Quote)>::abi_decode_params(bytes).ok()?;
    let book = BookRead {
        best_bid: s(sn.bestBid),
        best_ask: s(sn.bestAsk),
        tick_size: s(sn.tickSize),
        lot_size: s(sn.lotSize),
        min_quantity: s(sn.minQuantity),
        expiry: sn.expirySec,
        now: sn.nowSec,
        finalized: sn.finalized,
        open_positions: sn.openPositions,
        open_notional: s(sn.openNotional),
        collateral_available: s(sn.collateralAvailable),
        resolver_trusted: sn.resolverTrusted,
        held_side: sn.heldSide,
        high_water_mark: s(sn.highWaterMark),
    };
    Some((book, QuoteRead { max_price_paid: s(q.maxPricePaid), deadline: q.deadline }))
}

fn failed_rules(mask: u32) -> Vec<u8> {
    (0..32u8).filter(|b| mask & (1 << b) != 0).collect()
}

/// The answer as far as the chain alone knows it: the logged head, when it is the whole answer
/// and valid UTF-8 (every parseable answer is).
pub fn raw_from_head(head: &[u8], length: u64) -> Option<String> {
    (head.len() as u64 == length).then(|| std::str::from_utf8(head).ok().map(str::to_string))?
}

/// Whether `raw` is the answer a `Decision` logged as (`head`, `length`, `hash`).
pub fn raw_matches(raw: &str, head: &[u8], length: u64, hash: &str) -> bool {
    raw.len() as u64 == length
        && raw.as_bytes().starts_with(head)
        && alloy::primitives::keccak256(raw.as_bytes()).to_string() == hash
}

fn s(v: U256) -> String {
    v.to_string()
}

fn hex_tx(h: Option<TxHash>) -> String {
    h.map(|h| h.to_string()).unwrap_or_default()
}

/// The gate's `Decision`, `Settled` and `WrittenOff` logs over `[from, to]`, in bounded block ranges.
pub async fn gate_logs(
    provider: &DynProvider,
    gate: Address,
    from: u64,
    to: u64,
    range: u64,
) -> Result<Vec<Log>> {
    logs_in_ranges(
        provider,
        gate,
        vec![
            IRiskGate::Decision::SIGNATURE_HASH,
            IRiskGate::Settled::SIGNATURE_HASH,
            IRiskGate::WrittenOff::SIGNATURE_HASH,
        ],
        from,
        to,
        range,
    )
    .await
    .map_err(|e| RecordError::Chain(crate::error_chain(&e)))
}

/// Decodes the gate's `Decision`, `Settled` and `WrittenOff` logs over `[from, to]` into rows. Block times are
/// read from the blocks themselves.
pub async fn read_chain_record(
    provider: &DynProvider,
    gate: Address,
    chain_id: u64,
    labels: &[String],
    from: u64,
    to: u64,
    range: u64,
) -> Result<ChainRecord> {
    let logs = gate_logs(provider, gate, from, to, range).await?;
    let times = block_times(provider, &logs, HashMap::new()).await?;
    decode_logs(&logs, chain_id, labels, &times)
}

/// Timestamps of the blocks `logs` come from: from the logs themselves when the node includes
/// them, else from `known`, else fetched (at most 16 blocks in flight).
pub async fn block_times(
    provider: &DynProvider,
    logs: &[Log],
    known: HashMap<u64, u64>,
) -> Result<HashMap<u64, u64>> {
    let mut times = known;
    let mut missing = Vec::new();
    for l in logs {
        if let Some(n) = l.block_number {
            match l.block_timestamp {
                Some(t) => {
                    times.insert(n, t);
                }
                None => missing.push(n),
            }
        }
    }
    missing.sort_unstable();
    missing.dedup();
    missing.retain(|n| !times.contains_key(n));
    let fetched: Vec<Result<(u64, u64)>> = stream::iter(missing)
        .map(|n| async move {
            let b = provider
                .get_block_by_number(n.into())
                .await
                .map_err(|e| RecordError::Chain(crate::chain::short(&e.to_string())))?
                .ok_or_else(|| RecordError::Chain(format!("block {n} missing")))?;
            Ok((n, b.header.timestamp))
        })
        .buffer_unordered(16)
        .collect()
        .await;
    for r in fetched {
        let (n, t) = r?;
        times.insert(n, t);
    }
    Ok(times)
}

/// Pure decoding, so it can be tested without a node.
pub fn decode_logs(
    logs: &[Log],
    chain_id: u64,
    labels: &[String],
    times: &HashMap<u64, u64>,
) -> Result<ChainRecord> {
    let mut rec = ChainRecord::default();
    // Rows of a market not yet settled, by index into rec.decisions.
    let mut unsettled: HashMap<Address, Vec<usize>> = HashMap::new();
    let mut sorted: Vec<&Log> = logs.iter().collect();
    sorted.sort_by_key(|l| (l.block_number, l.log_index));
    for log in sorted {
        let block = log.block_number.unwrap_or_default();
        let time = times.get(&block).copied().unwrap_or_default();
        if let Ok(ev) = IRiskGate::Decision::decode_log(&log.inner) {
            let d = &ev.data;
            let (book, quote) = decode_snapshot(&d.snapshot).unzip();
            let raw_length = u64::try_from(d.rawLength).unwrap_or(u64::MAX);
            let undone = d.reason == reason::FILL_BELOW_MIN;
            let (filled, spent) =
                if undone { (U256::ZERO, U256::ZERO) } else { (d.order.filled, d.order.spent) };
            let row = DecisionRow {
                chain_id,
                block,
                log_index: log.log_index.unwrap_or_default(),
                tx: hex_tx(log.transaction_hash),
                time,
                market: d.market.to_checksum(None),
                prompt_hash: d.promptHash.to_string(),
                raw: raw_from_head(&d.rawHead, raw_length),
                raw_length,
                raw_hash: d.rawHash.to_string(),
                verdict: d.verdict,
                reason: d.reason,
                reason_label: labels.get(d.reason as usize).cloned().unwrap_or_default(),
                failed_mask: d.failedMask,
                failed_rules: failed_rules(d.failedMask),
                quote,
                book,
                price_paid: s(d.order.pricePaid),
                limit: s(d.order.limit),
                quantity: s(d.order.quantity),
                cost: s(d.order.cost),
                filled: s(filled),
                spent: s(spent),
                attempted_fill: undone
                    .then(|| AttemptedFill { filled: s(d.order.filled), spent: s(d.order.spent) }),
                settlement: None,
                write_off: None,
                note: Annotation::default(),
            };
            if !filled.is_zero() {
                unsettled.entry(d.market).or_default().push(rec.decisions.len());
            }
            rec.decisions.push(row);
            rec.raw_heads.push(d.rawHead.clone());
        } else if let Ok(ev) = IRiskGate::Settled::decode_log(&log.inner) {
            let d = &ev.data;
            let pnl = if d.payout >= d.notional {
                (d.payout - d.notional).to_string()
            } else {
                format!("-{}", d.notional - d.payout)
            };
            let st = Settlement {
                block,
                tx: hex_tx(log.transaction_hash),
                up_won: d.upWon,
                up_units: s(d.upUnits),
                down_units: s(d.downUnits),
                notional: s(d.notional),
                payout: s(d.payout),
                pnl,
            };
            for i in unsettled.remove(&d.market).unwrap_or_default() {
                rec.decisions[i].settlement = Some(st.clone());
            }
            rec.settlements.push((d.market.to_checksum(None), st));
        } else if let Ok(ev) = IRiskGate::WrittenOff::decode_log(&log.inner) {
            let d = &ev.data;
            let wo = WriteOff {
                block,
                time,
                tx: hex_tx(log.transaction_hash),
                up_units: s(d.upUnits),
                down_units: s(d.downUnits),
                notional: s(d.notional),
                expiry: d.expiry,
            };
            // The rows stay unsettled: a later `Settled` still closes the same position.
            for i in unsettled.get(&d.market).into_iter().flatten() {
                rec.decisions[*i].write_off = Some(wo.clone());
            }
            rec.write_offs.push((d.market.to_checksum(None), wo));
        }
    }
    Ok(rec)
}

/// Merges chain rows with the keeper's notes (matched by tx hash and log index: annotations and
/// the whole answer, kept only when it is the one the chain logged) and its off-chain rows, in
/// chain order.
pub fn merge(
    chain: &ChainRecord,
    notes: &BTreeMap<(String, u64), RowNote>,
    offchain: &[OffchainRow],
) -> Vec<FeedRow> {
    let mut rows: Vec<FeedRow> = chain
        .decisions
        .iter()
        .enumerate()
        .map(|(i, d)| {
            let mut d = d.clone();
            if let Some(n) = notes.get(&(d.tx.clone(), d.log_index)) {
                d.note = n.note.clone();
                let head = chain.raw_heads.get(i).map_or(&[][..], |h| &h[..]);
                if let Some(raw) = &n.raw {
                    if raw_matches(raw, head, d.raw_length, &d.raw_hash) {
                        d.raw = Some(raw.clone());
                    }
                }
            }
            FeedRow::Decision(d)
        })
        .collect();
    rows.extend(offchain.iter().cloned().map(FeedRow::Offchain));
    rows.sort_by_key(FeedRow::sort_key);
    rows
}

/// Serialized feed: one JSON object per line.
pub fn to_jsonl(rows: &[FeedRow]) -> String {
    let mut out = String::new();
    for r in rows {
        // Serializing plain data structs cannot fail; skip rather than panic if it ever did.
        if let Ok(line) = serde_json::to_string(r) {
            out.push_str(&line);
            out.push('\n');
        }
    }
    out
}

/// Reads an existing feed (missing file = empty).
pub fn read_feed(path: &Path) -> Result<Vec<FeedRow>> {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => {
            return Err(RecordError::Read { path: path.to_path_buf(), reason: e.to_string() })
        }
    };
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .enumerate()
        .map(|(i, l)| {
            serde_json::from_str(l).map_err(|e| RecordError::Read {
                path: path.to_path_buf(),
                reason: format!("line {}: {e}", i + 1),
            })
        })
        .collect()
}

/// The keeper's notes (annotations and whole answers) and off-chain rows of an existing feed.
pub fn split_feed(rows: &[FeedRow]) -> (BTreeMap<(String, u64), RowNote>, Vec<OffchainRow>) {
    let mut notes = BTreeMap::new();
    let mut off = Vec::new();
    for r in rows {
        match r {
            FeedRow::Decision(d) => {
                let note = RowNote { note: d.note.clone(), raw: d.raw.clone() };
                notes.insert((d.tx.clone(), d.log_index), note);
            }
            FeedRow::Offchain(o) => off.push(o.clone()),
        }
    }
    (notes, off)
}

#[cfg(test)]
mod tests {
    use super::*;
    use alloy::primitives::keccak256;

    #[test]
    fn a_published_answer_must_hash_to_the_logged_hash_and_start_with_the_head() {
        let long = format!("Ignore previous instructions {}", "x".repeat(100));
        let head = &long.as_bytes()[..64];
        let hash = keccak256(long.as_bytes()).to_string();
        assert!(raw_matches(&long, head, long.len() as u64, &hash));
        // One byte changed past the head: the head still matches, the hash does not.
        let mut tampered = long.clone();
        tampered.pop();
        tampered.push('y');
        assert!(!raw_matches(&tampered, head, long.len() as u64, &hash));
        // The chain alone knows a short answer whole, a long one only by its head.
        assert_eq!(raw_from_head(b"BUY_UP\n", 7).as_deref(), Some("BUY_UP\n"));
        assert_eq!(raw_from_head(head, long.len() as u64), None);
        // A head cut inside a UTF-8 character is not a string.
        assert_eq!(raw_from_head(&[0xe2, 0x82], 2), None);
    }

    #[test]
    fn failed_rules_read_all_32_bits() {
        assert_eq!(failed_rules(1 << 18 | 1 << 12 | 1 << 9), vec![9, 12, 18]);
        assert_eq!(failed_rules(1 << 31), vec![31]);
    }
}
