//! Attested batches (`submitAttestedVerdicts`, issue 37) against the reference: random batches
//! of `submitAttested` calls, signed by three test attestors (k = 2) with gate-sim's own keys
//! and alloy's EIP-712 signing, sent to the compiled attested gate in revm as one transaction
//! each and applied by the reference world element by element (docs/attested.md, "What
//! decides": the set's judgment, the replay rule, the quote tightened to the attested price).
//! The compiled side holds every element to its shadow ledger as it holds a relayed decision
//! (no disagreement may be reported); every row, the vote and answer each `Decision` shows, the
//! gate's state and every position must equal the reference's, and a batch refused whole must
//! be refused with revert data the reference allows and leave everything as it was.

#[macro_use]
mod common;

use alloy::primitives::{Address, B256, U256};
use common::batches::{
    answer, book, check_world_states, comparable, config, markets, Book, Raw, BLOCK, MARKETS, NOW,
};
use gate_sim::{
    adversary,
    artifact::GateArtifact,
    attested::{self, AttestedRead, AttestorSetting, TallyEnv},
    model::{self, Quote, PRICE_ONE},
    strategies::attested::{
        key_pool, materialize, AnswerPlan, Appended, By, CallPlan, Field, Order as AnswerOrder,
        Shape, Tamper,
    },
    world::{self, AttestedItem, AttestedRefusal, AttestedRow, EvmWorld, ReferenceWorld, World},
};
use proptest::{collection::vec, prelude::*, sample::select, test_runner::TestCaseError};
use std::collections::BTreeMap;

/// The set: three attestors, two must agree, reads at most five blocks old, 2% of slippage.
const ATTESTORS: usize = 3;
const THRESHOLD: u8 = 2;
const MAX_READ_AGE: u32 = 5;
const SLIPPAGE_BPS: u16 = 200;

/// The setting and the pool index of each signer, in ascending address order.
fn setting() -> (AttestorSetting, Vec<usize>) {
    let pool = key_pool();
    let mut keys: Vec<usize> = (0..ATTESTORS).collect();
    keys.sort_by_key(|&i| pool[i].1);
    let setting = AttestorSetting {
        signers: keys.iter().map(|&i| pool[i].1).collect(),
        threshold: THRESHOLD,
        max_read_age: MAX_READ_AGE,
        max_slippage_bps: SLIPPAGE_BPS,
    };
    (setting, keys)
}

/// How one answer's signature is made.
#[derive(Clone, Copy, Debug)]
enum Signing {
    Honest,
    /// By a key outside the set.
    Outsider,
    /// The keeper changed the answer after it was signed.
    AnswerChanged,
    /// The malleable twin of an honest signature.
    HighS,
}

#[derive(Clone, Debug)]
struct AnswerSpec {
    attestor: u8,
    raw: Raw,
    signing: Signing,
}

/// The book the attestors signed, against the live one the keeper read before the batch.
#[derive(Clone, Copy, Debug)]
enum ReadKind {
    Live,
    /// Bid and ask moved by these many ticks (the live book then differs from the attested).
    Shifted(i64, i64),
}

/// The keeper's quote, from the attested book.
#[derive(Clone, Copy, Debug)]
enum QuoteKind {
    /// `keeper_quote` with this slippage (60 s to live).
    Keeper(u64),
    /// As loose as the keeper can make it: the attested limit alone bounds the price.
    Loose,
    /// A deadline already past (16).
    Stale,
}

/// What is wrong with the element's call, if anything (each refuses the whole batch).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fault {
    None,
    /// No `AttestedRead` after the arguments.
    NoRead,
    /// Half of it.
    HalfRead,
    /// One signature more than answers.
    ExtraSignature,
}

#[derive(Clone, Debug)]
struct ElementSpec {
    market: usize,
    /// `readBlock = block - back`; above [`MAX_READ_AGE`] the read is stale (21).
    back: u64,
    answers: Vec<AnswerSpec>,
    descending: bool,
    read: ReadKind,
    prompt: u8,
    quote: QuoteKind,
    fault: Fault,
    /// Name the market and read block of this earlier element of the batch instead.
    again: Option<usize>,
}

