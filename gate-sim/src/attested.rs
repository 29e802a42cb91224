//! The reference model of an attested gate (issue 35): the mode's constructor checks, the
//! EIP-712 digest attestors sign, signature recovery and `IAttestorSet.tally`'s judgment (reasons
//! 0, 21 and 22, the verdict taken, the attested price limit, the answer shown and the packed
//! vote), written from issue 35, `docs/attested.md`, `docs/gate.md` and the NatSpec of
//! `IAttestorSet.sol` and `IRiskGate.sol`, never from the Solidity or the keeper's signing code.
//! Like [`crate::model`], it never panics: a panic here would hide a disagreement instead of
//! reporting it.
//!
//! Where the text leaves a choice open, the choice made is written next to the code that makes
//! it, so that a disagreement with the contract can be judged against the text.

use crate::model::{self, ConstructorError, GateConfig, Quote, Verdict, PRICE_ONE};
use alloy::primitives::{keccak256, Address, Signature, B256, U256, U512};

/// The most attestors a gate takes, and the most answers one call carries (`MAX_ATTESTORS`).
pub const MAX_ATTESTORS: usize = 8;
/// The verdict published when none was taken (reasons 11, 21 and 22).
pub const VERDICT_INVALID: u8 = 255;
/// The answer head logged and shown: the first 64 bytes (`RAW_HEAD_BYTES`, also the parser's
/// longest accepted answer).
pub const RAW_HEAD_BYTES: usize = 64;
/// Reason 21: a signature that does not recover to an attestor, signers not strictly ascending,
/// fewer than `k` answers, a stale `readBlock`.
pub const REASON_NOT_ATTESTED: u8 = 21;
/// Reason 22: no verdict, or more than one, was given by `k` attestors.
pub const REASON_ATTESTORS_DISAGREE: u8 = 22;
/// `AttestedRead` ABI-encoded: three words.
pub const ATTESTED_READ_BYTES: usize = 96;
/// `maxSlippageBps` is in basis points of the attested price, at most 10,000
/// (`docs/deploy.md`: "≤ 10000").
pub const MAX_SLIPPAGE_BPS: u16 = 10_000;
/// The EIP-712 domain's name and version (issue 35).
pub const DOMAIN_NAME: &str = "RiskGate";
pub const DOMAIN_VERSION: &str = "2";
/// The EIP-712 type of the domain: the four fields issue 35 names, in EIP-712's order.
pub const DOMAIN_TYPE: &str =
    "EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)";
/// The EIP-712 type every attestor signs, verbatim from issue 35.
pub const ANSWER_TYPE: &str = "Answer(address market,uint64 readBlock,bytes32 promptHash,bytes32 answerHash,uint256 bestBid,uint256 bestAsk,uint64 deadline)";
/// The order of secp256k1's group; a signature's `s` above half of it (the malleable twin) does
/// not recover.
pub const SECP256K1_N: U256 = U256::from_be_bytes([
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xfe,
    0xba, 0xae, 0xdc, 0xe6, 0xaf, 0x48, 0xa0, 0x3b, 0xbf, 0xd2, 0x5e, 0x8c, 0xd0, 0x36, 0x41, 0x41,
]);

/// How a gate takes answers (`IRiskGate.Attestors`), fixed at deploy. No signer and every
/// setting 0 is a relayed gate.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct AttestorSetting {
    /// Strictly ascending on a gate that deployed.
    pub signers: Vec<Address>,
    /// `k`: the attestors that must give the same verdict.
    pub threshold: u8,
    /// Blocks a `readBlock` may lie behind the block the call runs in.
    pub max_read_age: u32,
    /// The most paid above the attested best price of the side bought, in bps of it.
    pub max_slippage_bps: u16,
}

impl AttestorSetting {
    /// The relayed gate's setting: no signer, every field 0.
    pub fn relayed() -> Self {
        Self::default()
    }

    /// A gate with signers is attested (`GateMode.Attested`, 1); without, relayed (0).
    pub fn is_attested(&self) -> bool {
        !self.signers.is_empty()
    }

    pub fn mode(&self) -> u8 {
        u8::from(self.is_attested())
    }
}

