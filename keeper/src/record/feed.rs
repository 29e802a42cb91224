//! Feed rows and their decoding from chain logs.

use super::{RecordError, Result, FEED_FILE, HEAD_FILE};
pub use crate::domain::decision::{
    average_price_paid, Annotation, AttemptedFill, BookRead, ChainRecord, Closing, Decided,
    DecisionId, DecisionRef, DecisionRow, FeedRow, OffchainRow, QuoteRead, Realised, RealisedKind,
    RowNote, Settlement, TransportDetail, TxGas, VoteAnswer, VoteCounts, VoteRow, WriteOff,
};
use crate::kit::bindings::{reason, IRiskGate};
use alloy::{
    primitives::{keccak256, Address, TxHash, B256, U256},
    rpc::types::Log,
    sol_types::SolEvent,
};
use serde::{Deserialize, Serialize};
use std::{
    collections::{BTreeMap, HashMap},
    path::Path,
};

use crate::domain::format::int;

impl ChainRecord {
    /// Realised P&L as it happened: a written-off position counts as a loss of its notional at
    /// the write-off, and a payout that comes later as a gain when it comes; a position settled
    /// without a write-off counts `payout - notional` at its settlement. Ordered by block, a
    /// write-off before a settlement in the same block (a settled position cannot be written
    /// off).
    pub fn realised(&self) -> Vec<Realised> {
        let mut events: Vec<(u64, u8, Realised)> = Vec::new();
        for (m, w) in &self.write_offs {
            let r = Realised {
                block: w.block,
                market: m.clone(),
                delta: -int(&w.notional),
                what: RealisedKind::WrittenOff,
            };
            events.push((w.block, 0, r));
        }
        for (m, st) in &self.settlements {
            let written_off = self.write_offs.iter().any(|(wm, w)| wm == m && w.block <= st.block);
            let (delta, what) = if written_off {
                (int(&st.payout), RealisedKind::LatePayout)
            } else {
                (int(&st.pnl), RealisedKind::Settled)
            };
            events.push((
                st.block,
                1,
                Realised { block: st.block, market: m.clone(), delta, what },
            ));
        }
        events.sort_by_key(|(b, k, _)| (*b, *k));
        events.into_iter().map(|(_, _, r)| r).collect()
    }
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
        creator_trusted: sn.creatorTrusted,
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

/// A `Decision`'s packed vote as a row shows it; None for a relayed gate's (empty) vote.
pub fn vote_row(bytes: &[u8]) -> std::result::Result<Option<VoteRow>, String> {
    let Some(v) = crate::chain::attestation::Vote::decode(bytes)? else { return Ok(None) };
    let [abstain, buy_up, buy_down, unparseable] = v.counts;
    Ok(Some(VoteRow {
        counts: VoteCounts { abstain, buy_up, buy_down, unparseable },
        answers: v
            .entries
            .iter()
            .map(|e| VoteAnswer {
                signer: e.signer.to_checksum(None),
                length: e.length,
                hash: e.hash.to_string(),
                head: String::from_utf8_lossy(&e.head).into_owned(),
            })
            .collect(),
    }))
}

fn s(v: U256) -> String {
    v.to_string()
}

fn hex_tx(h: Option<TxHash>) -> String {
    h.map(|h| h.to_string()).unwrap_or_default()
}

/// Pure decoding, so it can be tested without a node. Every row names `chain_id` and `gate`
/// (the address whose logs these are); `times` holds the chain time of each block and `gas`
/// the gas of each publishing transaction ([`crate::chain::reads::tx_gas`]): a row whose
/// transaction it lacks carries none.
pub fn decode_logs(
    logs: &[Log],
    chain_id: u64,
    gate: Address,
    labels: &[String],
    times: &HashMap<u64, u64>,
    gas: &HashMap<B256, TxGas>,
) -> Result<ChainRecord> {
    let gate_name = gate.to_checksum(None);
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
                gate: gate_name.clone(),
                block,
                log_index: log.log_index.unwrap_or_default(),
                tx: hex_tx(log.transaction_hash),
                time,
                market: d.market.to_checksum(None),
                prompt_hash: d.promptHash.to_string(),
                read_block: d.readBlock,
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
                average_price_paid: average_price_paid(filled, spent).map(s),
                limit: s(d.order.limit),
                quantity: s(d.order.quantity),
                cost: s(d.order.cost),
                filled: s(filled),
                spent: s(spent),
                attempted_fill: undone.then(|| AttemptedFill {
                    filled: s(d.order.filled),
                    spent: s(d.order.spent),
                    average_price_paid: average_price_paid(d.order.filled, d.order.spent).map(s),
                }),
                settlement: None,
                write_off: None,
                gas: log.transaction_hash.and_then(|t| gas.get(&t).cloned()),
                vote: vote_row(&d.vote).map_err(|why| RecordError::Vote {
                    tx: hex_tx(log.transaction_hash),
                    log_index: log.log_index.unwrap_or_default(),
                    why,
                })?,
                note: Annotation::default(),
            };
            if !filled.is_zero() {
                unsettled.entry(d.market).or_default().push(rec.decisions.len());
            }
            rec.decided.push(Decided {
                id: DecisionId {
                    tx: log.transaction_hash.unwrap_or_default(),
                    log_index: row.log_index,
                },
                market: d.market,
                block,
                time,
                reason: d.reason,
                bought: !filled.is_zero(),
                settled: false,
                written_off: false,
            });
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
                time,
            };
            let closed = unsettled.remove(&d.market).unwrap_or_default();
            // A payout after a write-off: the position's loss was counted at the write-off.
            let late = closed.iter().any(|&i| rec.decided[i].written_off);
            for &i in &closed {
                rec.decided[i].settled = true;
            }
            let row = closing(&rec, &closed, chain_id, &gate_name, log, d.market, st.clone());
            rec.closings.push(if late {
                FeedRow::LatePayout(row)
            } else {
                FeedRow::Settlement(row)
            });
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
            let closed = unsettled.get(&d.market).cloned().unwrap_or_default();
            for &i in &closed {
                rec.decided[i].written_off = true;
            }
            let row = closing(&rec, &closed, chain_id, &gate_name, log, d.market, wo.clone());
            rec.closings.push(FeedRow::WriteOff(row));
            rec.write_offs.push((d.market.to_checksum(None), wo));
        }
    }
    Ok(rec)
}

