//! `report --check` of an attested gate's votes (issue 35): every attested decision re-checked
//! from the chain alone. Its `Decision` log publishes the vote (counts per verdict, and per
//! answer its signer, length, keccak256 and head); its transaction's call data holds every
//! answer, every signature and the read they signed. From those two, for each decision:
//! - the call is `submitAttested` to this gate (or the element of a `submitAttestedVerdicts`
//!   batch at the row's position among its transaction's decisions), for the row's market and
//!   read block, with the row's prompt hash appended;
//! - each answer's length, hash and head are the ones the vote published;
//! - each signature, recovered as the gate recovers it over this chain, gate, market, read and
//!   deadline, gives the signer the vote names (a zero signer: one that recovers to no attestor);
//! - the counts are the answers re-parsed with the gate's parser;
//! - the reason follows from them and the set's threshold: 22 when no single verdict reached
//!   `k`, the verdict taken otherwise, and 21 only with a cause a reader can see (a signer
//!   outside the set or not ascending, fewer than `k` answers, a read older than `maxReadAge`,
//!   or a read of this market no later than an earlier decision's that was not itself 21).
//!
//! Adversary: a keeper or a feed publisher claiming a vote the attestors never gave. Nothing
//! here trusts the keeper's journal or feed: only logs and call data.

use crate::{
    chain::{
        attestation::{self, Read},
        reads::CollectError,
    },
    domain::decision::{gate_verdict, AttestorFacts, DecisionRow, VoteCounts},
    kit::bindings::{reason, verdict, IRiskGate},
};
use alloy::{
    primitives::{keccak256, Address, B256, U256},
    providers::{DynProvider, Provider},
    sol_types::SolCall,
};
use std::collections::HashMap;

/// What checking the votes found.
#[derive(Debug, Clone, Default)]
pub struct VoteCheck {
    /// Attested decisions checked.
    pub checked: usize,
    /// Signatures recovered.
    pub signatures: usize,
    /// One line per decision that does not hold, naming it and why.
    pub problems: Vec<String>,
}

/// One attested call, decoded from its transaction's input.
#[derive(Debug, Clone)]
pub struct AttestedCall {
    pub market: Address,
    pub read_block: u64,
    pub raws: Vec<String>,
    pub sigs: Vec<alloy::primitives::Bytes>,
    pub deadline: u64,
    pub read: Read,
}

/// Decodes the attested call that published the `position`-th decision of a transaction
/// whose call data is `input`: the `submitAttested` itself (position 0), or the element at
/// `position` of a `submitAttestedVerdicts` batch (one `submitAttested`'s data after its
/// selector).
pub fn decode_call(input: &[u8], position: usize) -> Result<AttestedCall, String> {
    let selector = input.get(..4);
    if selector == Some(&IRiskGate::submitAttestedVerdictsCall::SELECTOR[..]) {
        let batch = IRiskGate::submitAttestedVerdictsCall::abi_decode(input)
            .map_err(|e| format!("its batch does not decode: {e}"))?
            .batch;
        let Some(element) = batch.get(position) else {
            return Err(format!(
                "its batch has {} elements, and this is decision {} of the transaction",
                batch.len(),
                position + 1
            ));
        };
        let mut call = IRiskGate::submitAttestedCall::SELECTOR.to_vec();
        call.extend_from_slice(element);
        return decode_single(&call).map_err(|e| format!("batch element {position}: {e}"));
    }
    if selector != Some(&IRiskGate::submitAttestedCall::SELECTOR[..]) {
        return Err("the transaction is not a submitAttested or submitAttestedVerdicts call".into());
    }
    if position != 0 {
        return Err(format!("a submitAttested call publishes one decision, not {}", position + 1));
    }
    decode_single(input)
}

