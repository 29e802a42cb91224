//! `report --check` of a consensus gate's rows (issue 36): every decision re-checked against its
//! verdict source's logs, from the chain alone. A consensus gate takes decisions only from its
//! source (`SomniaVerdictSource`): `ask` logs `Asked` (the request id, market, read block,
//! prompt hash and the prompt's user part built on chain), and the platform's callback makes
//! the gate publish a `Decision` whose vote holds, per successful validator response, the
//! validator, the answer's length, keccak256 and head, then logs `Answered` (request id, the
//! platform's status, the reason the gate published) in the same transaction. For each row:
//! - its transaction holds the source's `Answered` for the row's market, with the row's reason;
//! - that request's `Asked` names the row's market, read block and prompt hash;
//! - each vote entry's head is the whole answer when the answer is that short, and then hashes
//!   to the entry's keccak256; no more entries than the subcommittee;
//! - the counts add up to the entries, and no verdict counts more answers than the entries
//!   that spell it (a result that spells a verdict without being a well-formed ABI string is
//!   counted unparseable by the source, so the bound is one way);
//! - the reason follows from the status, the read's age and the answers: 23 unless the
//!   platform reported success within `maxReadAge` blocks of the read; otherwise 22 when fewer
//!   than `threshold` answers are identical; otherwise the agreed answer's verdict, or 11 when
//!   it is not one;
//! - every `Answered` in range has its row, and requests the gate refused outright (paused)
//!   are counted.
//!
//! Adversary: a feed publisher or keeper claiming an agreement the validators never gave. The
//! validators' results themselves reach the source only inside the platform's callback (an
//! internal call, not a transaction of their own on Somnia), so what is checked is that the
//! published vote, the source's logs and the reason agree with one another and with the rules;
//! not verifiable from logs: results that differ only outside the answer they encode (ABI
//! padding), which the source counts as different and the vote shows alike.

use crate::{
    chain::{
        attestation::Vote,
        reads::{self, CollectError},
    },
    domain::decision::{gate_verdict, DecisionRow},
    kit::bindings::{reason, verdict, IRiskGate, ISomniaVerdictSource, RAW_HEAD_BYTES},
};
use alloy::{
    primitives::{keccak256, Address, B256, U256},
    providers::DynProvider,
    rpc::types::{Filter, Log},
    sol_types::SolEvent,
};
use std::collections::HashMap;

/// The platform's `ResponseStatus.Success`.
pub const STATUS_SUCCESS: u8 = 2;

/// A consensus gate's verdict source, as its immutables read back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SourceFacts {
    pub source: Address,
    pub platform: Address,
    pub subcommittee: u8,
    /// Identical answers a verdict needs.
    pub threshold: u8,
    /// Blocks an answer may come after its read.
    pub max_read_age: u32,
    /// The system text every prompt starts with.
    pub system: String,
}

/// One request as the source's `Asked` logged it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Asked {
    pub market: Address,
    pub read_block: u64,
    pub prompt_hash: B256,
    /// The prompt's user part, as built on chain.
    pub prompt: String,
    /// The block the request was sent in.
    pub block: u64,
}

/// One request as the source's `Answered` logged it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answered {
    pub request: U256,
    pub market: Address,
    pub status: u8,
    pub reason: u8,
    pub tx: B256,
    pub block: u64,
    pub log_index: u64,
}

/// The source's logs over a range.
#[derive(Debug, Clone, Default)]
pub struct SourceLogs {
    pub asked: HashMap<U256, Asked>,
    pub answered: Vec<Answered>,
    /// Requests the gate refused outright (a paused gate): nothing was published for them.
    pub refused: usize,
}

impl SourceLogs {
    /// The user part and hash each request sent, by market and read block (a market has one
    /// open request at a time, so one per read block).
    pub fn prompts(&self) -> HashMap<(Address, u64), (B256, String)> {
        self.asked
            .values()
            .map(|a| ((a.market, a.read_block), (a.prompt_hash, a.prompt.clone())))
            .collect()
    }
}