#[derive(Clone, Debug)]
struct BatchSpec {
    /// Seconds the clock moves before the batch (0: the same block as the previous one).
    advance_secs: u64,
    elements: Vec<ElementSpec>,
    /// `(element, blocks ahead)`: that element is read at a block not mined yet.
    future: Option<(usize, u64)>,
}

#[derive(Clone, Debug)]
struct Case {
    books: Vec<Book>,
    batches: Vec<BatchSpec>,
}

/// Answers mostly agreeing: each attestor that answers gives the element's leaning token (with
/// the parser's trim bytes around it now and then) three times in four, else anything
/// [`answer`] draws (another token, garbage, over 64 bytes).
fn answers() -> impl Strategy<Value = Vec<AnswerSpec>> {
    let lean = select(vec!["BUY_UP", "BUY_UP", "BUY_DOWN", "ABSTAIN"]);
    let signing = prop_oneof![
        24 => Just(Signing::Honest),
        1 => Just(Signing::Outsider),
        1 => Just(Signing::AnswerChanged),
        1 => Just(Signing::HighS),
    ];
    let count = prop_oneof![1 => Just(0usize), 2 => Just(1), 6 => Just(2), 8 => Just(3)];
    let one = (prop_oneof![3 => Just(None), 1 => answer().prop_map(Some)], signing);
    (lean, count, any::<u8>(), vec(one, ATTESTORS)).prop_map(|(lean, count, rotation, drawn)| {
        drawn
            .into_iter()
            .take(count)
            .enumerate()
            .map(|(i, (other, signing))| AnswerSpec {
                // Distinct attestors: a rotation of 0..count.
                attestor: ((usize::from(rotation) + i) % ATTESTORS) as u8,
                raw: other.unwrap_or_else(|| Raw(lean.as_bytes().to_vec())),
                signing,
            })
            .collect()
    })
}

fn element() -> impl Strategy<Value = ElementSpec> {
    let read = prop_oneof![
        4 => Just(ReadKind::Live),
        1 => (-4i64..=4, -4i64..=4).prop_map(|(b, a)| ReadKind::Shifted(b, a)),
    ];
    let quote = prop_oneof![
        4 => (0u64..300).prop_map(QuoteKind::Keeper),
        2 => Just(QuoteKind::Loose),
        1 => Just(QuoteKind::Stale),
    ];
    let fault = prop_oneof![
        60 => Just(Fault::None),
        1 => Just(Fault::NoRead),
        1 => Just(Fault::HalfRead),
        1 => Just(Fault::ExtraSignature),
    ];
    let again = prop_oneof![5 => Just(None), 1 => (0usize..8).prop_map(Some)];
    (
        select(vec![0usize, 0, 0, 1, 1, 2, 3, 4]),
        prop_oneof![8 => 0u64..=3, 1 => 4u64..=7],
        answers(),
        prop_oneof![12 => Just(false), 1 => Just(true)],
        read,
        any::<u8>(),
        quote,
        fault,
        again,
    )
        .prop_map(|(market, back, answers, descending, read, prompt, quote, fault, again)| {
            ElementSpec { market, back, answers, descending, read, prompt, quote, fault, again }
        })
}

fn batch() -> impl Strategy<Value = BatchSpec> {
    let future = prop_oneof![9 => Just(None), 1 => (0usize..8, 1u64..=3).prop_map(Some)];
    (prop_oneof![1 => Just(0u64), 2 => 1u64..=200], vec(element(), 1..=8), future)
        .prop_map(|(advance_secs, elements, future)| BatchSpec { advance_secs, elements, future })
}

fn case() -> impl Strategy<Value = Case> {
    (vec(book(), MARKETS.len()), vec(batch(), 1..=5))
        .prop_map(|(books, batches)| Case { books, batches })
}