/// Decodes `submitAttested`'s call data with the read appended after its arguments.
fn decode_single(input: &[u8]) -> Result<AttestedCall, String> {
    if input.len() < 4 + 96 {
        return Err(format!("{} bytes of call data cannot hold the appended read", input.len()));
    }
    let (args, tail) = input.split_at(input.len() - 96);
    let call = IRiskGate::submitAttestedCall::abi_decode(args)
        .map_err(|e| format!("its arguments do not decode: {e}"))?;
    let word = |i: usize| U256::from_be_slice(&tail[i * 32..(i + 1) * 32]);
    Ok(AttestedCall {
        market: call.market,
        read_block: call.readBlock,
        raws: call.raws,
        sigs: call.sigs,
        deadline: call.quote.deadline,
        read: Read {
            prompt_hash: B256::from_slice(&tail[..32]),
            best_bid: word(1),
            best_ask: word(2),
        },
    })
}

/// Checks every attested row of `rows` (those with a vote) against its transaction, on chain
/// `chain_id` and gate `gate` whose set is `set`.
pub async fn check(
    provider: &DynProvider,
    chain_id: u64,
    gate: Address,
    set: &AttestorFacts,
    rows: &[&DecisionRow],
) -> Result<VoteCheck, CollectError> {
    let mut out = VoteCheck::default();
    // The latest read block of each market's earlier attested decisions, in chain order: a
    // read no later than it is a replay (reason 21).
    let mut last_read: HashMap<String, u64> = HashMap::new();
    let mut sorted: Vec<&&DecisionRow> = rows.iter().filter(|r| r.vote.is_some()).collect();
    sorted.sort_by_key(|r| (r.block, r.log_index));
    // Each decision's position among its transaction's (a batch publishes several, in order).
    let mut seen_in_tx: HashMap<&str, usize> = HashMap::new();
    for row in sorted {
        let position = {
            let n = seen_in_tx.entry(row.tx.as_str()).or_insert(0);
            *n += 1;
            *n - 1
        };
        out.checked += 1;
        let name = format!("decision in tx {} (log {})", row.tx, row.log_index);
        let tx: B256 = match row.tx.parse() {
            Ok(t) => t,
            Err(_) => {
                out.problems.push(format!("{name}: its transaction hash does not parse"));
                continue;
            }
        };
        let found = provider
            .get_transaction_by_hash(tx)
            .await
            .map_err(|e| CollectError::Rpc(Box::new(e)))?;
        let Some(found) = found else {
            out.problems.push(format!("{name}: the node does not know its transaction"));
            continue;
        };
        use alloy::consensus::Transaction as _;
        let (to, input) = (found.inner.to(), found.inner.input().clone());
        let replayed = last_read.get(&row.market).is_some_and(|&r| row.read_block <= r);
        if row.reason != reason::NOT_ATTESTED {
            // Only a decision the attestors made uses its read: a refused attestation (a
            // forgery, say) leaves it to the real one.
            let last = last_read.entry(row.market.clone()).or_insert(row.read_block);
            *last = (*last).max(row.read_block);
        }
        if to != Some(gate) {
            out.problems.push(format!("{name}: its transaction is not a call to gate {gate}"));
            continue;
        }
        let call = match decode_call(&input, position) {
            Ok(c) => c,
            Err(why) => {
                out.problems.push(format!("{name}: {why}"));
                continue;
            }
        };
        let problems = check_one(row, &call, chain_id, gate, set, replayed, &mut out.signatures);
        out.problems.extend(problems.into_iter().map(|p| format!("{name}: {p}")));
    }
    Ok(out)
}