/// A closing row for the event `log` of `market`, naming the decisions `closed` (indexes into
/// `rec.decisions`).
fn closing<E>(
    rec: &ChainRecord,
    closed: &[usize],
    chain_id: u64,
    gate: &str,
    log: &Log,
    market: Address,
    event: E,
) -> Closing<E> {
    Closing {
        chain_id,
        gate: gate.to_string(),
        log_index: log.log_index.unwrap_or_default(),
        market: market.to_checksum(None),
        closes: closed.iter().map(|&i| rec.decisions[i].reference()).collect(),
        event,
    }
}

/// Where a row sits in the feed: (block, 0 for a decision or 1 for an off-chain row, log
/// index). The feed is in this order, and only ever grows past its last row's key.
pub type FeedKey = (u64, u8, u64);

/// The market of a `Decision` log (None for any other log).
pub fn decision_market(log: &Log) -> Option<Address> {
    IRiskGate::Decision::decode_log(&log.inner).ok().map(|ev| ev.data.market)
}

/// Splits the gate's logs (in chain order) into the hot ones and the keys of the cold ones. A
/// log stays hot while its row is not in the feed (its key is after `in_feed`). A `Decision`
/// that bought also stays hot while its position is open (no `Settled` of its market after it
/// is in the feed), so the rows closing it can name it; and a `Settled` or `WrittenOff` while a
/// hot decision it closes does (a late payout is told by the write-off before it). Decoding
/// only the hot logs gives the same rows, for them, as decoding every log.
pub fn split_hot(logs: Vec<Log>, in_feed: FeedKey) -> (Vec<Log>, Vec<(u64, u64)>) {
    enum Kind {
        Decision { market: Address, bought: bool },
        Event { market: Address, settles: bool },
        Other,
    }
    let key = |l: &Log| (l.block_number.unwrap_or_default(), l.log_index.unwrap_or_default());
    let kinds: Vec<Kind> = logs
        .iter()
        .map(|l| {
            if let Ok(ev) = IRiskGate::Decision::decode_log(&l.inner) {
                let d = &ev.data;
                let bought = d.reason != reason::FILL_BELOW_MIN && !d.order.filled.is_zero();
                Kind::Decision { market: d.market, bought }
            } else if let Ok(ev) = IRiskGate::Settled::decode_log(&l.inner) {
                Kind::Event { market: ev.data.market, settles: true }
            } else if let Ok(ev) = IRiskGate::WrittenOff::decode_log(&l.inner) {
                Kind::Event { market: ev.data.market, settles: false }
            } else {
                Kind::Other
            }
        })
        .collect();
    // Which decisions are hot: not in the feed, or bought and never settled.
    let mut hot = vec![false; logs.len()];
    let mut open: HashMap<Address, Vec<usize>> = HashMap::new();
    for (i, (l, k)) in logs.iter().zip(&kinds).enumerate() {
        match k {
            Kind::Decision { market, bought } => {
                let (b, li) = key(l);
                hot[i] = (b, 0, li) > in_feed;
                if *bought {
                    open.entry(*market).or_default().push(i);
                }
            }
            Kind::Event { market, settles: true } => {
                let (b, li) = key(l);
                if (b, 0, li) <= in_feed {
                    open.remove(market);
                }
            }
            _ => {}
        }
    }
    for rows in open.values() {
        for &i in rows {
            hot[i] = true;
        }
    }
    // Events stay hot while a hot decision they attach to (an open one of their market, before
    // them) does.
    let mut attached: HashMap<Address, bool> = HashMap::new();
    for (i, (l, k)) in logs.iter().zip(&kinds).enumerate() {
        match k {
            Kind::Decision { market, bought: true } => {
                let a = attached.entry(*market).or_insert(false);
                *a |= hot[i];
            }
            Kind::Event { market, settles } => {
                let (b, li) = key(l);
                hot[i] = (b, 0, li) > in_feed || attached.get(market).copied().unwrap_or(false);
                if *settles {
                    attached.remove(market);
                }
            }
            _ => {}
        }
    }
    let mut kept = Vec::new();
    let mut cold = Vec::new();
    for (l, h) in logs.into_iter().zip(hot) {
        if h {
            kept.push(l);
        } else {
            cold.push(key(&l));
        }
    }
    (kept, cold)
}

