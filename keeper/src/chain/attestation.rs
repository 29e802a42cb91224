//! The attested mode's signed answer (issue 35): the EIP-712 `Answer` an attestor signs and the
//! domain it signs under, signing and recovering it as the gate does, the `submitAttested` call
//! data with the shared read appended after its arguments, and the packed vote a `Decision`
//! publishes. Written from the interface's documentation (`IRiskGate.submitAttested`,
//! `AttestedRead`, `Decision.vote`); `keeper/tests/attest.rs` holds it to the deployed gate.

use crate::{domain::decision::AttestorFacts, kit::bindings::IRiskGate};
use alloy::{
    primitives::{keccak256, Address, Bytes, Signature, B256, U256},
    signers::{local::PrivateKeySigner, SignerSync},
    sol_types::{Eip712Domain, SolCall, SolStruct, SolValue},
};

alloy::sol! {
    /// What attestor `i` signs for its answer `raws[i]`; every field but `answerHash` is the
    /// same for all the answers of one call.
    #[derive(Debug, PartialEq, Eq)]
    struct Answer {
        address market;
        uint64 readBlock;
        bytes32 promptHash;
        bytes32 answerHash;
        uint256 bestBid;
        uint256 bestAsk;
        uint64 deadline;
    }
}

alloy::sol! {
    /// The attestor set's views the keeper and its attestors read (`IAttestorSet`).
    #[sol(rpc)]
    interface IAttestorSetView {
        struct Attestors {
            address[] signers;
            uint8 threshold;
            uint32 maxReadAge;
            uint16 maxSlippageBps;
        }
        function attestors() external view returns (Attestors memory);
        function domainSeparator() external view returns (bytes32);
    }
}

/// An attested gate's attestor set as the set reports it (its address, signers ascending,
/// threshold, read age, slippage); None for a relayed gate. The one reader of the mode's
/// setting: the keeper's start, its pages and `keeper attest` all come here.
pub async fn read_set(
    provider: &alloy::providers::DynProvider,
    gate: Address,
) -> Result<Option<AttestorFacts>, alloy::contract::Error> {
    let g = IRiskGate::new(gate, provider);
    if g.gateMode().call().await? != IRiskGate::GateMode::Attested {
        return Ok(None);
    }
    let set = g.attestorSet().call().await?;
    let a = IAttestorSetView::new(set, provider).attestors().call().await?;
    Ok(Some(AttestorFacts {
        set,
        signers: a.signers,
        threshold: a.threshold,
        max_read_age: a.maxReadAge,
        max_slippage_bps: a.maxSlippageBps,
    }))
}

/// The EIP-712 domain of `gate` on chain `chain_id`: name "RiskGate", version "2".
pub fn domain(chain_id: u64, gate: Address) -> Eip712Domain {
    alloy::sol_types::eip712_domain! {
        name: "RiskGate",
        version: "2",
        chain_id: chain_id,
        verifying_contract: gate,
    }
}

/// What every attestor of one decision read and signed besides its own answer and the
/// deadline: the prompt's hash and the best bid and ask (UP prices) at `readBlock`. Travels
/// once per call, appended after `submitAttested`'s arguments.
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize,
)]
#[serde(rename_all = "camelCase")]
pub struct Read {
    pub prompt_hash: B256,
    pub best_bid: U256,
    pub best_ask: U256,
}

impl Read {
    /// `abi.encode(AttestedRead)`: three words.
    pub fn encoded(&self) -> Vec<u8> {
        IRiskGate::AttestedRead {
            promptHash: self.prompt_hash,
            bestBid: self.best_bid,
            bestAsk: self.best_ask,
        }
        .abi_encode()
    }
}

/// The `Answer` signed for `raw`.
pub fn answer(market: Address, read_block: u64, read: &Read, raw: &str, deadline: u64) -> Answer {
    Answer {
        market,
        readBlock: read_block,
        promptHash: read.prompt_hash,
        answerHash: keccak256(raw.as_bytes()),
        bestBid: read.best_bid,
        bestAsk: read.best_ask,
        deadline,
    }
}

/// The digest an attestor signs: `keccak256("\x19\x01" ‖ domainSeparator ‖ hashStruct)`.
pub fn digest(chain_id: u64, gate: Address, answer: &Answer) -> B256 {
    answer.eip712_signing_hash(&domain(chain_id, gate))
}

/// `signer`'s 65-byte signature `r ‖ s ‖ v` (v 27 or 28, s low) of `answer`.
pub fn sign(
    signer: &PrivateKeySigner,
    chain_id: u64,
    gate: Address,
    answer: &Answer,
) -> Result<Bytes, alloy::signers::Error> {
    let sig = signer.sign_hash_sync(&digest(chain_id, gate, answer))?;
    Ok(Bytes::copy_from_slice(&sig.as_bytes()))
}

/// The order of the curve secp256k1, halved: the gate refuses a larger `s` (the malleable twin
/// of a valid signature).
const HALF_N: U256 = U256::from_be_slice(&[
    0x7f, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
    0x5d, 0x57, 0x6e, 0x73, 0x57, 0xa4, 0x50, 0x1d, 0xdf, 0xe9, 0x2f, 0x46, 0x68, 0x1b, 0x20, 0xa0,
]);