/// What checking a consensus gate's rows found.
#[derive(Debug, Clone, Default)]
pub struct ConsensusCheck {
    pub checked: usize,
    /// Validator answers (vote entries) checked.
    pub answers: usize,
    pub refused: usize,
    pub problems: Vec<String>,
}

fn read_err(
    source_addr: Address,
    what: &'static str,
) -> impl Fn(alloy::contract::Error) -> CollectError {
    move |e| CollectError::Gate { gate: source_addr, what, source: Box::new(e) }
}

/// The source's immutables.
pub async fn source_facts(
    provider: &DynProvider,
    source: Address,
) -> Result<SourceFacts, CollectError> {
    let s = ISomniaVerdictSource::new(source, provider);
    Ok(SourceFacts {
        source,
        platform: s.platform().call().await.map_err(read_err(source, "platform"))?,
        subcommittee: s
            .subcommitteeSize()
            .call()
            .await
            .map_err(read_err(source, "subcommitteeSize"))?,
        threshold: s.threshold().call().await.map_err(read_err(source, "threshold"))?,
        max_read_age: s.maxReadAge().call().await.map_err(read_err(source, "maxReadAge"))?,
        system: s.system().call().await.map_err(read_err(source, "system"))?,
    })
}

/// The source's `Asked`, `Answered` and `GateRefused` logs over `[from, to]`.
pub async fn source_logs(
    provider: &DynProvider,
    source: Address,
    from: u64,
    to: u64,
    range: u64,
) -> Result<SourceLogs, CollectError> {
    let filter = Filter::new().address(source).event_signature(vec![
        ISomniaVerdictSource::Asked::SIGNATURE_HASH,
        ISomniaVerdictSource::Answered::SIGNATURE_HASH,
        ISomniaVerdictSource::GateRefused::SIGNATURE_HASH,
    ]);
    let logs = reads::filtered_logs(provider, &filter, from, to, range).await?;
    Ok(decode_source_logs(&logs))
}

/// Pure decoding of [`source_logs`]; a log that does not decode is skipped (the filter asked
/// for these three events only, from the source's own address).
pub fn decode_source_logs(logs: &[Log]) -> SourceLogs {
    let mut out = SourceLogs::default();
    for log in logs {
        let block = log.block_number.unwrap_or_default();
        if let Ok(ev) = ISomniaVerdictSource::Asked::decode_log(&log.inner) {
            out.asked.insert(
                ev.requestId,
                Asked {
                    market: ev.market,
                    read_block: ev.readBlock,
                    prompt_hash: ev.promptHash,
                    prompt: ev.data.prompt.clone(),
                    block,
                },
            );
        } else if let Ok(ev) = ISomniaVerdictSource::Answered::decode_log(&log.inner) {
            out.answered.push(Answered {
                request: ev.requestId,
                market: ev.market,
                status: ev.status,
                reason: ev.reason,
                tx: log.transaction_hash.unwrap_or_default(),
                block,
                log_index: log.log_index.unwrap_or_default(),
            });
        } else if ISomniaVerdictSource::GateRefused::decode_log(&log.inner).is_ok() {
            out.refused += 1;
        }
    }
    out
}

/// Checks every row of `rows` (a consensus gate's decisions over `[from, to]`) against the
/// source's logs and the votes the gate's `Decision` logs published.
pub async fn check(
    provider: &DynProvider,
    gate: Address,
    source: &SourceFacts,
    logs: &SourceLogs,
    rows: &[DecisionRow],
    blocks: std::ops::RangeInclusive<u64>,
    range: u64,
) -> Result<ConsensusCheck, CollectError> {
    let filter = Filter::new().address(gate).event_signature(IRiskGate::Decision::SIGNATURE_HASH);
    let mut votes: HashMap<(B256, u64), Vec<u8>> = HashMap::new();
    let (from, to) = (*blocks.start(), *blocks.end());
    for log in reads::filtered_logs(provider, &filter, from, to, range).await? {
        if let Ok(ev) = IRiskGate::Decision::decode_log(&log.inner) {
            let id = (log.transaction_hash.unwrap_or_default(), log.log_index.unwrap_or_default());
            votes.insert(id, ev.data.vote.to_vec());
        }
    }
    Ok(check_rows(source, logs, rows, &votes))
}