/// Merges chain rows (decisions and the rows closing their positions) with the keeper's notes
/// (matched by tx hash and log index: annotations and the whole answer, kept only when it is
/// the one the chain logged) and its off-chain rows, in chain order.
pub fn merge(
    chain: &ChainRecord,
    notes: &BTreeMap<DecisionId, RowNote>,
    offchain: &[OffchainRow],
) -> Vec<FeedRow> {
    let mut rows: Vec<FeedRow> = chain
        .decisions
        .iter()
        .zip(&chain.decided)
        .enumerate()
        .map(|(i, (d, id))| {
            let mut d = d.clone();
            if let Some(n) = notes.get(&id.id) {
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
    rows.extend(chain.closings.iter().cloned());
    rows.extend(offchain.iter().cloned().map(FeedRow::Offchain));
    rows.sort_by_key(FeedRow::sort_key);
    rows
}

/// The string whose keccak256 is the first row's `prev`: it names the feed's format, chain and
/// gate, so a feed (or its first row) cannot pass as another gate's.
pub fn genesis(chain_id: u64, gate: Address) -> String {
    genesis_of(FEED_VERSION, chain_id, gate)
}

/// The feed's format. v2 is an event log: a decision enters when it is confirmed, and the
/// settlement, write-off or late payout of its position later, as a row of its own naming it.
/// v1 held a bought decision back until its position settled, with the settlement inside the
/// row (and every row after it waited too).
pub const FEED_VERSION: u32 = 2;

fn genesis_of(version: u32, chain_id: u64, gate: Address) -> String {
    format!("riskgate feed v{version} {chain_id} {}", gate.to_checksum(None))
}

/// Whether row 1 of a feed links to the genesis of a v1 feed of (`chain_id`, `gate`): a feed
/// the keeper wrote before it was an event log, which it rewrites once ([`FEED_VERSION`]).
pub fn is_v1(text: &str, chain_id: u64, gate: Address) -> bool {
    let v1 = keccak256(genesis_of(1, chain_id, gate).as_bytes()).to_string();
    feed_lines(text)
        .first()
        .and_then(|l| serde_json::from_str::<LineLink>(l).ok())
        .and_then(|l| l.prev)
        .is_some_and(|p| p == v1)
}

/// What a reader of a v1 feed is told.
pub const V1_NOTE: &str = "the feed is in the v1 shape (a bought decision waited for its     position to settle and carried the settlement inside its row): `keeper run` on this folder     rewrites it once as a v2 event log, from the chain and the labels the feed holds";

/// keccak256 of [`genesis`]: the `prev` of the first row, and the head of an empty feed.
pub fn genesis_hash(chain_id: u64, gate: Address) -> B256 {
    keccak256(genesis(chain_id, gate).as_bytes())
}

/// One line of feed.jsonl: the row with `prev`, the keccak256 of the previous line exactly as
/// written (of the genesis string for the first line), in front.
#[derive(Serialize)]
struct LinkedLine<'a> {
    prev: String,
    #[serde(flatten)]
    row: &'a FeedRow,
}

/// Only the link of a line, whatever else it holds.
#[derive(Deserialize)]
struct LineLink {
    #[serde(default)]
    prev: Option<String>,
}

/// The serialized feed, one JSON object per line, each carrying `prev`, the keccak256 of the
/// line before it as written (its bytes without the newline); and the head, the keccak256 of
/// the last line (the genesis hash when there are no rows).
pub fn to_linked_jsonl(rows: &[FeedRow], chain_id: u64, gate: Address) -> (String, B256) {
    let mut out = String::new();
    let mut prev = genesis_hash(chain_id, gate);
    for row in rows {
        let line = linked_line(row, prev);
        prev = keccak256(line.as_bytes());
        out.push_str(&line);
        out.push('\n');
    }
    (out, prev)
}

/// One line of the feed (without its newline): `row` with `prev` in front.
pub fn linked_line(row: &FeedRow, prev: B256) -> String {
    serde_json::to_string(&LinkedLine { prev: prev.to_string(), row })
        .expect("feed rows are plain data and always serialize")
}

/// The non-empty lines of a feed's text: row `n` of the feed is `lines[n - 1]`.
pub fn feed_lines(text: &str) -> Vec<&str> {
    text.lines().filter(|l| !l.trim().is_empty()).collect()
}

fn read_text(path: &Path) -> Result<Option<String>> {
    match std::fs::read_to_string(path) {
        Ok(t) => Ok(Some(t)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(source) => Err(RecordError::Read { path: path.to_path_buf(), source }),
    }
}

/// Reads a feed whatever gate it belongs to (missing file = empty). The keeper and the report
/// use [`read_feed_for`], which refuses another gate's rows.
pub fn read_feed(path: &Path) -> Result<Vec<FeedRow>> {
    let Some(text) = read_text(path)? else { return Ok(Vec::new()) };
    feed_lines(&text)
        .into_iter()
        .enumerate()
        .map(|(i, l)| {
            serde_json::from_str(l).map_err(|source| RecordError::Row {
                path: path.to_path_buf(),
                row: i + 1,
                source,
            })
        })
        .collect()
}

/// "chain 31337 gate 0xAbC…", as a foreign-feed message names a row's owner.
pub(crate) fn owner(chain_id: u64, gate: &str) -> String {
    if gate.is_empty() {
        format!("chain {chain_id} and no gate (written before rows named their gate)")
    } else {
        format!("chain {chain_id} gate {gate}")
    }
}

/// Reads the feed of `gate` on `chain_id` (missing file = empty). Refuses, with
/// [`RecordError::ForeignFeed`] naming the first such row, a feed any row of which names
/// another chain or gate, or no gate at all: a record of one gate never takes in another's.
pub fn read_feed_for(path: &Path, chain_id: u64, gate: Address) -> Result<Vec<FeedRow>> {
    let rows = read_feed(path)?;
    for (i, row) in rows.iter().enumerate() {
        let (row_chain, row_gate) = row.owner();
        let ours = row_chain == chain_id && row_gate.parse::<Address>().is_ok_and(|g| g == gate);
        if !ours {
            return Err(RecordError::ForeignFeed {
                path: path.to_path_buf(),
                row: i + 1,
                found: owner(row_chain, row_gate),
                expected: owner(chain_id, &gate.to_checksum(None)),
            });
        }
    }
    Ok(rows)
}

/// At most this many broken links are described one by one; the rest are counted.
pub const MAX_LINK_PROBLEMS: usize = 8;

/// What walking a feed's hash chain found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LinkCheck {
    /// Rows (non-empty lines) walked.
    pub rows: usize,
    /// keccak256 of the last line as written (the genesis hash for an empty feed).
    pub head: B256,
    /// One line per broken link or head mismatch; empty when every link holds.
    pub problems: Vec<String>,
}

/// Walks the hash chain of a feed's `text`: row 1's `prev` must be the genesis hash of
/// (`chain_id`, `gate`), every later row's `prev` the keccak256 of the row before it as written,
/// and `head_file` (the contents of feed.head; `None` when it is missing) the keccak256 of the
/// last row. Each break is described as well as the hashes can tell: a row that links past its
/// predecessor marks an insertion; any other break marks an edit of the row before, or a row
/// removed or inserted there.
pub fn check_links(text: &str, chain_id: u64, gate: Address, head_file: Option<&str>) -> LinkCheck {
    let lines = feed_lines(text);
    let hashes: Vec<B256> = lines.iter().map(|l| keccak256(l.as_bytes())).collect();
    let genesis = genesis_hash(chain_id, gate);
    let position = |h: &B256| hashes.iter().position(|x| x == h);
    let mut problems = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let n = i + 1;
        let expected = if i == 0 { genesis } else { hashes[i - 1] };
        let link = serde_json::from_str::<LineLink>(line).ok().and_then(|l| l.prev);
        let Some(link) = link else {
            problems.push(format!(
                "row {n} has no `prev` link (written before the feed was hash-linked, or edited): \
                 re-run `keeper report` on an untampered record"
            ));
            continue;
        };
        let Ok(link) = link.parse::<B256>() else {
            problems.push(format!("row {n}: `prev` is not a 32-byte hex hash: row {n} was edited"));
            continue;
        };
        if link == expected {
            continue;
        }
        let why = if i == 0 && is_v1(line, chain_id, gate) {
            format!("row 1 links to the v1 genesis: {V1_NOTE}")
        } else if link == genesis {
            format!(
                "row {n}: `prev` is the genesis hash, which only row 1 may carry: row {n} is a \
                 copy of a first row, or {} inserted before it",
                span(1, n - 1)
            )
        } else if i == 0 {
            format!(
                "row 1: `prev` is not the genesis hash of {}: row 1 was edited, or rows were \
                 removed before it",
                owner(chain_id, &gate.to_checksum(None))
            )
        } else {
            match position(&link) {
                Some(k) if k + 1 < i => format!(
                    "row {n}: `prev` links to row {}, not row {}: {} inserted",
                    k + 1,
                    n - 1,
                    span(k + 2, n - 1)
                ),
                Some(k) => format!(
                    "row {n}: `prev` links to row {}, which comes after it: rows were reordered",
                    k + 1
                ),
                None => format!(
                    "row {n}: `prev` does not match row {} as written: row {} was edited, or a \
                     row was removed or inserted here{}",
                    n - 1,
                    n - 1,
                    link_only_fields(lines[i - 1])
                ),
            }
        };
        problems.push(why);
    }
    let head = hashes.last().copied().unwrap_or(genesis);
    match head_file.map(str::trim) {
        None => problems.push(format!(
            "{HEAD_FILE} is missing: the feed's last row cannot be checked (was it written by \
             this keeper version?)"
        )),
        Some(text) => match text.parse::<B256>() {
            Err(_) => problems.push(format!("{HEAD_FILE} does not hold a 32-byte hex hash")),
            Ok(h) if h == head => {}
            Ok(h) if h == genesis && !lines.is_empty() => problems.push(format!(
                "{HEAD_FILE} is the genesis hash (an empty feed): {} added after the keeper \
                 wrote it",
                span(1, lines.len())
            )),
            Ok(h) => problems.push(match position(&h) {
                Some(k) => format!(
                    "{HEAD_FILE} names row {} as the last: {} appended after the keeper wrote it",
                    k + 1,
                    span(k + 2, lines.len())
                ),
                None => format!(
                    "{HEAD_FILE} does not match the last row (row {}) as written: row {} was \
                     edited, or rows were removed or appended at the end{}",
                    lines.len(),
                    lines.len(),
                    lines.last().map_or(String::new(), |l| link_only_fields(l))
                ),
            }),
        },
    }
    if problems.len() > MAX_LINK_PROBLEMS {
        let more = problems.len() - MAX_LINK_PROBLEMS;
        problems.truncate(MAX_LINK_PROBLEMS);
        problems.push(format!("and {more} more broken links"));
    }
    LinkCheck { rows: lines.len(), head, problems }
}

/// The fields of a row that only the hash chain protects, for a message about an edit the
/// links caught: a decision row's labels (its other fields are re-derived from its log and
/// named on their own when they differ), or every field of an off-chain row. The hashes pin the
/// row, not the field, so this is the list an edit must be in.
fn link_only_fields(line: &str) -> String {
    match serde_json::from_str::<FeedRow>(line) {
        Ok(FeedRow::Decision(_)) => {
            "; if it was edited and --check names no chain-derived field of it, \
             the edit is in a field only this link protects: `provider`, `model`, \
             `strategy_hash` or `scenario`"
                .to_string()
        }
        Ok(FeedRow::Offchain(_)) => "; it is an off-chain row: none of its fields is on chain, \
             so this link is all that protects any of them"
            .to_string(),
        Ok(_) => "; it is a closing row: --check names any of its fields that differs from \
             its event on chain"
            .to_string(),
        Err(_) => "; it is not a feed row any more".to_string(),
    }
}

/// "row 4 was" or "rows 4-6 were".
fn span(first: usize, last: usize) -> String {
    if first == last {
        format!("row {first} was")
    } else {
        format!("rows {first}-{last} were")
    }
}

/// [`check_links`] over `feed.jsonl` and `feed.head` in `dir` (a missing feed is empty).
pub fn check_links_in(dir: &Path, chain_id: u64, gate: Address) -> Result<LinkCheck> {
    let text = read_text(&dir.join(FEED_FILE))?.unwrap_or_default();
    let head = read_text(&dir.join(HEAD_FILE))?;
    Ok(check_links(&text, chain_id, gate, head.as_deref()))
}

/// The keeper's notes (annotations and whole answers) and off-chain rows of an existing feed.
/// A row whose transaction hash does not parse names no decision on chain; it has no note.
pub fn split_feed(rows: &[FeedRow]) -> (BTreeMap<DecisionId, RowNote>, Vec<OffchainRow>) {
    let mut notes = BTreeMap::new();
    let mut off = Vec::new();
    for r in rows {
        match r {
            FeedRow::Decision(d) => {
                let Ok(tx) = d.tx.parse::<TxHash>() else { continue };
                let note = RowNote { note: d.note.clone(), raw: d.raw.clone() };
                notes.insert(DecisionId { tx, log_index: d.log_index }, note);
            }
            FeedRow::Offchain(o) => off.push(o.clone()),
            _ => {}
        }
    }
    (notes, off)
}

/// Attaches each closing row of `rows` (in feed order) to the decision rows it names, as the
/// pages and the floor show a decision; the closing rows stay where they are.
pub fn attach_closings(rows: &mut [FeedRow]) {
    let mut at: HashMap<DecisionRef, usize> = HashMap::new();
    for i in 0..rows.len() {
        match &rows[i] {
            FeedRow::Decision(d) => {
                at.insert(d.reference(), i);
            }
            FeedRow::Offchain(_) => {}
            closing => {
                let closing = closing.clone();
                for r in closing.closes() {
                    if let Some(FeedRow::Decision(d)) = at.get(r).map(|&k| &mut rows[k]) {
                        closing.attach_to(d);
                    }
                }
            }
        }
    }
}

/// The decision rows of `rows` (in feed order) with the rows closing their positions attached
/// ([`attach_closings`]), and the off-chain rows.
pub fn joined(rows: Vec<FeedRow>) -> (Vec<DecisionRow>, Vec<OffchainRow>) {
    let mut rows = rows;
    attach_closings(&mut rows);
    let mut decisions = Vec::new();
    let mut offchain = Vec::new();
    for row in rows {
        match row {
            FeedRow::Decision(d) => decisions.push(d),
            FeedRow::Offchain(o) => offchain.push(o),
            _ => {}
        }
    }
    (decisions, offchain)
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

    fn offchain(market: &str, block: u64) -> FeedRow {
        FeedRow::Offchain(OffchainRow {
            chain_id: 31_337,
            gate: Address::repeat_byte(0x11).to_checksum(None),
            block,
            time: 1_000 + block,
            market: market.to_string(),
            prompt_hash: None,
            error: "HTTP 500".to_string(),
            transport: TransportDetail::default(),
            note: Annotation::default(),
        })
    }

    /// A linked feed of four off-chain rows of gate 0x11.., its lines and its head.
    fn linked() -> (Vec<String>, String) {
        let rows: Vec<FeedRow> = (1..=4).map(|b| offchain(&format!("m{b}"), b)).collect();
        let (text, head) = to_linked_jsonl(&rows, 31_337, Address::repeat_byte(0x11));
        (text.lines().map(str::to_string).collect(), head.to_string())
    }

    fn check(lines: &[String], head: &str) -> Vec<String> {
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        check_links(&text, 31_337, Address::repeat_byte(0x11), Some(head)).problems
    }

    #[test]
    fn each_line_links_to_the_one_before_as_written_and_the_head_to_the_last() {
        let (lines, head) = linked();
        let g = genesis_hash(31_337, Address::repeat_byte(0x11));
        // The genesis names format, chain and gate.
        assert_eq!(
            genesis(31_337, Address::repeat_byte(0x11)),
            "riskgate feed v2 31337 0x1111111111111111111111111111111111111111"
        );
        assert!(lines[0].starts_with(&format!("{{\"prev\":\"{g}\",\"kind\":\"offchain\"")));
        for i in 1..lines.len() {
            let link = keccak256(lines[i - 1].as_bytes()).to_string();
            assert!(lines[i].starts_with(&format!("{{\"prev\":\"{link}\"")), "line {i}");
        }
        assert_eq!(head, keccak256(lines[3].as_bytes()).to_string());
        assert!(check(&lines, &head).is_empty());
        // An empty feed's head is the genesis hash.
        assert_eq!(to_linked_jsonl(&[], 31_337, Address::repeat_byte(0x11)).1, g);
        // The rows read back unchanged (the link is not part of a row).
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        let back: Vec<FeedRow> =
            feed_lines(&text).iter().map(|l| serde_json::from_str(l).unwrap()).collect();
        assert_eq!(back, (1..=4).map(|b| offchain(&format!("m{b}"), b)).collect::<Vec<_>>());
    }

    #[test]
    fn a_broken_link_names_the_row_and_what_happened_to_it() {
        let (lines, head) = linked();
        // Every row here is an off-chain row, so each edit names all its fields as unprotected
        // by anything but the link.
        const OFF: &str = "; it is an off-chain row: none of its fields is on chain, so this \
                           link is all that protects any of them";
        // Row 2 edited: row 3 no longer links to it.
        let mut edited = lines.clone();
        edited[1] = edited[1].replace("HTTP 500", "HTTP 501");
        assert_eq!(
            check(&edited, &head),
            vec![format!(
                "row 3: `prev` does not match row 2 as written: row 2 was edited, or a row \
                  was removed or inserted here{OFF}"
            )]
        );
        // Row 2 removed: what is now row 2 links to a line that is gone.
        let mut removed = lines.clone();
        removed.remove(1);
        assert_eq!(
            check(&removed, &head),
            vec![format!(
                "row 2: `prev` does not match row 1 as written: row 1 was edited, or a row \
                  was removed or inserted here{OFF}"
            )]
        );
        // A variant of row 1 inserted as row 2: its own link is the genesis, and row 3 (old
        // row 2) still links to row 1, past the inserted row.
        let mut inserted = lines.clone();
        inserted.insert(1, lines[0].replace("\"m1\"", "\"m9\""));
        assert_eq!(
            check(&inserted, &head),
            vec![
                "row 2: `prev` is the genesis hash, which only row 1 may carry: row 2 is a copy \
                 of a first row, or row 1 was inserted before it",
                "row 3: `prev` links to row 1, not row 2: row 2 was inserted",
            ]
        );
        // The last row edited: only feed.head can tell.
        let mut last = lines.clone();
        last[3] = last[3].replace("m4", "m5");
        assert_eq!(
            check(&last, &head),
            vec![format!(
                "feed.head does not match the last row (row 4) as written: row 4 was edited, \
                  or rows were removed or appended at the end{OFF}"
            )]
        );
        // A row appended, correctly linked, after the keeper wrote feed.head.
        let five: Vec<FeedRow> = (1..=5).map(|b| offchain(&format!("m{b}"), b)).collect();
        let (text, _) = to_linked_jsonl(&five, 31_337, Address::repeat_byte(0x11));
        let appended: Vec<String> = text.lines().map(str::to_string).collect();
        assert_eq!(appended[..4], lines[..]);
        assert_eq!(
            check(&appended, &head),
            vec!["feed.head names row 4 as the last: row 5 was appended after the keeper wrote it"]
        );
        // A feed of another gate fails at its first link.
        let text: String = lines.iter().map(|l| format!("{l}\n")).collect();
        let other = check_links(&text, 31_337, Address::repeat_byte(0x22), Some(&head));
        assert!(other.problems[0].starts_with(
            "row 1: `prev` is not the genesis hash of chain \
             31337 gate 0x2222222222222222222222222222222222222222"
        ));
        // No feed.head at all.
        let none = check_links(&text, 31_337, Address::repeat_byte(0x11), None);
        assert_eq!(none.problems.len(), 1);
        assert!(none.problems[0].starts_with("feed.head is missing"));
    }

    #[test]
    fn the_average_price_paid_rounds_up_and_is_absent_without_a_fill() {
        let u = |v: u64| U256::from(v);
        // 10 units at 0.40 and 10 at 0.95: spent 4 + 9.5 = 13.5 for 20, 0.675 on average.
        assert_eq!(average_price_paid(u(20), u(13)), Some(u(650_000)));
        assert_eq!(average_price_paid(u(20_000_000), u(13_500_000)), Some(u(675_000)));
        // 3 units for 1 base unit: 1e6 / 3 = 333,333.3..., rounded up to 333,334.
        assert_eq!(average_price_paid(u(3), u(1)), Some(u(333_334)));
        assert_eq!(average_price_paid(u(0), u(0)), None);
    }

    #[test]
    fn failed_rules_read_all_32_bits() {
        assert_eq!(failed_rules(1 << 18 | 1 << 12 | 1 << 9), vec![9, 12, 18]);
        assert_eq!(failed_rules(1 << 31), vec![31]);
    }
}