/// Who signed `answer` with `sig`, read as the gate reads it: 65 bytes, `v` 27 or 28, a low
/// `s`; `None` for anything the gate would not recover.
pub fn recover(chain_id: u64, gate: Address, answer: &Answer, sig: &[u8]) -> Option<Address> {
    if sig.len() != 65 {
        return None;
    }
    let s = U256::from_be_slice(&sig[32..64]);
    if s > HALF_N || !(sig[64] == 27 || sig[64] == 28) {
        return None;
    }
    let parsed = Signature::from_raw(sig).ok()?;
    parsed.recover_address_from_prehash(&digest(chain_id, gate, answer)).ok()
}

/// The call data of `submitAttested(market, readBlock, raws, sigs, quote)` followed by the
/// read, as the gate expects it.
pub fn submit_calldata(
    market: Address,
    read_block: u64,
    raws: &[String],
    sigs: &[Bytes],
    quote: IRiskGate::Quote,
    read: &Read,
) -> Bytes {
    let mut data = IRiskGate::submitAttestedCall {
        market,
        readBlock: read_block,
        raws: raws.to_vec(),
        sigs: sigs.to_vec(),
        quote,
    }
    .abi_encode();
    data.extend_from_slice(&read.encoded());
    data.into()
}

/// The call data of one `submitAttestedVerdicts`: each element one `submitAttested` call's
/// data ([`submit_calldata`]) after its four-byte selector, in the order the gate decides them.
pub fn submit_batch_calldata(elements: Vec<Bytes>) -> Bytes {
    IRiskGate::submitAttestedVerdictsCall { batch: elements }.abi_encode().into()
}

/// `POST /attest`'s body: which decision to attest. Nothing else is taken from the caller:
/// the attestor reads the market, the book and the block itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct AttestRequest {
    pub chain_id: u64,
    pub gate: Address,
    pub market: Address,
    pub read_block: u64,
    /// The chain time the keeper expects its transaction's block to carry (the node's pending
    /// timestamp when it read): the deadline counts from it rather than from the read block's
    /// time, which on a chain that mines on demand can be far in the past. The attestor signs it
    /// only if it lies between the read block's time and the next block's time as its own node
    /// sees it, so every attestor signs the same deadline and none a later one than its clock
    /// allows. Absent: the read block's time.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub send_time: Option<u64>,
}

/// An attestor's signed answer, as `keeper attest` returns it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Attested {
    pub signer: Address,
    pub chain_id: u64,
    pub gate: Address,
    pub market: Address,
    pub read_block: u64,
    pub read: Read,
    pub deadline: u64,
    /// The model's answer, exactly as signed (hostile text: shown escaped wherever shown).
    pub raw: String,
    /// 65 bytes, `r ‖ s ‖ v`.
    pub signature: Bytes,
    /// The model that answered, as the attestor names it.
    pub model: String,
}

impl Attested {
    /// The typed data this answer's signature covers.
    pub fn answer(&self) -> Answer {
        answer(self.market, self.read_block, &self.read, &self.raw, self.deadline)
    }

    /// Whether the signature recovers, as the gate reads it, to the signer it names.
    pub fn verifies(&self) -> bool {
        recover(self.chain_id, self.gate, &self.answer(), &self.signature) == Some(self.signer)
    }
}

/// One answer of a published vote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VoteEntry {
    /// Zero when the signature did not recover.
    pub signer: Address,
    pub length: u32,
    pub hash: B256,
    /// The answer's first min(length, 64) bytes, verbatim.
    pub head: Vec<u8>,
}

/// A `Decision`'s vote: the count per verdict (ABSTAIN, BUY_UP, BUY_DOWN, unparseable) and each
/// answer in the order sent.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Vote {
    pub counts: [u8; 4],
    pub entries: Vec<VoteEntry>,
}

/// An entry's fixed part: signer (20), length (4), hash (32).
const ENTRY_BYTES: usize = 56;

