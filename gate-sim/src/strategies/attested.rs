//! proptest strategies for attested gates (issue 35): settings the constructor accepts and ones
//! it must refuse, and calls to `IAttestorSet.tally` built from test keys, honest and attacked:
//! forged signers, answers or signed fields changed after signing, another chain or gate in the
//! domain, signers descending or repeated, high-s twins, compact 64-byte and otherwise malformed
//! signatures, fewer than `k` answers, split votes, unparseable and long answers, reads at and
//! next to the age limit, a missing or short read, and answer/signature counts that do not
//! match.
//!
//! The signatures depend on the gate's address, known only once it is deployed, so a case holds
//! a plan ([`CallPlan`]) and [`materialize`] signs it for a given chain and gate. Signing uses
//! alloy's own EIP-712 derivation (`SolStruct::eip712_signing_hash`), not the reference model's
//! hand-written digest, so the two check each other.

use super::{any_u256, hostile_answer};
use crate::{
    abi,
    attested::{AttestedRead, AttestorSetting, TallyCall, MAX_ATTESTORS},
    model::{self, GateConfig, Quote, PRICE_ONE},
};
use alloy::{
    primitives::{keccak256, Address, B256, U256},
    signers::{local::PrivateKeySigner, SignerSync},
    sol_types::{eip712_domain, SolStruct},
};
use proptest::{collection::vec, prelude::*, sample::select};
use std::sync::OnceLock;

alloy::sol! {
    /// The typed data every attestor signs, verbatim from issue 35.
    #[derive(Debug)]
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

/// Test keys: attestors are drawn from them, and the keys not in a gate's set forge.
pub const KEY_POOL: usize = 16;
/// Calls run against one attested gate at most.
pub const MAX_CALLS_PER_GATE: usize = 12;

/// The pool: `keccak256("gate-sim attestor key i")` for i in 0..16, with their addresses. Not
/// one of them is 0 or above the group order (checked by `PrivateKeySigner::from_bytes`; a key
/// that failed would be left out).
pub fn key_pool() -> &'static [(PrivateKeySigner, Address)] {
    static POOL: OnceLock<Vec<(PrivateKeySigner, Address)>> = OnceLock::new();
    POOL.get_or_init(|| {
        (0..KEY_POOL)
            .filter_map(|i| {
                let key = keccak256(format!("gate-sim attestor key {i}"));
                let signer = PrivateKeySigner::from_bytes(&key).ok()?;
                let address = signer.address();
                Some((signer, address))
            })
            .collect()
    })
}

/// The signature of `message` by `signer` under the domain (`chain_id`, `gate`): 65 bytes
/// `r ‖ s ‖ v`, `v` 27 or 28, low `s` (what `sign_hash` produces). Empty if signing failed.
pub fn sign(signer: &PrivateKeySigner, chain_id: u64, gate: Address, message: &Answer) -> Vec<u8> {
    let domain = eip712_domain! {
        name: "RiskGate",
        version: "2",
        chain_id: chain_id,
        verifying_contract: gate,
    };
    let digest = message.eip712_signing_hash(&domain);
    signer.sign_hash_sync(&digest).map(|s| s.as_bytes().to_vec()).unwrap_or_default()
}

/// Who signs one answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum By {
    /// The gate's attestor at this index (modulo the set's size).
    Attestor(u8),
    /// A pool key outside the set, this one modulo their number: a forger.
    Outsider(u8),
}

/// A field of the signed message that differs from what the call sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Field {
    Market,
    ReadBlock,
    Prompt,
    Bid,
    Ask,
    Deadline,
    /// The keeper changed the answer after it was signed.
    Answer,
}

/// What happens to one answer's signature.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Tamper {
    None,
    /// Signed over other values than the call carries.
    Signed(Field),
    /// Signed for the next chain id.
    OtherChain,
    /// Signed for another gate (its address with the last byte changed).
    OtherGate,
    /// The malleable twin: `s' = n - s`, `v` flipped.
    HighS,
    /// ERC-2098's compact 64-byte form of the same signature.
    Compact,
    /// `v` replaced by this byte (0, 1, 29, ...).
    V(u8),
    /// One byte appended (66 bytes).
    Long,
    /// No signature at all.
    Empty,
    /// 65 bytes that were never a signature.
    Garbage(Vec<u8>),
}

/// One answer of a call and how it is signed.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AnswerPlan {
    pub raw: Vec<u8>,
    pub by: By,
    pub tamper: Tamper,
}

