//! Hand-worked known answers for the attested model. Every expected value is derived from the
//! specification (issue 35, docs/attested.md, the interfaces' NatSpec) in the comment next to
//! it; where a value can only be computed (a keccak, a signature), it is checked against an
//! independent implementation (alloy's EIP-712 derivation, well-known constants) instead.

use super::*;
use crate::strategies::attested::{sign, Answer};
use alloy::{
    primitives::{address, b256, hex},
    signers::{local::PrivateKeySigner, SignerSync},
};

fn u(v: u64) -> U256 {
    U256::from(v)
}

/// Private keys 1, 2 and 3: their addresses are the well-known
/// 0x7E5F4552091A69125d5DfCb7b8C2659029395Bdf, 0x2B5AD5c4795c026514f8317c7a215E218DcCD6cF and
/// 0x6813Eb9362372EEF6200f3b1dbC3f819671cBA69.
fn key(i: u8) -> PrivateKeySigner {
    PrivateKeySigner::from_bytes(&B256::with_last_byte(i)).expect("a valid key")
}

const K1: Address = address!("7E5F4552091A69125d5DfCb7b8C2659029395Bdf");
const K2: Address = address!("2B5AD5c4795c026514f8317c7a215E218DcCD6cF");
const K3: Address = address!("6813Eb9362372EEF6200f3b1dbC3f819671cBA69");

const CHAIN: u64 = 31_337;
const GATE: Address = address!("00000000000000000000000000000000000000aa");
const MARKET: Address = address!("00000000000000000000000000000000000000bb");

/// Ascending by address: key 2 (0x2B..), key 3 (0x68..), key 1 (0x7E..); k = 2 of 3, reads up
/// to 5 blocks old, 200 bps (2 %) of slippage.
fn setting() -> AttestorSetting {
    AttestorSetting {
        signers: vec![K2, K3, K1],
        threshold: 2,
        max_read_age: 5,
        max_slippage_bps: 200,
    }
}

/// The docs' example book: bid 0.40, ask 0.42.
fn read() -> AttestedRead {
    AttestedRead {
        prompt_hash: B256::repeat_byte(0x77),
        best_bid: u(400_000),
        best_ask: u(420_000),
    }
}

const READ_BLOCK: u64 = 100;

fn quote() -> Quote {
    Quote { max_price_paid: u(1), deadline_sec: 1_700_000_060 }
}

fn env(block_number: u64) -> TallyEnv {
    TallyEnv { chain_id: CHAIN, gate: GATE, block_number }
}

/// The message attestor `i` signs for `raw` in this file's call.
fn message(raw: &str) -> Answer {
    Answer {
        market: MARKET,
        readBlock: READ_BLOCK,
        promptHash: read().prompt_hash,
        answerHash: keccak256(raw),
        bestBid: read().best_bid,
        bestAsk: read().best_ask,
        deadline: quote().deadline_sec,
    }
}

fn signed(i: u8, raw: &str) -> (Vec<u8>, Vec<u8>) {
    (raw.as_bytes().to_vec(), sign(&key(i), CHAIN, GATE, &message(raw)))
}

fn call(answers: &[(Vec<u8>, Vec<u8>)]) -> TallyCall {
    TallyCall {
        market: MARKET,
        read_block: READ_BLOCK,
        raws: answers.iter().map(|a| a.0.clone()).collect(),
        sigs: answers.iter().map(|a| a.1.clone()).collect(),
        quote: quote(),
    }
}

fn judge(answers: &[(Vec<u8>, Vec<u8>)]) -> Judgment {
    judge_at(answers, READ_BLOCK)
}

fn judge_at(answers: &[(Vec<u8>, Vec<u8>)], block: u64) -> Judgment {
    tally(&setting(), &env(block), &call(answers), &read().encode()).expect("judged")
}

