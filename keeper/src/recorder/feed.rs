//! Feed rows and their decoding from chain logs.

use super::{RecordError, Result};
use crate::{
    bindings::{IRiskGate, REASON_COUNT},
    collectors::logs_in_ranges,
};
use alloy::{
    primitives::{Address, TxHash, B256, U256},
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
    /// The model's answer exactly as submitted (JSON-escaped by serialization).
    pub raw: String,
    /// 0 ABSTAIN, 1 BUY_UP, 2 BUY_DOWN, 255 unparseable.
    pub verdict: u8,
    pub reason: u8,
    pub reason_label: String,
    pub failed_mask: u16,
    pub failed_rules: Vec<u8>,
    /// What the gate read; None when it did not read the book (ABSTAIN, unparseable).
    pub book: Option<BookRead>,
    pub price_paid: String,
    pub quantity: String,
    pub cost: String,
    pub filled: String,
    pub spent: String,
    pub settlement: Option<Settlement>,
    #[serde(flatten)]
    pub note: Annotation,
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
    #[serde(flatten)]
    pub note: Annotation,
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
    pub settlements: Vec<(String, Settlement)>,
}

/// The gate's fixed facts, read from chain for RESULTS.md.
#[derive(Debug, Clone)]
pub struct GateFacts {
    pub gate: Address,
    pub chain_id: u64,
    pub deploy_block: Option<u64>,
    pub params_hash: B256,
    pub bounds: IRiskGate::Params,
    pub keeper: Address,
    pub collateral: Address,
    pub factory: Address,
    /// reasonLabel(0..=11), verbatim from the gate.
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
    .map_err(|x| RecordError::Chain(x.to_string()))?;
    Ok(GateFacts {
        gate,
        chain_id,
        deploy_block: deployed.first().and_then(|l| l.block_number),
        params_hash: g.paramsHash().call().await.map_err(e)?,
        bounds: g.bounds().call().await.map_err(e)?,
        keeper: g.keeper().call().await.map_err(e)?,
        collateral: g.collateral().call().await.map_err(e)?,
        factory: g.marketFactory().call().await.map_err(e)?,
        labels,
    })
}

/// Decodes the `abi.encode(Snapshot)` bytes of a `Decision`; empty means the book was not read.
pub fn decode_snapshot(bytes: &[u8]) -> Option<BookRead> {
    use alloy::sol_types::SolValue;
    if bytes.is_empty() {
        return None;
    }
    let sn = IRiskGate::Snapshot::abi_decode(bytes).ok()?;
    Some(BookRead {
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
    })
}

fn failed_rules(mask: u16) -> Vec<u8> {
    (0..16u8).filter(|b| mask & (1 << b) != 0).collect()
}

fn s(v: U256) -> String {
    v.to_string()
}

fn hex_tx(h: Option<TxHash>) -> String {
    h.map(|h| h.to_string()).unwrap_or_default()
}

/// The gate's `Decision` and `Settled` logs over `[from, to]`, in bounded block ranges.
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
        vec![IRiskGate::Decision::SIGNATURE_HASH, IRiskGate::Settled::SIGNATURE_HASH],
        from,
        to,
        range,
    )
    .await
    .map_err(|e| RecordError::Chain(e.to_string()))
}

/// Decodes the gate's `Decision` and `Settled` logs over `[from, to]` into rows. Block times are
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
            let book = decode_snapshot(&d.snapshot);
            let row = DecisionRow {
                chain_id,
                block,
                log_index: log.log_index.unwrap_or_default(),
                tx: hex_tx(log.transaction_hash),
                time,
                market: d.market.to_checksum(None),
                prompt_hash: d.promptHash.to_string(),
                raw: d.raw.clone(),
                verdict: d.verdict,
                reason: d.reason,
                reason_label: labels.get(d.reason as usize).cloned().unwrap_or_default(),
                failed_mask: d.failedMask,
                failed_rules: failed_rules(d.failedMask),
                book,
                price_paid: s(d.order.pricePaid),
                quantity: s(d.order.quantity),
                cost: s(d.order.cost),
                filled: s(d.order.filled),
                spent: s(d.order.spent),
                settlement: None,
                note: Annotation::default(),
            };
            if !d.order.filled.is_zero() {
                unsettled.entry(d.market).or_default().push(rec.decisions.len());
            }
            rec.decisions.push(row);
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
        }
    }
    Ok(rec)
}

/// Merges chain rows with the keeper's annotations (matched by tx hash and log index) and its
/// off-chain rows, in chain order.
pub fn merge(
    chain: &ChainRecord,
    notes: &BTreeMap<(String, u64), Annotation>,
    tx_notes: &BTreeMap<String, Annotation>,
    offchain: &[OffchainRow],
) -> Vec<FeedRow> {
    let mut rows: Vec<FeedRow> = chain
        .decisions
        .iter()
        .map(|d| {
            let mut d = d.clone();
            if let Some(n) = notes.get(&(d.tx.clone(), d.log_index)).or_else(|| tx_notes.get(&d.tx))
            {
                d.note = n.clone();
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

/// The annotations and off-chain rows of an existing feed.
pub fn split_feed(rows: &[FeedRow]) -> (BTreeMap<(String, u64), Annotation>, Vec<OffchainRow>) {
    let mut notes = BTreeMap::new();
    let mut off = Vec::new();
    for r in rows {
        match r {
            FeedRow::Decision(d) => {
                notes.insert((d.tx.clone(), d.log_index), d.note.clone());
            }
            FeedRow::Offchain(o) => off.push(o.clone()),
        }
    }
    (notes, off)
}