/// The order the answers go out in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Order {
    /// Ascending by signer address: what an honest keeper sends.
    Ascending,
    Descending,
    /// As drawn (often out of order).
    AsDrawn,
    /// Ascending, then the first answer sent again right after itself.
    RepeatFirst,
}

/// The counts the call carries, when not one signature per answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Shape {
    Exact,
    /// One answer more than signatures.
    ExtraAnswer,
    /// One signature more than answers.
    ExtraSignature,
    /// Nine answers and nine signatures (one more than `MAX_ATTESTORS`).
    Nine,
}

/// What follows the arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Appended {
    Read,
    Nothing,
    /// Only the first this many bytes of the read.
    Part(u8),
}

/// One call to `tally`, before it is signed for a gate.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct CallPlan {
    pub market: Address,
    /// `block.number` the call runs at.
    pub block_number: u64,
    /// `readBlock = block_number - age` (never above the block).
    pub age: u64,
    pub read: AttestedRead,
    pub quote: Quote,
    pub answers: Vec<AnswerPlan>,
    pub order: Order,
    pub shape: Shape,
    pub appended: Appended,
}

impl CallPlan {
    pub fn read_block(&self) -> u64 {
        self.block_number.saturating_sub(self.age)
    }
}

/// One attested (or broken) setting, deployed once, and the calls run against its set.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct AttestedCase {
    pub config: GateConfig,
    pub setting: AttestorSetting,
    /// `key_pool()` index of each signer, in the setting's order (for a valid setting).
    pub keys: Vec<usize>,
    pub calls: Vec<CallPlan>,
}

/// The call as sent, the read's bytes after it, and a line per answer saying who signed what.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Materialized {
    pub call: TallyCall,
    pub appended: Vec<u8>,
    pub notes: Vec<String>,
}

fn u(v: u64) -> U256 {
    U256::from(v)
}

/// A valid setting: 1 to 8 pool keys sorted by address, `k` in 1..=n (biased to 1, a majority
/// and n), ages at the small edges and anywhere, slippage 0..=10000.
fn valid_setting() -> impl Strategy<Value = (AttestorSetting, Vec<usize>)> {
    let keys = proptest::sample::subsequence((0..KEY_POOL).collect::<Vec<_>>(), 1..=MAX_ATTESTORS);
    (
        keys,
        any::<u8>(),
        prop_oneof![3 => select(vec![1u32, 2, 5, 64, u32::MAX]), 1 => 1u32..=u32::MAX],
        prop_oneof![
            3 => select(vec![0u16, 1, 50, 200, 9_999, 10_000]),
            1 => 0u16..=10_000
        ],
    )
        .prop_map(|(mut keys, pick, max_read_age, max_slippage_bps)| {
            let pool = key_pool();
            keys.retain(|&i| i < pool.len());
            keys.sort_by_key(|&i| pool[i].1);
            let n = keys.len().max(1);
            let threshold = match pick % 4 {
                0 => 1,
                1 => n / 2 + 1,
                2 => n,
                _ => usize::from(pick) % n + 1,
            };
            let setting = AttestorSetting {
                signers: keys.iter().map(|&i| pool[i].1).collect(),
                threshold: u8::try_from(threshold).unwrap_or(1),
                max_read_age,
                max_slippage_bps,
            };
            (setting, keys)
        })
}

/// One way to break the setting.
#[derive(Clone, Copy, Debug)]
enum SettingBreaker {
    TooMany(u8),
    Zero(u8),
    Duplicate(u8),
    Descending,
    ThresholdZero,
    ThresholdAbove(u8),
    ReadAgeZero,
    Slippage(u16),
    Keeper,
    /// No signers, and this one setting not 0.
    Relayed(u8),
}