#[test]
fn the_domain_and_answer_digest_match_eip712_as_alloy_derives_it() {
    // EIP-712's domain type hash is the well-known
    // 0x8b73c3c69bb8fe3d512ecc4cf759cc79239f7b179b0ffacaa9a75d522b39400f.
    assert_eq!(
        keccak256(DOMAIN_TYPE),
        b256!("8b73c3c69bb8fe3d512ecc4cf759cc79239f7b179b0ffacaa9a75d522b39400f")
    );
    // The hand-written digest equals alloy's derivation from the `sol!` struct and the
    // `eip712_domain!` (name "RiskGate", version "2", chain 31337, the gate).
    let domain = alloy::sol_types::eip712_domain! {
        name: "RiskGate", version: "2", chain_id: CHAIN, verifying_contract: GATE,
    };
    assert_eq!(domain_separator(CHAIN, GATE), domain.separator());
    let m = message("BUY_UP");
    use alloy::sol_types::SolStruct;
    assert_eq!(Answer::eip712_root_type(), ANSWER_TYPE);
    let mine = AnswerMessage {
        market: MARKET,
        read_block: READ_BLOCK,
        prompt_hash: m.promptHash,
        answer_hash: m.answerHash,
        best_bid: m.bestBid,
        best_ask: m.bestAsk,
        deadline: m.deadline,
    };
    assert_eq!(answer_struct_hash(&mine), m.eip712_hash_struct());
    assert_eq!(answer_digest(CHAIN, GATE, &mine), m.eip712_signing_hash(&domain));
    // Another chain or gate is another domain, so another digest.
    assert_ne!(answer_digest(CHAIN + 1, GATE, &mine), answer_digest(CHAIN, GATE, &mine));
    assert_ne!(answer_digest(CHAIN, MARKET, &mine), answer_digest(CHAIN, GATE, &mine));
}

#[test]
fn signatures_recover_only_in_their_one_canonical_form() {
    assert_eq!((key(1).address(), key(2).address(), key(3).address()), (K1, K2, K3));
    let digest = B256::repeat_byte(0x42);
    let sig = key(1).sign_hash_sync(&digest).expect("signs").as_bytes();
    assert!(sig[64] == 27 || sig[64] == 28);
    assert_eq!(recover(&sig, &digest), Some(K1));
    // Over another digest it recovers someone else (never key 1).
    assert_ne!(recover(&sig, &B256::repeat_byte(0x43)), Some(K1));
    // The malleable twin: s' = n - s (high), v flipped. Valid for ecrecover, refused here.
    let mut twin = sig;
    let s = U256::from_be_slice(&sig[32..64]);
    twin[32..64].copy_from_slice(&(SECP256K1_N - s).to_be_bytes::<32>());
    twin[64] = if sig[64] == 27 { 28 } else { 27 };
    assert_eq!(recover(&twin, &digest), None);
    // 64 bytes (ERC-2098 compact or cut), 66 bytes, v 0/1/29, r or s zero: nothing.
    assert_eq!(recover(&sig[..64], &digest), None);
    assert_eq!(recover(&[&sig[..], &[0u8]].concat(), &digest), None);
    for v in [0u8, 1, 29] {
        let mut bad = sig;
        bad[64] = v;
        assert_eq!(recover(&bad, &digest), None, "v = {v}");
    }
    let mut zero_r = sig;
    zero_r[..32].fill(0);
    assert_eq!(recover(&zero_r, &digest), None);
    let mut zero_s = sig;
    zero_s[32..64].fill(0);
    assert_eq!(recover(&zero_s, &digest), None);
    assert_eq!(recover(&[], &digest), None);
}

#[test]
fn two_of_three_agreeing_buy_at_the_attested_ask_plus_the_slippage() {
    // Keys 2 and 3 (ascending) say BUY_UP: 2 >= k = 2, one verdict reached: reason 0, BUY_UP.
    // The limit: the ask 420_000 plus 200 bps of it, 420_000 * 200 / 10_000 = 8_400: 428_400
    // (the docs' "0.4284").
    let j = judge(&[signed(2, "BUY_UP"), signed(3, "BUY_UP\n")]);
    assert_eq!((j.reason, j.verdict, j.limit), (0, 1, u(428_400)));
    assert_eq!(j.prompt_hash, read().prompt_hash);
    // The answer shown is the first giving the verdict: "BUY_UP", 6 bytes.
    assert_eq!((j.head.as_slice(), j.length, j.hash), (&b"BUY_UP"[..], 6, keccak256("BUY_UP")));
    // BUY_DOWN pays 1e6 - bid = 600_000; plus 2 %: 612_000.
    let j = judge(&[signed(3, "BUY_DOWN"), signed(1, "'BUY_DOWN'")]);
    assert_eq!((j.reason, j.verdict, j.limit), (0, 2, u(612_000)));
    // Two ABSTAIN: reason 0 with verdict ABSTAIN, nothing bought; its limit, which nothing
    // reads, is BUY_DOWN's (docs/attested.md, item 4): 612_000.
    let j = judge(&[signed(2, "ABSTAIN"), signed(1, "ABSTAIN")]);
    assert_eq!((j.reason, j.verdict, j.limit), (0, 0, u(612_000)));
    // All three, one dissenting first: still BUY_UP, and the raw fields show the first BUY_UP,
    // the second answer sent.
    let j = judge(&[signed(2, "BUY_DOWN"), signed(3, " BUY_UP"), signed(1, "BUY_UP")]);
    assert_eq!((j.reason, j.verdict, j.head.as_slice()), (0, 1, &b" BUY_UP"[..]));
}