/// Both worlds: the compiled attested gate in revm and the reference, their attestors signing
/// for the compiled chain's id, with the markets of [`MARKETS`] at block [`BLOCK`].
struct Worlds {
    evm: EvmWorld,
    reference: ReferenceWorld,
    /// The markets' addresses, the same in both worlds.
    markets: Vec<Address>,
    chain_id: u64,
    setting: AttestorSetting,
    keys: Vec<usize>,
}

fn worlds(artifact: &GateArtifact, books: &[Book]) -> Worlds {
    let funds = adversary::default_initial_collateral();
    let (setting, keys) = setting();
    let mut evm =
        EvmWorld::deploy_with(artifact, &config(), &setting, funds, NOW).expect("deploys");
    let chain_id = evm.chain_id().expect("chain id");
    let mut reference = ReferenceWorld::attested(&config(), &setting, funds, NOW, chain_id);
    let evm_markets = markets(&mut evm, books);
    // The same addresses in both worlds, so that each call is signed once and recovers alike.
    reference.use_addresses(evm.gate(), &evm_markets);
    assert_eq!(markets(&mut reference, books), evm_markets);
    evm.set_block(BLOCK);
    reference.set_block(BLOCK);
    Worlds { evm, reference, markets: evm_markets, chain_id, setting, keys }
}

fn shift(price: u64, ticks: i64) -> U256 {
    let moved = price as i64 + ticks * common::batches::TICK as i64;
    U256::from(moved.clamp(0, PRICE_ONE as i64) as u64)
}

/// The element's call for one world (`market` and `gate` are that world's), signed as `spec`
/// says, read at `read_block`, quoted from the attested book at `now`.
fn item(
    w: &Worlds,
    spec: &ElementSpec,
    (market, gate): (Address, Address),
    (block, read_block): (u64, u64),
    (bid, ask): (u64, u64),
    now: u64,
) -> AttestedItem {
    let read = match spec.read {
        ReadKind::Live => AttestedRead {
            prompt_hash: B256::repeat_byte(spec.prompt),
            best_bid: U256::from(bid),
            best_ask: U256::from(ask),
        },
        ReadKind::Shifted(b, a) => AttestedRead {
            prompt_hash: B256::repeat_byte(spec.prompt),
            best_bid: shift(bid, b),
            best_ask: shift(ask, a),
        },
    };
    // The keeper quotes the verdict of the first parseable answer from the attested book.
    let verdict = spec.answers.iter().find_map(|a| model::parse_verdict(&a.raw.0).ok());
    let (seen_bid, seen_ask) = (read.best_bid.to::<u64>(), read.best_ask.to::<u64>());
    let quote = match spec.quote {
        QuoteKind::Keeper(bps) => world::keeper_quote(verdict, seen_bid, seen_ask, now, bps, 60),
        QuoteKind::Loose => {
            Quote { max_price_paid: U256::from(PRICE_ONE - 1), deadline_sec: now + 60 }
        }
        QuoteKind::Stale => world::keeper_quote(verdict, seen_bid, seen_ask, now - 1_000, 100, 60),
    };
    let answers = spec
        .answers
        .iter()
        .map(|a| AnswerPlan {
            raw: a.raw.0.clone(),
            by: match a.signing {
                Signing::Outsider => By::Outsider(a.attestor),
                _ => By::Attestor(a.attestor),
            },
            tamper: match a.signing {
                Signing::Honest | Signing::Outsider => Tamper::None,
                Signing::AnswerChanged => Tamper::Signed(Field::Answer),
                Signing::HighS => Tamper::HighS,
            },
        })
        .collect();
    let plan = CallPlan {
        market,
        block_number: block,
        age: block - read_block.min(block),
        read,
        quote,
        answers,
        order: if spec.descending { AnswerOrder::Descending } else { AnswerOrder::Ascending },
        shape: if spec.fault == Fault::ExtraSignature {
            Shape::ExtraSignature
        } else {
            Shape::Exact
        },
        appended: match spec.fault {
            Fault::NoRead => Appended::Nothing,
            Fault::HalfRead => Appended::Part(48),
            _ => Appended::Read,
        },
    };
    let mut m = materialize(&w.keys, &plan, w.chain_id, gate);
    // A read in the future: `CallPlan` reads at most at its block, so set it after signing
    // (the gate refuses the batch before any signature is looked at).
    m.call.read_block = read_block;
    AttestedItem { call: m.call, appended: m.appended }
}