fn break_setting(mut s: AttestorSetting, breakers: &[SettingBreaker]) -> AttestorSetting {
    for b in breakers {
        let len = s.signers.len();
        match *b {
            SettingBreaker::TooMany(n) => {
                s.signers = (1..=n).map(Address::with_last_byte).collect();
            }
            SettingBreaker::Zero(i) if len > 0 => s.signers[usize::from(i) % len] = Address::ZERO,
            SettingBreaker::Duplicate(i) if len > 0 => {
                let at = usize::from(i) % len;
                let a = s.signers[at];
                s.signers.insert(at + 1, a);
            }
            SettingBreaker::Descending => {
                if len == 1 {
                    let first = s.signers[0];
                    s.signers.push(if first == Address::with_last_byte(1) {
                        Address::ZERO
                    } else {
                        Address::with_last_byte(1)
                    });
                } else {
                    s.signers.sort_by(|a, b| b.cmp(a));
                }
            }
            SettingBreaker::ThresholdZero => s.threshold = 0,
            SettingBreaker::ThresholdAbove(d) => {
                s.threshold = u8::try_from(len).unwrap_or(u8::MAX).saturating_add(d.max(1));
            }
            SettingBreaker::ReadAgeZero => s.max_read_age = 0,
            SettingBreaker::Slippage(bps) => s.max_slippage_bps = bps,
            SettingBreaker::Keeper => {
                s.signers.push(abi::DUMMY_KEEPER);
                s.signers.sort();
                s.signers.dedup();
            }
            SettingBreaker::Relayed(which) => {
                s.signers.clear();
                s.threshold = 0;
                s.max_read_age = 0;
                s.max_slippage_bps = 0;
                match which % 3 {
                    0 => s.threshold = which.max(1),
                    1 => s.max_read_age = u32::from(which.max(1)),
                    _ => s.max_slippage_bps = u16::from(which.max(1)),
                }
            }
            _ => {}
        }
    }
    s
}

/// Settings the constructor must refuse: valid ones with one or two rules broken.
fn invalid_setting() -> impl Strategy<Value = AttestorSetting> {
    let breaker = select(vec![
        SettingBreaker::TooMany(9),
        SettingBreaker::TooMany(12),
        SettingBreaker::Zero(0),
        SettingBreaker::Zero(3),
        SettingBreaker::Duplicate(0),
        SettingBreaker::Duplicate(5),
        SettingBreaker::Descending,
        SettingBreaker::ThresholdZero,
        SettingBreaker::ThresholdAbove(1),
        SettingBreaker::ThresholdAbove(200),
        SettingBreaker::ReadAgeZero,
        SettingBreaker::Slippage(10_001),
        SettingBreaker::Slippage(u16::MAX),
        SettingBreaker::Keeper,
        SettingBreaker::Relayed(1),
        SettingBreaker::Relayed(2),
        SettingBreaker::Relayed(255),
    ]);
    (valid_setting(), vec(breaker, 1..=2)).prop_map(|((s, _), br)| break_setting(s, &br))
}

/// A valid token of `verdict` (0, 1, 2) wrapped in trim bytes.
fn answer_of(verdict: u8) -> impl Strategy<Value = Vec<u8>> {
    let trim = select(model::TRIM_BYTES.to_vec());
    (vec(trim.clone(), 0..=3), vec(trim, 0..=3)).prop_map(move |(pre, post)| {
        let token = model::Verdict::ALL[usize::from(verdict % 3)].token();
        let mut out = pre;
        out.extend_from_slice(token.as_bytes());
        out.extend(post);
        out
    })
}

/// An answer for a call whose honest majority says `majority`: mostly that, sometimes another
/// verdict, sometimes unparseable (short or long; long ones cut at 300 bytes to keep call data
/// small: past 64 bytes the length changes nothing but the hash and the head).
fn answer_for(majority: u8, minority: u8) -> impl Strategy<Value = Vec<u8>> {
    prop_oneof![
        8 => answer_of(majority),
        3 => answer_of(minority),
        2 => hostile_answer().prop_map(|mut raw| {
            raw.truncate(300);
            raw
        }),
    ]
}

fn tamper() -> impl Strategy<Value = Tamper> {
    prop_oneof![
        40 => Just(Tamper::None),
        7 => select(vec![
            Field::Market,
            Field::ReadBlock,
            Field::Prompt,
            Field::Bid,
            Field::Ask,
            Field::Deadline,
            Field::Answer
        ])
        .prop_map(Tamper::Signed),
        1 => Just(Tamper::OtherChain),
        1 => Just(Tamper::OtherGate),
        2 => Just(Tamper::HighS),
        1 => Just(Tamper::Compact),
        1 => select(vec![0u8, 1, 26, 29, 255]).prop_map(Tamper::V),
        1 => Just(Tamper::Long),
        1 => Just(Tamper::Empty),
        1 => vec(any::<u8>(), 65).prop_map(Tamper::Garbage),
    ]
}