#[test]
fn the_vote_packs_counts_then_signer_length_hash_and_head_per_answer() {
    // Two ABSTAIN answers: the docs' "130 bytes": 4 counts + 2 x (20 + 4 + 32 + 7).
    let j = judge(&[signed(2, "ABSTAIN"), signed(3, "ABSTAIN")]);
    assert_eq!(j.vote.len(), 130);
    assert_eq!(&j.vote[..4], &[2, 0, 0, 0]);
    assert_eq!(&j.vote[4..24], K2.as_slice());
    assert_eq!(&j.vote[24..28], &[0, 0, 0, 7]);
    assert_eq!(&j.vote[28..60], keccak256("ABSTAIN").as_slice());
    assert_eq!(&j.vote[60..67], b"ABSTAIN");
    assert_eq!(&j.vote[67..87], K3.as_slice());
    // An unparseable 100-byte answer is counted in the fourth byte and listed with its head
    // cut at 64 bytes; a signature that does not recover lists signer 0.
    let long = "x".repeat(100);
    let (raw, mut sig) = signed(1, &long);
    sig[64] = 0;
    let j = judge(&[signed(2, "BUY_UP"), (raw, sig)]);
    assert_eq!(&j.vote[..4], &[0, 1, 0, 1]);
    let second = 4 + 20 + 4 + 32 + 6;
    assert_eq!(&j.vote[second..second + 20], Address::ZERO.as_slice());
    assert_eq!(&j.vote[second + 20..second + 24], &[0, 0, 0, 100]);
    assert_eq!(j.vote.len(), second + 20 + 4 + 32 + 64);
    assert_eq!(j.reason, REASON_NOT_ATTESTED);
}

#[test]
fn reason_21_for_every_way_an_answer_is_not_attested() {
    let not_attested = |j: Judgment| {
        assert_eq!((j.reason, j.verdict, j.limit), (21, VERDICT_INVALID, U256::ZERO), "{j:?}");
        j
    };
    // One signature where k = 2.
    not_attested(judge(&[signed(2, "BUY_UP")]));
    // Signers descending (3 then 2), or one twice.
    not_attested(judge(&[signed(3, "BUY_UP"), signed(2, "BUY_UP")]));
    not_attested(judge(&[signed(2, "BUY_UP"), signed(2, "BUY_UP")]));
    // A forger (key 4 is not in the set), even next to two honest answers.
    not_attested(judge(&[signed(2, "BUY_UP"), signed(3, "BUY_UP"), signed(4, "BUY_UP")]));
    // The keeper changed an answer after signing: the signature recovers someone else.
    let (_, sig) = signed(3, "BUY_UP");
    let j = not_attested(judge(&[signed(2, "BUY_DOWN"), (b"BUY_DOWN".to_vec(), sig)]));
    // On 21 the raw fields show the first answer sent.
    assert_eq!(j.head, b"BUY_DOWN");
    // Signed for another chain.
    let other = sign(&key(3), CHAIN + 1, GATE, &message("BUY_UP"));
    not_attested(judge(&[signed(2, "BUY_UP"), (b"BUY_UP".to_vec(), other)]));
    // The read is too old: block 106 is 6 > 5 blocks after the read; block 105 is not.
    let honest = [signed(2, "BUY_UP"), signed(3, "BUY_UP")];
    not_attested(judge_at(&honest, READ_BLOCK + 6));
    assert_eq!(judge_at(&honest, READ_BLOCK + 5).reason, 0);
    assert_eq!(judge_at(&honest, READ_BLOCK).reason, 0);
    // The keeper appends another book than the attestors signed.
    let tampered = AttestedRead { best_ask: u(420_001), ..read() };
    let j =
        tally(&setting(), &env(READ_BLOCK), &call(&honest), &tampered.encode()).expect("judged");
    not_attested(j);
    // No answer at all: 21, and the answer shown is the empty one: keccak256("") is the
    // well-known 0xc5d2...a470.
    let j = not_attested(judge(&[]));
    assert_eq!((j.head.len(), j.length), (0, 0));
    assert_eq!(j.hash, b256!("c5d2460186f7233c927e7db2dcc703c0e500b653ca82273b7bfad8045d85a470"));
    assert_eq!(j.vote, vec![0, 0, 0, 0]);
}