/// The pure part of [`check`]: `votes` holds each `Decision` log's vote bytes by transaction
/// and log index.
pub fn check_rows(
    source: &SourceFacts,
    logs: &SourceLogs,
    rows: &[DecisionRow],
    votes: &HashMap<(B256, u64), Vec<u8>>,
) -> ConsensusCheck {
    let mut out = ConsensusCheck { refused: logs.refused, ..Default::default() };
    let mut answered: HashMap<(B256, Address), &Answered> =
        logs.answered.iter().map(|a| ((a.tx, a.market), a)).collect();
    for row in rows {
        out.checked += 1;
        let name = format!("decision in tx {} (log {})", row.tx, row.log_index);
        let (Ok(tx), Ok(market)) = (row.tx.parse::<B256>(), row.market.parse::<Address>()) else {
            out.problems.push(format!("{name}: its transaction or market does not parse"));
            continue;
        };
        let Some(a) = answered.remove(&(tx, market)) else {
            out.problems.push(format!(
                "{name}: its transaction holds no Answered log of the verdict source {} for \
                 market {market}: a consensus gate decides only on its source's callback",
                source.source
            ));
            continue;
        };
        let vote = match votes.get(&(tx, row.log_index)).map(|b| Vote::decode(b)) {
            Some(Ok(Some(v))) => v,
            Some(Ok(None)) => {
                out.problems.push(format!("{name}: the Decision log publishes no vote"));
                continue;
            }
            Some(Err(why)) => {
                out.problems.push(format!("{name}: its vote does not decode: {why}"));
                continue;
            }
            None => {
                out.problems.push(format!("{name}: no Decision log at that transaction and index"));
                continue;
            }
        };
        out.answers += vote.entries.len();
        let problems = check_one(row, &vote, a, logs.asked.get(&a.request), source);
        out.problems.extend(problems.into_iter().map(|p| format!("{name}: {p}")));
    }
    let mut left: Vec<&&Answered> = answered.values().collect();
    left.sort_by_key(|a| (a.block, a.log_index));
    for a in left {
        out.problems.push(format!(
            "request {} (tx {}, block {}): the source logged reason {} for market {}, and the \
             record has no decision for it",
            a.request, a.tx, a.block, a.reason, a.market
        ));
    }
    out
}

/// The verdict a vote entry's answer gives, when the entry holds it whole (a longer answer is
/// unparseable to the gate too).
fn entry_verdict(length: u32, head: &[u8]) -> u8 {
    if length as usize > RAW_HEAD_BYTES || head.len() != length as usize {
        return verdict::INVALID;
    }
    std::str::from_utf8(head).map(gate_verdict).unwrap_or(verdict::INVALID)
}