fn answer_plan(majority: u8, minority: u8) -> impl Strategy<Value = AnswerPlan> {
    (
        answer_for(majority, minority),
        prop_oneof![12 => any::<u8>().prop_map(By::Attestor), 1 => any::<u8>().prop_map(By::Outsider)],
        tamper(),
    )
        .prop_map(|(raw, by, tamper)| AnswerPlan { raw, by, tamper })
}

/// A book value: 0 (empty), next to 1e6, the edges and anywhere below 2e6, sometimes any 64-bit
/// value (never so large that price × 10000 leaves 256 bits: the text does not say what the
/// limit is then).
fn book_value() -> impl Strategy<Value = U256> {
    prop_oneof![
        3 => select(vec![u(0), u(1), u(420_000), u(999_999), u(PRICE_ONE), u(PRICE_ONE + 1)]),
        4 => (1u64..PRICE_ONE).prop_map(U256::from),
        1 => (0u64..2 * PRICE_ONE).prop_map(U256::from),
        1 => any::<u64>().prop_map(U256::from),
    ]
}

/// One call for a gate of `n` attestors, threshold `k` and `max_read_age`.
fn call_plan(n: usize, k: usize, max_read_age: u32) -> impl Strategy<Value = CallPlan> {
    let age_limit = u64::from(max_read_age);
    let answers = (0u8..3, 0u8..3).prop_flat_map(move |(majority, minority)| {
        // Mostly around k (k - 1, k, k + 1) and up to n; sometimes none, sometimes all 8.
        let count = prop_oneof![
            6 => select(vec![k.saturating_sub(1), k, k + 1, n]),
            2 => 0..=n,
            1 => 0..=MAX_ATTESTORS,
        ];
        count.prop_flat_map(move |c| vec(answer_plan(majority, minority), c))
    });
    (
        any::<[u8; 20]>().prop_map(Address::from),
        prop_oneof![
            3 => select(vec![0u64, 1, 7, 1_000, 1 << 32, u64::MAX]),
            2 => any::<u64>(),
        ],
        prop_oneof![
            6 => select(vec![0u64, 1, age_limit.saturating_sub(1), age_limit, age_limit + 1]),
            1 => any::<u64>(),
        ],
        (any::<[u8; 32]>().prop_map(B256::from), book_value(), book_value()),
        (any_u256(), any::<u64>()),
        answers,
        prop_oneof![
            12 => Just(Order::Ascending),
            1 => Just(Order::Descending),
            1 => Just(Order::AsDrawn),
            1 => Just(Order::RepeatFirst),
        ],
        prop_oneof![
            20 => Just(Shape::Exact),
            1 => Just(Shape::ExtraAnswer),
            1 => Just(Shape::ExtraSignature),
            1 => Just(Shape::Nine),
        ],
        prop_oneof![
            20 => Just(Appended::Read),
            1 => Just(Appended::Nothing),
            1 => select(vec![32u8, 64, 95]).prop_map(Appended::Part),
        ],
        prop_oneof![1 => Just(true), 1 => Just(false)],
    )
        .prop_map(
            move |(
                market,
                block_number,
                age,
                (prompt_hash, best_bid, best_ask),
                (max_price_paid, deadline_sec),
                answers,
                order,
                shape,
                appended,
                honest,
            )| {
                let mut plan = CallPlan {
                    market,
                    block_number,
                    age,
                    read: AttestedRead { prompt_hash, best_bid, best_ask },
                    quote: Quote { max_price_paid, deadline_sec },
                    answers,
                    order,
                    shape,
                    appended,
                };
                if honest {
                    make_honest(&mut plan, n, age_limit);
                }
                plan
            },
        )
}

/// Half the calls are what an honest keeper sends: distinct attestors (at most `n`), each
/// signature untouched, ascending, one per answer, the read appended and within `age_limit`.
/// Only the answers themselves (agreeing or not, parseable or not) and their number then
/// decide, so reasons 0 and 22 are reached as often as 21. Without this, one attack among
/// several answers would make almost every call a 21.
fn make_honest(plan: &mut CallPlan, n: usize, age_limit: u64) {
    plan.answers.truncate(n);
    let first = plan.answers.first().map_or(0, |a| match a.by {
        By::Attestor(i) | By::Outsider(i) => usize::from(i),
    });
    for (j, a) in plan.answers.iter_mut().enumerate() {
        // Distinct indices modulo n: a rotation of 0..count.
        a.by = By::Attestor(u8::try_from((first + j) % n.max(1)).unwrap_or(0));
        a.tamper = Tamper::None;
    }
    plan.age = plan.age.min(age_limit);
    plan.order = Order::Ascending;
    plan.shape = Shape::Exact;
    plan.appended = Appended::Read;
}