#[test]
fn reason_22_when_no_verdict_or_two_reach_k() {
    // 2 of 3: one each of BUY_UP, BUY_DOWN, ABSTAIN: no verdict has 2.
    let j = judge(&[signed(2, "BUY_UP"), signed(3, "BUY_DOWN"), signed(1, "ABSTAIN")]);
    assert_eq!((j.reason, j.verdict, j.limit), (22, VERDICT_INVALID, U256::ZERO));
    assert_eq!(&j.vote[..4], &[1, 1, 1, 0]);
    assert_eq!(j.head, b"BUY_UP");
    // Two unparseable answers agree on nothing: never a verdict.
    let j = judge(&[signed(2, "buy_up"), signed(3, "buy_up")]);
    assert_eq!((j.reason, &j.vote[..4]), (22, &[0u8, 0, 0, 2][..]));
    // k = 1 of 3 (2k <= n): BUY_UP and BUY_DOWN both reach 1: two verdicts, 22.
    let one = AttestorSetting { threshold: 1, ..setting() };
    let c = call(&[signed(2, "BUY_UP"), signed(3, "BUY_DOWN")]);
    let j = tally(&one, &env(READ_BLOCK), &c, &read().encode()).expect("judged");
    assert_eq!(j.reason, 22);
    // k = 1, one answer: it decides alone.
    let c = call(&[signed(3, "BUY_DOWN")]);
    let j = tally(&one, &env(READ_BLOCK), &c, &read().encode()).expect("judged");
    assert_eq!((j.reason, j.verdict, j.limit), (0, 2, u(612_000)));
}

#[test]
fn the_limit_is_the_attested_price_plus_its_slippage_rounded_down() {
    let r = |bid: u64, ask: u64| AttestedRead { best_bid: u(bid), best_ask: u(ask), ..read() };
    // An empty side allows nothing: ask 0 for BUY_UP, bid 0 for BUY_DOWN and ABSTAIN.
    assert_eq!(attested_limit(Verdict::BuyUp, &r(400_000, 0), 200), U256::ZERO);
    assert_eq!(attested_limit(Verdict::BuyDown, &r(0, 420_000), 200), U256::ZERO);
    assert_eq!(attested_limit(Verdict::Abstain, &r(0, 420_000), 200), U256::ZERO);
    // A bid at or above 1e6 leaves BUY_DOWN a price of 0, so 0.
    assert_eq!(attested_limit(Verdict::BuyDown, &r(1_000_000, 1), 10_000), U256::ZERO);
    assert_eq!(attested_limit(Verdict::BuyDown, &r(1_000_001, 1), 10_000), U256::ZERO);
    // 0 bps: the price itself; 10_000 bps: twice it.
    assert_eq!(attested_limit(Verdict::BuyUp, &r(0, 420_000), 0), u(420_000));
    assert_eq!(attested_limit(Verdict::BuyUp, &r(0, 420_000), 10_000), u(840_000));
    // Rounded down: 1 + 1 * 9_999 / 10_000 = 1 + 0; 333_333 * 50 / 10_000 = 1_666.665 -> 1_666.
    assert_eq!(attested_limit(Verdict::BuyUp, &r(0, 1), 9_999), u(1));
    assert_eq!(attested_limit(Verdict::BuyUp, &r(0, 333_333), 50), u(334_999));
    // BUY_DOWN at bid 999_999: price 1, 1 + 0.
    assert_eq!(attested_limit(Verdict::BuyDown, &r(999_999, 0), 10_000), u(2));
    // An ask of 1e6 or more is taken as it stands, without slippage (docs/attested.md, item 4),
    // up to the largest ask k attestors could sign; just below 1e6 the slippage applies:
    // 999_999 + 999_999 * 200 / 10_000 = 999_999 + 19_999 = 1_019_998.
    assert_eq!(attested_limit(Verdict::BuyUp, &r(0, 1_000_000), 200), u(1_000_000));
    assert_eq!(attested_limit(Verdict::BuyUp, &r(0, 2_000_000), 100), u(2_000_000));
    let huge = AttestedRead { best_ask: U256::MAX, ..r(0, 0) };
    assert_eq!(attested_limit(Verdict::BuyUp, &huge, 10_000), U256::MAX);
    assert_eq!(attested_limit(Verdict::BuyUp, &r(0, 999_999), 200), u(1_019_998));
    // ABSTAIN is priced as BUY_DOWN: bid 1 gives 999_999 + 999_999 * 100 / 10_000 = 1_009_998.
    assert_eq!(attested_limit(Verdict::Abstain, &r(1, 1), 100), u(1_009_998));
}