/// What the random batches exercised.
#[derive(Debug, Default)]
struct Coverage {
    cases: u32,
    batches: u32,
    elements: u32,
    by_reason: BTreeMap<u8, u32>,
    refused_future: u32,
    refused_unreadable: u32,
    /// 21 published for a read the set judged attested: the replay rule.
    replayed: u32,
    /// A PASS under a limit the attested book tightened below the keeper's quote.
    tightened_passes: u32,
    /// A rule-15 refusal under a tightened limit.
    tightened_refusals: u32,
    split_votes: u32,
    max_batch_len: usize,
}

/// An attested row with its market as an index into [`MARKETS`].
fn attested_comparable(
    r: &AttestedRow,
    markets: &[Address],
) -> (common::batches::Comparable, B256, Vec<u8>, U256, B256, Vec<u8>) {
    (comparable(&r.row, markets), r.prompt_hash, r.head.clone(), r.length, r.hash, r.vote.clone())
}

fn run_case(
    artifact: &GateArtifact,
    case: &Case,
    coverage: &mut Coverage,
) -> Result<(), TestCaseError> {
    let mut w = worlds(artifact, &case.books);
    coverage.cases += 1;
    for (b, spec) in case.batches.iter().enumerate() {
        if spec.advance_secs > 0 {
            let now = w.reference.now() + spec.advance_secs;
            w.evm.set_time(now);
            w.reference.set_time(now);
        }
        let (now, block) = (w.reference.now(), w.reference.block());
        ensure!(w.evm.block() == block && w.evm.now() == now, "the worlds' clocks drifted");
        // The keeper (and the attestors) read every book before the batch; both worlds agree.
        let mut books = Vec::new();
        for &m in &w.markets {
            let (got, want) = (w.evm.best(m).expect("best"), w.reference.best(m).expect("best"));
            ensure!(got == want, "batch {b}: compiled book {got:?}, reference {want:?}");
            books.push(want);
        }
        let future = spec.future.map(|(i, ahead)| (i % spec.elements.len(), ahead));
        // Each element's market and read block, `again` naming an earlier element's.
        let mut named: Vec<(usize, u64)> = Vec::new();
        for (i, e) in spec.elements.iter().enumerate() {
            let own = (e.market, block.saturating_sub(e.back));
            let (market, read_block) = e.again.filter(|&j| j < i).map_or(own, |j| named[j]);
            let read_block = match future {
                Some((f, ahead)) if f == i => block + ahead,
                _ => read_block,
            };
            named.push((market, read_block));
        }
        let gate = w.evm.gate();
        let items: Vec<AttestedItem> = spec
            .elements
            .iter()
            .zip(&named)
            .map(|(e, &(m, rb))| item(&w, e, (w.markets[m], gate), (block, rb), books[m], now))
            .collect();
        let before =
            check_world_states(&mut w.evm, &mut w.reference, &w.markets, &w.markets, "before")?;
        // What the set alone judges of each element (to tell the replay rule's 21 apart).
        let env = TallyEnv { chain_id: w.chain_id, gate, block_number: block };
        let judged: Vec<Option<u8>> = items
            .iter()
            .map(|it| {
                attested::tally(&w.setting, &env, &it.call, &it.appended).ok().map(|j| j.reason)
            })
            .collect();
        let want = w.reference.submit_attested_batch(&items).expect("reference runs");
        let got = w.evm.submit_attested_batch(&items).expect("compiled runs");
        let what = format!("batch {b} of {}", spec.elements.len());
        coverage.batches += 1;
        match (&got, &want) {
            (Ok(g), Ok(r)) => {
                ensure!(
                    g.rows.len() == spec.elements.len() && r.rows.len() == spec.elements.len(),
                    "{what}: {} compiled and {} reference rows",
                    g.rows.len(),
                    r.rows.len()
                );
                for (i, (g, r)) in g.rows.iter().zip(&r.rows).enumerate() {
                    let (gc, rc) =
                        (attested_comparable(g, &w.markets), attested_comparable(r, &w.markets));
                    ensure!(gc == rc, "{what}, element {i}: compiled {gc:?}, reference {rc:?}");
                    let reason = r.row.reason;
                    *coverage.by_reason.entry(reason).or_default() += 1;
                    let set_reason = judged[i];
                    if reason == attested::REASON_NOT_ATTESTED
                        && set_reason.is_some_and(|s| s != attested::REASON_NOT_ATTESTED)
                    {
                        coverage.replayed += 1;
                    }
                    if reason == attested::REASON_ATTESTORS_DISAGREE {
                        coverage.split_votes += 1;
                    }
                    let sent = items[i].call.quote.max_price_paid;
                    let tightened = r.row.snapshot.is_some() && r.row.quote.max_price_paid < sent;
                    if tightened && reason == 0 {
                        coverage.tightened_passes += 1;
                    }
                    if tightened && reason == 15 {
                        coverage.tightened_refusals += 1;
                    }
                }
                coverage.elements += spec.elements.len() as u32;
                coverage.max_batch_len = coverage.max_batch_len.max(spec.elements.len());
            }
            (Err(data), Err(refusal)) => {
                let allowed = refusal.data();
                ensure!(
                    allowed.contains(data),
                    "{what}: compiled refused with {data}; the reference allows {allowed:?} ({refusal:?})"
                );
                match refusal {
                    AttestedRefusal::ReadBlockInFuture { .. } => coverage.refused_future += 1,
                    AttestedRefusal::Unreadable { .. } => coverage.refused_unreadable += 1,
                    AttestedRefusal::Empty => {}
                }
                let after = check_world_states(
                    &mut w.evm,
                    &mut w.reference,
                    &w.markets,
                    &w.markets,
                    "after a refusal",
                )?;
                ensure!(after == before, "{what}: a refused batch moved the gate");
            }
            _ => {
                return Err(TestCaseError::fail(format!(
                    "{what}: compiled {got:?}, reference {want:?}"
                )))
            }
        }
        ensure!(w.evm.disagreements().is_empty(), "{what}: {:?}", w.evm.disagreements());
        check_world_states(&mut w.evm, &mut w.reference, &w.markets, &w.markets, &what)?;
    }
    Ok(())
}