/// Every rule of the mode's setting that `setting` breaks, for a gate whose keeper is `keeper`
/// (empty when the constructor must accept it). A setting without signers is a relayed gate:
/// only `RelayedGateSettings` applies, when any other field is not 0. With signers: 1 to 8 of
/// them, none zero, strictly ascending, `1 <= k <= n`, `maxReadAge > 0`, `maxSlippageBps <=
/// 10000` (0 is allowed: the limit is then the attested price itself), and the keeper not among
/// them. Every broken rule is listed (the specification does not say which the contract names
/// first), each index of a list rule too.
pub fn setting_errors(setting: &AttestorSetting, keeper: Address) -> Vec<ConstructorError> {
    use ConstructorError as E;
    let mut errors = Vec::new();
    let AttestorSetting { signers, threshold, max_read_age, max_slippage_bps } = setting;
    if signers.is_empty() {
        if *threshold != 0 || *max_read_age != 0 || *max_slippage_bps != 0 {
            errors.push(E::RelayedGateSettings {
                threshold: *threshold,
                max_read_age: *max_read_age,
                max_slippage_bps: *max_slippage_bps,
            });
        }
        return errors;
    }
    if signers.len() > MAX_ATTESTORS {
        errors.push(E::TooManyAttestors { count: signers.len(), max: MAX_ATTESTORS });
    }
    for (index, &current) in signers.iter().enumerate() {
        if current.is_zero() {
            errors.push(E::AttestorZero { index });
        }
        if index > 0 && signers[index - 1] >= current {
            errors.push(E::AttestorsNotAscending { index, previous: signers[index - 1], current });
        }
    }
    if *threshold == 0 || usize::from(*threshold) > signers.len() {
        errors.push(E::ThresholdOutOfRange { threshold: *threshold, attestors: signers.len() });
    }
    if *max_read_age == 0 {
        errors.push(E::MaxReadAgeZero);
    }
    if *max_slippage_bps > MAX_SLIPPAGE_BPS {
        errors.push(E::MaxSlippageBpsOutOfRange {
            max_slippage_bps: *max_slippage_bps,
            max: MAX_SLIPPAGE_BPS,
        });
    }
    if signers.contains(&keeper) {
        errors.push(E::KeeperIsAttestor { keeper });
    }
    errors
}

/// Every rule of the whole constructor (the bounds and lists of [`model::constructor_errors`],
/// then the mode's setting) that the arguments break.
pub fn constructor_errors(config: &GateConfig, setting: &AttestorSetting) -> Vec<ConstructorError> {
    let mut errors = model::constructor_errors(config);
    errors.extend(setting_errors(setting, config.keeper));
    errors
}

/// What every attestor of one call signed besides its own answer (`IRiskGate.AttestedRead`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct AttestedRead {
    pub prompt_hash: B256,
    pub best_bid: U256,
    pub best_ask: U256,
}

impl AttestedRead {
    /// `abi.encode(AttestedRead)`: three static words.
    pub fn encode(&self) -> [u8; ATTESTED_READ_BYTES] {
        let mut out = [0u8; ATTESTED_READ_BYTES];
        out[..32].copy_from_slice(self.prompt_hash.as_slice());
        out[32..64].copy_from_slice(&self.best_bid.to_be_bytes::<32>());
        out[64..].copy_from_slice(&self.best_ask.to_be_bytes::<32>());
        out
    }

    /// The first three words of `bytes` (`None` when shorter).
    pub fn decode(bytes: &[u8]) -> Option<Self> {
        if bytes.len() < ATTESTED_READ_BYTES {
            return None;
        }
        let word = |i: usize| U256::from_be_slice(&bytes[32 * i..32 * (i + 1)]);
        Some(Self {
            prompt_hash: B256::from_slice(&bytes[..32]),
            best_bid: word(1),
            best_ask: word(2),
        })
    }
}

/// One `Answer` message, the fields of the typed data in the order of [`ANSWER_TYPE`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct AnswerMessage {
    pub market: Address,
    pub read_block: u64,
    pub prompt_hash: B256,
    /// `keccak256(bytes(raw))`.
    pub answer_hash: B256,
    pub best_bid: U256,
    pub best_ask: U256,
    /// `quote.deadline`.
    pub deadline: u64,
}

/// One ABI word: a value right-aligned in 32 bytes.
fn word_of(bytes: &[u8]) -> [u8; 32] {
    let mut w = [0u8; 32];
    let n = bytes.len().min(32);
    w[32 - n..].copy_from_slice(&bytes[bytes.len() - n..]);
    w
}