#[test]
fn wrong_shapes_and_a_missing_read_revert_with_their_values() {
    let one = [signed(2, "BUY_UP")];
    let mut c = call(&one);
    c.sigs.clear();
    assert_eq!(
        tally(&setting(), &env(READ_BLOCK), &c, &read().encode()),
        Err(vec![TallyRevert::AttestationShape { answers: 1, signatures: 0 }])
    );
    let nine: Vec<_> = (0..9).map(|_| signed(2, "BUY_UP")).collect();
    assert_eq!(
        tally(&setting(), &env(READ_BLOCK), &call(&nine), &read().encode()),
        Err(vec![TallyRevert::AttestationShape { answers: 9, signatures: 9 }])
    );
    // The arguments of one 6-byte answer and one 65-byte signature: the selector (4), the head
    // (6 words: 192), the answers (length, one offset, the string's length and one word: 128),
    // the signatures (length, one offset, the length and three words: 192): 516.
    let c = call(&one);
    assert_eq!(arguments_end(&c), 516);
    assert_eq!(crate::abi::tally_calldata(&c, &[]).len(), 516);
    for part in [0usize, 32, 95] {
        assert_eq!(
            tally(&setting(), &env(READ_BLOCK), &c, &read().encode()[..part]),
            Err(vec![TallyRevert::AttestedReadMissing {
                arguments_end: 516,
                call_end: 516 + part
            }])
        );
    }
    // Both at once: either is the right refusal.
    let mut c = call(&one);
    c.raws.push(b"x".to_vec());
    assert_eq!(tally(&setting(), &env(READ_BLOCK), &c, &[]).map_err(|e| e.len()), Err(2));
}

#[test]
fn the_setting_is_validated_with_its_values() {
    use ConstructorError as E;
    let keeper = Address::repeat_byte(0x4b);
    assert!(setting_errors(&AttestorSetting::relayed(), keeper).is_empty());
    assert!(setting_errors(&setting(), keeper).is_empty());
    // A relayed gate naming a setting.
    let relayed = AttestorSetting { max_read_age: 5, ..AttestorSetting::relayed() };
    assert_eq!(
        setting_errors(&relayed, keeper),
        vec![E::RelayedGateSettings { threshold: 0, max_read_age: 5, max_slippage_bps: 0 }]
    );
    // k = 0 and k = 4 of 3.
    for threshold in [0u8, 4] {
        let s = AttestorSetting { threshold, ..setting() };
        assert_eq!(
            setting_errors(&s, keeper),
            vec![E::ThresholdOutOfRange { threshold, attestors: 3 }]
        );
    }
    let s = AttestorSetting { max_read_age: 0, max_slippage_bps: 10_001, ..setting() };
    assert_eq!(
        setting_errors(&s, keeper),
        vec![
            E::MaxReadAgeZero,
            E::MaxSlippageBpsOutOfRange { max_slippage_bps: 10_001, max: 10_000 }
        ]
    );
    let s = AttestorSetting { signers: vec![K3, K2, Address::ZERO], threshold: 1, ..setting() };
    assert_eq!(
        setting_errors(&s, keeper),
        vec![
            E::AttestorsNotAscending { index: 1, previous: K3, current: K2 },
            E::AttestorZero { index: 2 },
            E::AttestorsNotAscending { index: 2, previous: K2, current: Address::ZERO },
        ]
    );
    let s =
        AttestorSetting { signers: (1..=9).map(Address::with_last_byte).collect(), ..setting() };
    assert_eq!(setting_errors(&s, keeper), vec![E::TooManyAttestors { count: 9, max: 8 }]);
    let s = AttestorSetting { signers: vec![K2, keeper], threshold: 1, ..setting() };
    assert_eq!(setting_errors(&s, keeper), vec![E::KeeperIsAttestor { keeper }]);
    // The read round-trips through its three words.
    assert_eq!(AttestedRead::decode(&read().encode()), Some(read()));
    assert_eq!(hex::encode(&read().encode()[32..64]), format!("{:064x}", 400_000));
}