#[test]
fn random_attested_batches_agree_with_the_reference_element_by_element() {
    let started = std::time::Instant::now();
    let artifact = common::gate_artifact();
    let c = common::batches::run_seeded(0xa77e_57ed, 100, case(), |case, coverage| {
        run_case(&artifact, case, coverage)
    });
    println!(
        "{} cases, {} batches ({} refused whole for a future read, {} for an element the set \
         cannot read), {} elements (at most {} a batch); {} replayed reads, {} split votes, \
         {} passes and {} rule-15 refusals under a limit the attested book tightened; {:.2} s",
        c.cases,
        c.batches,
        c.refused_future,
        c.refused_unreadable,
        c.elements,
        c.max_batch_len,
        c.replayed,
        c.split_votes,
        c.tightened_passes,
        c.tightened_refusals,
        started.elapsed().as_secs_f64()
    );
    common::batches::print_by_reason(&c.by_reason);
    // The run must have exercised what it claims to.
    assert!(c.by_reason.get(&0).copied().unwrap_or(0) >= 10, "{c:?}");
    for reason in [1, 12, 15, 16, 19, 21, 22] {
        assert!(c.by_reason.contains_key(&reason), "reason {reason} never published: {c:?}");
    }
    assert!(c.replayed > 0 && c.split_votes > 0, "{c:?}");
    assert!(c.tightened_passes > 0 && c.tightened_refusals > 0, "{c:?}");
    assert!(c.refused_future > 0 && c.refused_unreadable > 0, "{c:?}");
    assert!(c.max_batch_len == 8, "{c:?}");
}