/// `keccak256` of the concatenated words (EIP-712's `encodeData` of static members).
fn hash_words(words: &[[u8; 32]]) -> B256 {
    let mut buf = Vec::with_capacity(32 * words.len());
    for w in words {
        buf.extend_from_slice(w);
    }
    keccak256(buf)
}

/// EIP-712's domain separator for the gate at `gate` on chain `chain_id`:
/// `keccak256(typeHash ‖ keccak256("RiskGate") ‖ keccak256("2") ‖ chainId ‖ gate)`.
pub fn domain_separator(chain_id: u64, gate: Address) -> B256 {
    hash_words(&[
        keccak256(DOMAIN_TYPE).0,
        keccak256(DOMAIN_NAME).0,
        keccak256(DOMAIN_VERSION).0,
        word_of(&chain_id.to_be_bytes()),
        word_of(gate.as_slice()),
    ])
}

/// EIP-712's `hashStruct(Answer)`: the type hash, then each field as one word (addresses and
/// `uint64`s right-aligned, `bytes32` as is).
pub fn answer_struct_hash(m: &AnswerMessage) -> B256 {
    hash_words(&[
        keccak256(ANSWER_TYPE).0,
        word_of(m.market.as_slice()),
        word_of(&m.read_block.to_be_bytes()),
        m.prompt_hash.0,
        m.answer_hash.0,
        m.best_bid.to_be_bytes::<32>(),
        m.best_ask.to_be_bytes::<32>(),
        word_of(&m.deadline.to_be_bytes()),
    ])
}

/// What an attestor signs: `keccak256(0x19 ‖ 0x01 ‖ domainSeparator ‖ hashStruct(Answer))`.
pub fn answer_digest(chain_id: u64, gate: Address, m: &AnswerMessage) -> B256 {
    let mut buf = Vec::with_capacity(66);
    buf.extend_from_slice(&[0x19, 0x01]);
    buf.extend_from_slice(domain_separator(chain_id, gate).as_slice());
    buf.extend_from_slice(answer_struct_hash(m).as_slice());
    keccak256(buf)
}

/// The signer of `sig` over `digest`, `None` when it does not recover: a signature is exactly
/// 65 bytes `r ‖ s ‖ v` with `v` 27 or 28, `0 < r < n` and `0 < s <= n / 2` (a high `s`, the
/// malleable twin of a valid signature, does not recover; nor does a 64-byte compact one, or a
/// `v` of 0 or 1), and a point must exist for it.
pub fn recover(sig: &[u8], digest: &B256) -> Option<Address> {
    if sig.len() != 65 {
        return None;
    }
    let r = U256::from_be_slice(&sig[..32]);
    let s = U256::from_be_slice(&sig[32..64]);
    let parity = match sig[64] {
        27 => false,
        28 => true,
        _ => return None,
    };
    if r.is_zero() || r >= SECP256K1_N || s.is_zero() || s > SECP256K1_N >> 1 {
        return None;
    }
    Signature::new(r, s, parity).recover_address_from_prehash(digest).ok()
}

/// `tally(market, readBlock, raws, sigs, quote)` as sent (the answers as bytes: the ABI type is
/// `string`, but call data may carry any bytes).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct TallyCall {
    pub market: Address,
    pub read_block: u64,
    pub raws: Vec<Vec<u8>>,
    pub sigs: Vec<Vec<u8>>,
    pub quote: Quote,
}

/// Where the call runs: the chain, the gate (the domain's `verifyingContract`) and
/// `block.number`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TallyEnv {
    pub chain_id: u64,
    pub gate: Address,
    pub block_number: u64,
}

/// Bytes of one dynamic `bytes`/`string` in an ABI tail: its length word and its data padded
/// to whole words.
fn tail_of_bytes(len: usize) -> usize {
    32 + len.div_ceil(32) * 32
}

/// Bytes of one `bytes[]`/`string[]` in an ABI tail: its length word, one offset word per
/// element, then each element's own tail.
fn tail_of_list(items: &[Vec<u8>]) -> usize {
    32 + items.iter().map(|b| 32 + tail_of_bytes(b.len())).sum::<usize>()
}

/// Where the arguments of a canonical ABI encoding of `call` end in the call data (the 4-byte
/// selector included): the head (market, readBlock, two offsets and the two-word quote: six
/// words), then the answers' tail, then the signatures'.
pub fn arguments_end(call: &TallyCall) -> usize {
    4 + 6 * 32 + tail_of_list(&call.raws) + tail_of_list(&call.sigs)
}