/// The differences between one attested row and the call that published it (`replayed`: an
/// earlier decision of its market, not 21, read as late or later); `signatures` counts those
/// recovered.
pub fn check_one(
    row: &DecisionRow,
    call: &AttestedCall,
    chain_id: u64,
    gate: Address,
    set: &AttestorFacts,
    replayed: bool,
    signatures: &mut usize,
) -> Vec<String> {
    let mut problems = Vec::new();
    let Some(vote) = &row.vote else { return problems };
    if call.market.to_checksum(None) != row.market || call.read_block != row.read_block {
        problems.push(format!(
            "the call is for market {} at block {}, the row for {} at {}",
            call.market, call.read_block, row.market, row.read_block
        ));
    }
    if call.read.prompt_hash.to_string() != row.prompt_hash {
        problems.push(format!(
            "the read appended to the call has prompt hash {}, the row {}",
            call.read.prompt_hash, row.prompt_hash
        ));
    }
    if vote.answers.len() != call.raws.len() || call.raws.len() != call.sigs.len() {
        problems.push(format!(
            "the vote has {} answers, the call {} answers and {} signatures",
            vote.answers.len(),
            call.raws.len(),
            call.sigs.len()
        ));
        return problems;
    }
    let mut counts = VoteCounts::default();
    let mut signers = Vec::new();
    for (i, (raw, published)) in call.raws.iter().zip(&vote.answers).enumerate() {
        let n = i + 1;
        let bytes = raw.as_bytes();
        let head = &bytes[..bytes.len().min(crate::kit::bindings::RAW_HEAD_BYTES)];
        if published.length as usize != bytes.len()
            || published.hash != keccak256(bytes).to_string()
            || published.head != String::from_utf8_lossy(head)
        {
            problems.push(format!("answer {n}'s length, hash or head is not the one sent"));
        }
        match gate_verdict(raw) {
            verdict::ABSTAIN => counts.abstain += 1,
            verdict::BUY_UP => counts.buy_up += 1,
            verdict::BUY_DOWN => counts.buy_down += 1,
            _ => counts.unparseable += 1,
        }
        let answer =
            attestation::answer(call.market, call.read_block, &call.read, raw, call.deadline);
        let recovered = attestation::recover(chain_id, gate, &answer, &call.sigs[i]);
        *signatures += 1;
        let member = recovered.filter(|a| set.signers.contains(a));
        let named: Address = published.signer.parse().unwrap_or(Address::ZERO);
        let agrees = match member {
            Some(a) => a == named,
            None => named == Address::ZERO || Some(named) == recovered,
        };
        if !agrees {
            problems.push(format!(
                "answer {n}'s signature recovers to {}, the vote names {}",
                recovered.map_or("no one".to_string(), |a| a.to_string()),
                published.signer
            ));
        }
        signers.push(member);
    }
    if counts != vote.counts {
        problems.push(format!(
            "the answers sent count {counts:?}, the vote publishes {:?}",
            vote.counts
        ));
    }
    let k = usize::from(set.threshold);
    let members: Vec<Address> = signers.iter().flatten().copied().collect();
    let ascending = members.len() == signers.len() && members.windows(2).all(|p| p[0] < p[1]);
    let stale = row.block > row.read_block + u64::from(set.max_read_age);
    let not_attested_cause = !ascending || signers.len() < k || stale || replayed;
    let reached: Vec<u8> = [verdict::ABSTAIN, verdict::BUY_UP, verdict::BUY_DOWN]
        .into_iter()
        .filter(|&v| usize::from(counts.of(v)) >= k)
        .collect();
    match row.reason {
        reason::NOT_ATTESTED if !not_attested_cause => problems.push(format!(
            "reason 21 with no cause a reader can see: {} ascending attestors of {k} needed, \
             read {} blocks before inclusion (at most {}), no earlier read of this market as late",
            members.len(),
            row.block.saturating_sub(row.read_block),
            set.max_read_age
        )),
        reason::NOT_ATTESTED => {}
        _ if not_attested_cause => problems.push(format!(
            "reason {} although the answers are not attested ({} ascending attestors of {k} \
             needed, read {} blocks before inclusion, at most {}{})",
            row.reason,
            members.len(),
            row.block.saturating_sub(row.read_block),
            set.max_read_age,
            if replayed { "; the read was used before" } else { "" }
        )),
        reason::ATTESTORS_DISAGREE if reached.len() == 1 => problems.push(format!(
            "reason 22 although {} answers gave verdict {} ({k} needed)",
            counts.of(reached[0]),
            reached[0]
        )),
        reason::ATTESTORS_DISAGREE => {}
        _ if reached.len() != 1 => problems.push(format!(
            "reason {} although no single verdict reached {k} ({counts:?})",
            row.reason
        )),
        _ if row.verdict != reached[0] => problems
            .push(format!("verdict {} published, verdict {} reached {k}", row.verdict, reached[0])),
        _ => {}
    }
    problems
}