impl Vote {
    /// Decodes a published vote; empty bytes (a relayed gate's) is `None`. Anything that does
    /// not parse to the end exactly is an error naming where.
    pub fn decode(bytes: &[u8]) -> Result<Option<Vote>, String> {
        if bytes.is_empty() {
            return Ok(None);
        }
        if bytes.len() < 4 {
            return Err(format!("a vote of {} bytes has no counts", bytes.len()));
        }
        let mut vote =
            Vote { counts: [bytes[0], bytes[1], bytes[2], bytes[3]], entries: Vec::new() };
        let mut at = 4;
        while at < bytes.len() {
            let fixed = bytes
                .get(at..at + ENTRY_BYTES)
                .ok_or_else(|| format!("entry {} cut at byte {at}", vote.entries.len() + 1))?;
            let length = u32::from_be_bytes(fixed[20..24].try_into().expect("4 bytes"));
            let head_len = (length as usize).min(crate::kit::bindings::RAW_HEAD_BYTES);
            let head =
                bytes.get(at + ENTRY_BYTES..at + ENTRY_BYTES + head_len).ok_or_else(|| {
                    format!("entry {}'s head cut at byte {at}", vote.entries.len() + 1)
                })?;
            vote.entries.push(VoteEntry {
                signer: Address::from_slice(&fixed[..20]),
                length,
                hash: B256::from_slice(&fixed[24..56]),
                head: head.to_vec(),
            });
            at += ENTRY_BYTES + head_len;
        }
        let counted: usize = vote.counts.iter().map(|&c| usize::from(c)).sum();
        if counted != vote.entries.len() {
            return Err(format!(
                "the counts add up to {counted}, the vote has {} answers",
                vote.entries.len()
            ));
        }
        Ok(Some(vote))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read() -> Read {
        Read {
            prompt_hash: keccak256("prompt"),
            best_bid: U256::from(400_000u64),
            best_ask: U256::from(420_000u64),
        }
    }

    #[test]
    fn a_signature_recovers_to_its_signer_and_to_no_one_on_another_domain() {
        let key = PrivateKeySigner::random();
        let gate = Address::repeat_byte(0x99);
        let a = answer(Address::repeat_byte(1), 7, &read(), "BUY_UP", 1_000);
        let sig = sign(&key, 31_337, gate, &a).unwrap();
        assert_eq!(sig.len(), 65);
        assert_eq!(recover(31_337, gate, &a, &sig), Some(key.address()));
        // Another chain, another gate, another answer: another digest, another address.
        assert_ne!(recover(1, gate, &a, &sig), Some(key.address()));
        assert_ne!(recover(31_337, Address::repeat_byte(0x98), &a, &sig), Some(key.address()));
        let other = answer(Address::repeat_byte(1), 7, &read(), "BUY_DOWN", 1_000);
        assert_ne!(recover(31_337, gate, &other, &sig), Some(key.address()));
        // The high-s twin and a 64-byte form are refused, as the gate refuses them.
        let n = U256::from_be_slice(&[
            0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
            0xff, 0xfe, 0xba, 0xae, 0xdc, 0xe6, 0xaf, 0x48, 0xa0, 0x3b, 0xbf, 0xd2, 0x5e, 0x8c,
            0xd0, 0x36, 0x41, 0x41,
        ]);
        let s = U256::from_be_slice(&sig[32..64]);
        let mut twin = sig.to_vec();
        twin[32..64].copy_from_slice(&(n - s).to_be_bytes::<32>());
        twin[64] = if sig[64] == 27 { 28 } else { 27 };
        assert_eq!(recover(31_337, gate, &a, &twin), None);
        assert_eq!(recover(31_337, gate, &a, &sig[..64]), None);
    }

    #[test]
    fn the_calldata_is_the_pinned_call_then_three_words_of_read() {
        let quote = IRiskGate::Quote { maxPricePaid: U256::from(5u64), deadline: 9 };
        let raws = vec!["ABSTAIN".to_string()];
        let sigs = vec![Bytes::from(vec![1u8; 65])];
        let data = submit_calldata(Address::ZERO, 3, &raws, &sigs, quote.clone(), &read());
        let bare = IRiskGate::submitAttestedCall {
            market: Address::ZERO,
            readBlock: 3,
            raws,
            sigs,
            quote,
        }
        .abi_encode();
        assert_eq!(&data[..bare.len()], &bare[..]);
        assert_eq!(data.len(), bare.len() + 96);
        assert_eq!(&data[bare.len()..bare.len() + 32], read().prompt_hash.as_slice());
    }

    #[test]
    fn a_vote_decodes_entry_by_entry_and_a_cut_one_is_named() {
        // Counts ABSTAIN 1, unparseable 1; a 100-byte answer keeps 64 bytes of head.
        let long = vec![b'x'; 100];
        let mut bytes = vec![1u8, 0, 0, 1];
        bytes.extend_from_slice(Address::repeat_byte(0xa1).as_slice());
        bytes.extend_from_slice(&7u32.to_be_bytes());
        bytes.extend_from_slice(keccak256("ABSTAIN").as_slice());
        bytes.extend_from_slice(b"ABSTAIN");
        bytes.extend_from_slice(Address::ZERO.as_slice());
        bytes.extend_from_slice(&100u32.to_be_bytes());
        bytes.extend_from_slice(keccak256(&long).as_slice());
        bytes.extend_from_slice(&long[..64]);
        let v = Vote::decode(&bytes).unwrap().unwrap();
        assert_eq!(v.counts, [1, 0, 0, 1]);
        assert_eq!(v.entries.len(), 2);
        assert_eq!(v.entries[0].head, b"ABSTAIN");
        assert_eq!(v.entries[1].length, 100);
        assert_eq!(v.entries[1].head.len(), 64);
        assert_eq!(Vote::decode(&[]).unwrap(), None);
        let err = Vote::decode(&bytes[..bytes.len() - 1]).unwrap_err();
        assert!(err.contains("entry 2's head cut"), "{err}");
        bytes[0] = 2;
        assert!(Vote::decode(&bytes).unwrap_err().contains("add up to 3"));
    }
}