/// Why `tally` reverts instead of judging.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TallyRevert {
    /// Not one signature per answer, or more than [`MAX_ATTESTORS`] answers.
    AttestationShape { answers: usize, signatures: usize },
    /// Fewer than the read's three words after the arguments (positions in the call data).
    AttestedReadMissing { arguments_end: usize, call_end: usize },
}

/// `IAttestorSet.Judgment`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Judgment {
    pub reason: u8,
    pub verdict: u8,
    pub limit: U256,
    pub prompt_hash: B256,
    pub head: Vec<u8>,
    pub length: usize,
    pub hash: B256,
    pub vote: Vec<u8>,
}

/// One answer as the set saw it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Counted {
    /// `None` when the signature did not recover.
    pub signer: Option<Address>,
    pub verdict: Option<Verdict>,
    pub hash: B256,
}

/// The price limit of the verdict taken: the attested price of the side bought plus
/// `maxSlippageBps` of it (docs/attested.md, "What decides", item 4, which defines it in full).
/// BUY_UP pays the ask; BUY_DOWN pays `1e6 - bid` (0 for a bid at or above 1e6, as `evaluate`
/// prices it); ABSTAIN, which buys nothing, is priced as BUY_DOWN (nothing reads its limit). An
/// empty side (`bestAsk == 0` for BUY_UP, `bestBid == 0` otherwise, rule 4's meaning of empty)
/// and a price of 0 allow nothing: 0. A price of 1e6 or more is returned without slippage.
///
/// "`maxSlippageBps` of it" is `floor(price × bps / 10000)`: the limit is the most the gate may
/// pay, so it is the largest integer not above `price × (1 + bps / 10000)`. The price is then
/// below 1e6, so the sum never nears 2^256; it is computed in 512 bits anyway.
pub fn attested_limit(verdict: Verdict, read: &AttestedRead, max_slippage_bps: u16) -> U256 {
    let one = U256::from(PRICE_ONE);
    let price = match verdict {
        Verdict::BuyUp if read.best_ask.is_zero() => return U256::ZERO,
        Verdict::BuyDown | Verdict::Abstain if read.best_bid.is_zero() => return U256::ZERO,
        Verdict::BuyUp => read.best_ask,
        Verdict::BuyDown | Verdict::Abstain => one.saturating_sub(read.best_bid),
    };
    if price >= one {
        return price;
    }
    let slip = U512::from(price) * U512::from(max_slippage_bps) / U512::from(model::BPS);
    model::narrow_saturating(U512::from(price) + slip)
}

/// The `Decision`'s `vote`: the count per verdict, one byte each (ABSTAIN, BUY_UP, BUY_DOWN,
/// unparseable), then per answer in the order sent its signer (20 bytes, 0 when the signature
/// did not recover), its length (uint32, big-endian like every EVM integer), its keccak256 and
/// its first min(length, 64) bytes.
///
/// Choices the text leaves open, made here: every answer sent is counted and listed, whatever
/// the reason (the text lists "each answer in the order sent" without exception); a signature
/// that recovers to an address outside the set still shows that address (it did recover);
/// a length above 2^32 - 1 is cut to its low 32 bits (never drawn: call data cannot be that
/// long).
pub fn pack_vote(raws: &[Vec<u8>], counted: &[Counted]) -> Vec<u8> {
    let mut counts = [0u8; 4];
    for c in counted {
        let slot = c.verdict.map_or(3, |v| usize::from(v.code()));
        counts[slot] = counts[slot].saturating_add(1);
    }
    let mut vote = counts.to_vec();
    for (raw, c) in raws.iter().zip(counted) {
        vote.extend_from_slice(c.signer.unwrap_or_default().as_slice());
        vote.extend_from_slice(&(raw.len() as u32).to_be_bytes());
        vote.extend_from_slice(c.hash.as_slice());
        vote.extend_from_slice(&raw[..raw.len().min(RAW_HEAD_BYTES)]);
    }
    vote
}