/// The differences between one consensus row and what its source logged (`a`, and the
/// request's `Asked`) and its vote published.
pub fn check_one(
    row: &DecisionRow,
    vote: &Vote,
    a: &Answered,
    asked: Option<&Asked>,
    s: &SourceFacts,
) -> Vec<String> {
    let mut problems = Vec::new();
    if a.reason != row.reason {
        problems.push(format!(
            "the source logged reason {} for request {}, the gate published {}",
            a.reason, a.request, row.reason
        ));
    }
    match asked {
        None => problems.push(format!("request {} has no Asked log in range", a.request)),
        Some(q) => {
            if q.market.to_checksum(None) != row.market || q.read_block != row.read_block {
                problems.push(format!(
                    "request {} asked about market {} at block {}, the row is for {} at {}",
                    a.request, q.market, q.read_block, row.market, row.read_block
                ));
            }
            if q.prompt_hash.to_string() != row.prompt_hash {
                problems.push(format!(
                    "request {}'s prompt hash is {}, the row's {}",
                    a.request, q.prompt_hash, row.prompt_hash
                ));
            }
            if q.block != q.read_block {
                problems.push(format!(
                    "request {} was sent in block {} but names read block {}",
                    a.request, q.block, q.read_block
                ));
            }
        }
    }
    if vote.entries.len() > usize::from(s.subcommittee) {
        problems.push(format!(
            "{} answers in the vote, more than the subcommittee of {}",
            vote.entries.len(),
            s.subcommittee
        ));
    }
    let mut spelled = [0usize; 4];
    let mut groups: Vec<((u32, B256), usize, u8)> = Vec::new();
    for (i, e) in vote.entries.iter().enumerate() {
        let whole = e.length as usize <= RAW_HEAD_BYTES;
        if whole && (e.head.len() != e.length as usize || keccak256(&e.head) != e.hash) {
            problems.push(format!(
                "answer {} ({} bytes, shown whole) does not hash to its published keccak256",
                i + 1,
                e.length
            ));
        }
        let v = entry_verdict(e.length, &e.head);
        spelled[usize::from(v.min(3))] += 1;
        match groups.iter_mut().find(|g| g.0 == (e.length, e.hash)) {
            Some(g) => g.1 += 1,
            None => groups.push(((e.length, e.hash), 1, v)),
        }
    }
    let counts = vote.counts;
    let total: usize = counts.iter().map(|&c| usize::from(c)).sum();
    if total != vote.entries.len() {
        problems.push(format!(
            "the counts {counts:?} add up to {total}, the vote has {} answers",
            vote.entries.len()
        ));
    }
    for v in [verdict::ABSTAIN, verdict::BUY_UP, verdict::BUY_DOWN] {
        let i = usize::from(v);
        if usize::from(counts[i]) > spelled[i] {
            problems.push(format!(
                "the vote counts {} answers of verdict {v}, only {} of its answers spell it",
                counts[i], spelled[i]
            ));
        }
    }
    let k = usize::from(s.threshold);
    let age = row.block.saturating_sub(row.read_block);
    let in_time = a.status == STATUS_SUCCESS && age <= u64::from(s.max_read_age);
    // The largest group of identical answers (the first, on a tie: more than half must agree,
    // so two groups cannot both reach k).
    let best = groups.iter().max_by_key(|g| g.1).map(|g| (g.1, g.2)).unwrap_or((0, 0));
    let (agreeing, agreed) = best;
    match row.reason {
        reason::NO_CONSENSUS_IN_TIME if in_time => problems.push(format!(
            "reason 23 although the platform reported success {age} blocks after the read (at \
             most {})",
            s.max_read_age
        )),
        reason::NO_CONSENSUS_IN_TIME => {}
        r if !in_time => problems.push(format!(
            "reason {r} although the answer came with status {} {age} blocks after the read (at \
             most {}): 23 is the only outcome",
            a.status, s.max_read_age
        )),
        // Identical answers may still come from results that differ outside the answer (ABI
        // padding), which the source counts apart: a 22 with k identical answers is not a
        // contradiction the logs can show.
        reason::ATTESTORS_DISAGREE => {}
        r if agreeing < k => problems.push(format!(
            "reason {r} although at most {agreeing} answers of {} are identical ({k} needed)",
            vote.entries.len()
        )),
        reason::INVALID_VERDICT
            if agreed != verdict::INVALID && usize::from(counts[usize::from(agreed)]) >= k =>
        {
            problems.push(format!(
                "reason 11 although {} well-formed answers agree on verdict {agreed}",
                counts[usize::from(agreed)]
            ))
        }
        reason::INVALID_VERDICT => {}
        r if agreed == verdict::INVALID => problems.push(format!(
            "reason {r} although the {agreeing} identical answers are not a verdict"
        )),
        _ if row.verdict != agreed => problems.push(format!(
            "verdict {} published, verdict {agreed} agreed by {agreeing} validators",
            row.verdict
        )),
        _ => {}
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chain::attestation::VoteEntry;

    fn facts() -> SourceFacts {
        SourceFacts {
            source: Address::repeat_byte(5),
            platform: Address::repeat_byte(6),
            subcommittee: 3,
            threshold: 3,
            max_read_age: 12,
            system: "system".into(),
        }
    }

    fn entry(who: u8, answer: &str) -> VoteEntry {
        VoteEntry {
            signer: Address::repeat_byte(who),
            length: answer.len() as u32,
            hash: keccak256(answer.as_bytes()),
            head: answer.as_bytes()[..answer.len().min(RAW_HEAD_BYTES)].to_vec(),
        }
    }

    /// A vote of `answers` counted as the source counts well-formed strings.
    fn vote(answers: &[&str]) -> Vote {
        let mut counts = [0u8; 4];
        for a in answers {
            counts[usize::from(gate_verdict(a).min(3))] += 1;
        }
        Vote { counts, entries: answers.iter().zip(1..).map(|(a, i)| entry(i, a)).collect() }
    }

    const INV: u8 = verdict::INVALID;

    fn market() -> Address {
        Address::repeat_byte(0x33)
    }

    fn row(reason: u8, verdict: u8, block: u64) -> DecisionRow {
        DecisionRow {
            tx: B256::ZERO.to_string(),
            prompt_hash: B256::repeat_byte(7).to_string(),
            read_block: 100,
            verdict,
            reason,
            ..DecisionRow::blank(block, &market().to_checksum(None))
        }
    }

    fn answered(status: u8, reason: u8) -> Answered {
        Answered {
            request: U256::from(4),
            market: market(),
            status,
            reason,
            tx: B256::ZERO,
            block: 103,
            log_index: 9,
        }
    }

    fn asked() -> Asked {
        Asked {
            market: market(),
            read_block: 100,
            prompt_hash: B256::repeat_byte(7),
            prompt: "user".into(),
            block: 100,
        }
    }

    fn problems(row: &DecisionRow, v: &Vote, a: &Answered) -> Vec<String> {
        check_one(row, v, a, Some(&asked()), &facts())
    }

    #[test]
    fn three_identical_answers_decide_and_nothing_else_does() {
        // 3 of 3 agree on BUY_UP, success 3 blocks after the read (≤ 12): PASS with BUY_UP.
        let v = vote(&["BUY_UP", "BUY_UP", "BUY_UP"]);
        assert!(problems(&row(0, 1, 103), &v, &answered(2, 0)).is_empty());
        // The same vote published as BUY_DOWN: the verdict does not follow.
        let p = problems(&row(0, 2, 103), &v, &answered(2, 0));
        assert!(p.iter().any(|p| p.contains("verdict 2 published, verdict 1 agreed")), "{p:?}");
        // Two of three (k = 3): only 22 may be published; a PASS is a claimed agreement.
        let split = vote(&["BUY_UP", "BUY_UP", "ABSTAIN"]);
        assert!(problems(&row(22, INV, 103), &split, &answered(2, 22)).is_empty());
        let p = problems(&row(0, 1, 103), &split, &answered(2, 0));
        assert!(p.iter().any(|p| p.contains("at most 2 answers of 3 are identical")), "{p:?}");
        // " BUY_UP" parses like "BUY_UP" but is not byte-identical: still a split.
        let spaced = vote(&["BUY_UP", " BUY_UP", "BUY_UP"]);
        let p = problems(&row(0, 1, 103), &spaced, &answered(2, 0));
        assert!(p.iter().any(|p| p.contains("at most 2 answers")), "{p:?}");
    }

    #[test]
    fn twenty_three_only_and_always_for_a_late_or_failed_request() {
        // Timed out (status 4) with no answers: 23.
        assert!(problems(&row(23, INV, 103), &vote(&[]), &answered(4, 23)).is_empty());
        // Success, but 13 blocks after the read (maxReadAge 12): 23, never the agreed verdict.
        let v = vote(&["ABSTAIN", "ABSTAIN", "ABSTAIN"]);
        assert!(problems(&row(23, INV, 113), &v, &answered(2, 23)).is_empty());
        let p = problems(&row(1, 0, 113), &v, &answered(2, 1));
        assert!(p.iter().any(|p| p.contains("23 is the only outcome")), "{p:?}");
        // 23 published for an answer in time: a refusal the validators did not cause.
        let p = problems(&row(23, INV, 112), &v, &answered(2, 23));
        assert!(p.iter().any(|p| p.contains("reason 23 although")), "{p:?}");
    }

    #[test]
    fn agreed_garbage_is_eleven_and_the_logs_must_agree_with_the_row() {
        let long = "x".repeat(100_000);
        let v = vote(&[&long, &long, &long]);
        assert_eq!(v.entries[0].head.len(), RAW_HEAD_BYTES, "only the head is published");
        assert!(problems(&row(11, INV, 103), &v, &answered(2, 11)).is_empty());
        // The source's Answered must carry the row's reason.
        let p = problems(&row(11, INV, 103), &v, &answered(2, 22));
        assert!(p.iter().any(|p| p.contains("source logged reason 22")), "{p:?}");
        // Counts that claim verdicts the answers do not spell.
        let mut forged = vote(&["ABSTAIN", "ABSTAIN", "BUY_DOWN"]);
        forged.counts = [3, 0, 0, 0];
        let p = problems(&row(22, INV, 103), &forged, &answered(2, 22));
        assert!(p.iter().any(|p| p.contains("counts 3 answers of verdict 0, only 2")), "{p:?}");
        // A head that is not the answer its hash names.
        let mut bent = vote(&["ABSTAIN", "ABSTAIN", "ABSTAIN"]);
        bent.entries[1].head = b"BUY_UP!".to_vec();
        let p = problems(&row(1, 0, 103), &bent, &answered(2, 1));
        assert!(p.iter().any(|p| p.contains("answer 2 (7 bytes")), "{p:?}");
        // An Asked for another read block.
        let q = Asked { read_block: 99, ..asked() };
        let p = check_one(&row(22, INV, 103), &vote(&[]), &answered(2, 22), Some(&q), &facts());
        assert!(p.iter().any(|p| p.contains("at block 99")), "{p:?}");
    }

    #[test]
    fn every_answered_request_needs_its_row_and_every_row_its_answer() {
        let tx = B256::repeat_byte(0xaa);
        let mut r = row(1, 0, 103);
        r.tx = tx.to_string();
        r.log_index = 2;
        let v = vote(&["ABSTAIN", "ABSTAIN", "ABSTAIN"]);
        let mut bytes = v.counts.to_vec();
        for e in &v.entries {
            bytes.extend_from_slice(e.signer.as_slice());
            bytes.extend_from_slice(&e.length.to_be_bytes());
            bytes.extend_from_slice(e.hash.as_slice());
            bytes.extend_from_slice(&e.head);
        }
        let votes = HashMap::from([((tx, 2u64), bytes)]);
        let logs = SourceLogs {
            asked: HashMap::from([(U256::from(4), asked())]),
            answered: vec![Answered { tx, ..answered(2, 1) }],
            refused: 0,
        };
        let c = check_rows(&facts(), &logs, std::slice::from_ref(&r), &votes);
        assert!(c.problems.is_empty(), "{:?}", c.problems);
        assert_eq!((c.checked, c.answers), (1, 3));
        // The row without its Answered, and the Answered without its row.
        let other =
            SourceLogs { answered: vec![Answered { tx: B256::ZERO, ..answered(2, 1) }], ..logs };
        let c = check_rows(&facts(), &other, std::slice::from_ref(&r), &votes);
        assert_eq!(c.problems.len(), 2, "{:?}", c.problems);
        assert!(c.problems[0].contains("holds no Answered log"), "{:?}", c.problems);
        assert!(c.problems[1].contains("the record has no decision for it"), "{:?}", c.problems);
    }
}