/// A whole attested case: mostly a valid setting with up to 12 calls, sometimes a setting the
/// constructor must refuse (no call runs then). Bounds and lists come from the relayed
/// strategies' valid configurations.
pub fn attested_case() -> impl Strategy<Value = AttestedCase> {
    let valid =
        (super::valid_config(), valid_setting()).prop_flat_map(|(config, (setting, keys))| {
            let n = keys.len();
            let k = usize::from(setting.threshold);
            vec(call_plan(n, k, setting.max_read_age), 1..=MAX_CALLS_PER_GATE).prop_map(
                move |calls| AttestedCase {
                    config: config.clone(),
                    setting: setting.clone(),
                    keys: keys.clone(),
                    calls,
                },
            )
        });
    let invalid = (super::valid_config(), invalid_setting()).prop_map(|(config, setting)| {
        AttestedCase { config, setting, keys: Vec::new(), calls: Vec::new() }
    });
    prop_oneof![12 => valid, 1 => invalid]
}

/// Signs `plan` for the gate at `gate` on chain `chain_id`, with the set's keys `keys` (pool
/// indices): the call exactly as the keeper would send it, attacks included.
pub fn materialize(keys: &[usize], plan: &CallPlan, chain_id: u64, gate: Address) -> Materialized {
    let pool = key_pool();
    let outsiders: Vec<usize> = (0..pool.len()).filter(|i| !keys.contains(i)).collect();
    let read_block = plan.read_block();
    let mut signed: Vec<(Address, Vec<u8>, Vec<u8>, String)> = Vec::new();
    for a in &plan.answers {
        let key = match a.by {
            By::Attestor(i) if !keys.is_empty() => keys[usize::from(i) % keys.len()],
            By::Outsider(i) if !outsiders.is_empty() => outsiders[usize::from(i) % outsiders.len()],
            _ => 0,
        };
        let Some((signer, address)) = pool.get(key) else { continue };
        let mut message = Answer {
            market: plan.market,
            readBlock: read_block,
            promptHash: plan.read.prompt_hash,
            answerHash: keccak256(&a.raw),
            bestBid: plan.read.best_bid,
            bestAsk: plan.read.best_ask,
            deadline: plan.quote.deadline_sec,
        };
        let (mut chain, mut domain_gate) = (chain_id, gate);
        match &a.tamper {
            Tamper::Signed(Field::Market) => message.market.0[19] ^= 1,
            Tamper::Signed(Field::ReadBlock) => message.readBlock = read_block.wrapping_add(1),
            Tamper::Signed(Field::Prompt) => message.promptHash.0[0] ^= 0x80,
            Tamper::Signed(Field::Bid) => message.bestBid = plan.read.best_bid.wrapping_add(u(1)),
            Tamper::Signed(Field::Ask) => message.bestAsk = plan.read.best_ask.wrapping_add(u(1)),
            Tamper::Signed(Field::Deadline) => message.deadline ^= 1,
            Tamper::Signed(Field::Answer) => {
                let mut other = a.raw.clone();
                other.push(b'!');
                message.answerHash = keccak256(&other);
            }
            Tamper::OtherChain => chain = chain_id.wrapping_add(1),
            Tamper::OtherGate => domain_gate.0[19] ^= 1,
            _ => {}
        }
        let mut sig = sign(signer, chain, domain_gate, &message);
        match &a.tamper {
            Tamper::HighS if sig.len() == 65 => {
                let s = U256::from_be_slice(&sig[32..64]);
                let twin = crate::attested::SECP256K1_N - s;
                sig[32..64].copy_from_slice(&twin.to_be_bytes::<32>());
                sig[64] = if sig[64] == 27 { 28 } else { 27 };
            }
            Tamper::Compact if sig.len() == 65 => {
                let parity = sig[64] == 28;
                sig.truncate(64);
                if parity {
                    sig[32] |= 0x80;
                }
            }
            Tamper::V(v) if sig.len() == 65 => sig[64] = *v,
            Tamper::Long => sig.push(0),
            Tamper::Empty => sig.clear(),
            Tamper::Garbage(bytes) => sig.clone_from(bytes),
            _ => {}
        }
        let who = match a.by {
            By::Attestor(_) => format!("attestor {address}"),
            By::Outsider(_) => format!("outsider {address} (not an attestor)"),
        };
        let note = format!(
            "{:?} signed by {who}, {:?}",
            String::from_utf8_lossy(&a.raw[..a.raw.len().min(72)]),
            a.tamper
        );
        signed.push((*address, a.raw.clone(), sig, note));
    }
    match plan.order {
        Order::Ascending => signed.sort_by_key(|s| s.0),
        Order::Descending => signed.sort_by_key(|s| std::cmp::Reverse(s.0)),
        Order::AsDrawn => {}
        Order::RepeatFirst => {
            signed.sort_by_key(|s| s.0);
            if let Some(first) = signed.first().cloned() {
                signed.insert(1, first);
            }
        }
    }
    let mut notes: Vec<String> = signed.iter().map(|s| s.3.clone()).collect();
    let mut raws: Vec<Vec<u8>> = signed.iter().map(|s| s.1.clone()).collect();
    let mut sigs: Vec<Vec<u8>> = signed.into_iter().map(|s| s.2).collect();
    match plan.shape {
        Shape::Exact => {}
        Shape::ExtraAnswer => {
            raws.push(b"BUY_UP".to_vec());
            notes.push("one answer more than signatures".into());
        }
        Shape::ExtraSignature => {
            sigs.push(vec![0x11; 65]);
            notes.push("one signature more than answers".into());
        }
        Shape::Nine => {
            while raws.len() < MAX_ATTESTORS + 1 {
                raws.push(raws.first().cloned().unwrap_or_else(|| b"ABSTAIN".to_vec()));
                sigs.push(sigs.first().cloned().unwrap_or_else(|| vec![0x22; 65]));
            }
            notes.push("padded to nine answers and nine signatures".into());
        }
    }
    let read = plan.read.encode();
    let appended = match plan.appended {
        Appended::Read => read.to_vec(),
        Appended::Nothing => Vec::new(),
        Appended::Part(n) => read[..usize::from(n).min(read.len())].to_vec(),
    };
    Materialized {
        call: TallyCall { market: plan.market, read_block, raws, sigs, quote: plan.quote },
        appended,
        notes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attested;
    use proptest::{strategy::ValueTree, test_runner::TestRunner};

    #[test]
    fn the_pool_has_sixteen_distinct_keys() {
        let pool = key_pool();
        assert_eq!(pool.len(), KEY_POOL);
        let mut addresses: Vec<Address> = pool.iter().map(|p| p.1).collect();
        addresses.sort();
        addresses.dedup();
        assert_eq!(addresses.len(), KEY_POOL);
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 300, failure_persistence: None, ..ProptestConfig::default() })]

        /// Every drawn setting is either accepted or refused as the strategy meant.
        #[test]
        fn settings_are_valid_or_broken_as_drawn(case in attested_case()) {
            // Breakers can undo each other down to a relayed setting, which deploys too.
            let errors = attested::constructor_errors(&case.config, &case.setting);
            let deploys = !case.keys.is_empty() || case.setting == AttestorSetting::relayed();
            prop_assert_eq!(errors.is_empty(), deploys, "{:?}", case.setting);
        }
    }

    /// Over a fixed run, the strategies reach every judgment: 0 with each verdict, 21, 22 and
    /// both reverts.
    #[test]
    fn strategies_reach_every_judgment() {
        let mut runner = TestRunner::deterministic();
        let (chain, gate) = (31_337, Address::repeat_byte(0x9a));
        let mut seen = std::collections::BTreeMap::<String, u32>::new();
        for _ in 0..150 {
            let Ok(tree) = attested_case().new_tree(&mut runner) else { continue };
            let case = tree.current();
            for plan in &case.calls {
                let m = materialize(&case.keys, plan, chain, gate);
                let env =
                    attested::TallyEnv { chain_id: chain, gate, block_number: plan.block_number };
                let key = match attested::tally(&case.setting, &env, &m.call, &m.appended) {
                    Ok(j) if j.reason == 0 => format!("0/{}", j.verdict),
                    Ok(j) => j.reason.to_string(),
                    Err(e) => format!("{:?}", std::mem::discriminant(&e[0])),
                };
                *seen.entry(key).or_default() += 1;
            }
        }
        println!("judgments: {seen:?}");
        for want in ["0/0", "0/1", "0/2", "21", "22"] {
            assert!(seen.get(want).is_some_and(|n| *n > 0), "{want} never reached: {seen:?}");
        }
        assert!(seen.len() >= 7, "both reverts expected too: {seen:?}");
    }
}