/// `IAttestorSet.tally`: the judgment of one attested call, `appended` being the call data after
/// the arguments (the `AttestedRead`, when the keeper sent it). Reverts come back as every
/// error that applies (the text does not order them).
///
/// 1. Reverts: `AttestationShape(answers, signatures)` unless the counts are equal and at most
///    8; `AttestedReadMissing(argumentsEnd, callEnd)` when fewer than 96 bytes follow the
///    arguments. The read is the three words right after the arguments.
/// 2. Each signature is recovered over the digest of its own answer and the shared fields
///    (market, readBlock, the read, `quote.deadline`), each answer parsed strictly.
/// 3. Reason 21 when a signature does not recover, recovers to an address outside the set, the
///    signers are not strictly ascending, fewer than `k` answers came, or
///    `block.number - readBlock > maxReadAge`. (A `readBlock` above the current block is the
///    gate's `ReadBlockInFuture`, checked before the set is asked; the text says nothing of
///    the set's answer to one, so the model counts it as not stale and the differential does
///    not draw it.)
/// 4. Reason 22 when the number of verdicts (ABSTAIN, BUY_UP, BUY_DOWN; never the unparseable)
///    given by at least `k` answers is not exactly one.
/// 5. Otherwise reason 0, that verdict, and its [`attested_limit`].
///
/// The verdict is 255 and the limit 0 on 21 and 22. The answer shown is the first giving the
/// verdict taken, else the first sent; with no answer at all it is the empty answer (head
/// empty, length 0, hash `keccak256("")`). The prompt hash is the read's, whatever the reason.
pub fn tally(
    setting: &AttestorSetting,
    env: &TallyEnv,
    call: &TallyCall,
    appended: &[u8],
) -> Result<Judgment, Vec<TallyRevert>> {
    let mut reverts = Vec::new();
    let (answers, signatures) = (call.raws.len(), call.sigs.len());
    if answers != signatures || answers > MAX_ATTESTORS {
        reverts.push(TallyRevert::AttestationShape { answers, signatures });
    }
    let read = AttestedRead::decode(appended);
    if read.is_none() {
        let arguments_end = arguments_end(call);
        reverts.push(TallyRevert::AttestedReadMissing {
            arguments_end,
            call_end: arguments_end + appended.len(),
        });
    }
    let Some(read) = read.filter(|_| reverts.is_empty()) else {
        return Err(reverts);
    };
    let counted: Vec<Counted> = call
        .raws
        .iter()
        .zip(&call.sigs)
        .map(|(raw, sig)| {
            let hash = keccak256(raw);
            let message = AnswerMessage {
                market: call.market,
                read_block: call.read_block,
                prompt_hash: read.prompt_hash,
                answer_hash: hash,
                best_bid: read.best_bid,
                best_ask: read.best_ask,
                deadline: call.quote.deadline_sec,
            };
            let digest = answer_digest(env.chain_id, env.gate, &message);
            Counted { signer: recover(sig, &digest), verdict: model::parse_verdict(raw).ok(), hash }
        })
        .collect();
    let vote = pack_vote(&call.raws, &counted);

    let all_attestors =
        counted.iter().all(|c| c.signer.is_some_and(|a| setting.signers.contains(&a)));
    let ascending = counted.windows(2).all(|w| w[0].signer < w[1].signer);
    let enough = answers >= usize::from(setting.threshold);
    let age = env.block_number.saturating_sub(call.read_block);
    let fresh = age <= u64::from(setting.max_read_age);
    let attested = all_attestors && ascending && enough && fresh;

    let mut taken = None;
    let reason = if !attested {
        REASON_NOT_ATTESTED
    } else {
        let k = usize::from(setting.threshold);
        let reached: Vec<Verdict> = Verdict::ALL
            .into_iter()
            .filter(|v| counted.iter().filter(|c| c.verdict == Some(*v)).count() >= k)
            .collect();
        match reached.as_slice() {
            [one] => {
                taken = Some(*one);
                0
            }
            _ => REASON_ATTESTORS_DISAGREE,
        }
    };
    let shown = match taken {
        Some(v) => counted.iter().position(|c| c.verdict == Some(v)),
        None => (answers > 0).then_some(0),
    };
    let raw: &[u8] = shown.and_then(|i| call.raws.get(i)).map_or(&[], Vec::as_slice);
    Ok(Judgment {
        reason,
        verdict: taken.map_or(VERDICT_INVALID, Verdict::code),
        limit: taken.map_or(U256::ZERO, |v| attested_limit(v, &read, setting.max_slippage_bps)),
        prompt_hash: read.prompt_hash,
        head: raw[..raw.len().min(RAW_HEAD_BYTES)].to_vec(),
        length: raw.len(),
        hash: keccak256(raw),
        vote,
    })
}

#[cfg(test)]
mod tests;
