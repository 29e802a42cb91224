//! Batches (`submitVerdicts`, issue 37): random batches sent to the compiled gate in revm as one
//! transaction each, held to the reference world applying the same elements one by one. The
//! compiled side checks every element against its shadow ledger as it checks a single
//! submission (no disagreement may be reported); the rows, element by element, the final gate
//! state and every position must equal the reference's. A fixed batch is also sent to one
//! compiled gate whole and to another element by element: the two must end identical.

#[macro_use]
mod common;

use alloy::primitives::{Address, U256};
use common::batches::{
    answer, book, check_world_states, comparable, config, markets, Book, Raw, BLOCK, MARKETS, NOW,
};
use gate_sim::{
    adversary,
    artifact::GateArtifact,
    model::{self, Quote, ReadBlockInFuture},
    world::{self, BatchItem, BatchRefusal, EvmWorld, ReferenceWorld, Row, World},
};
use proptest::{collection::vec, prelude::*, sample::select, test_runner::TestCaseError};
use std::collections::BTreeMap;

/// How the keeper quotes an element, from the book it read before the batch.
#[derive(Clone, Copy, Debug)]
enum QuoteKind {
    /// `keeper_quote` with this slippage and time to live.
    Keeper { slippage_bps: u64, ttl_secs: u64 },
    /// A deadline already past (16).
    Stale,
    /// 90% of the price seen (15, unless the price moved down).
    TooTight,
    /// `Quote(0, 0)`.
    Zero,
}

#[derive(Clone, Debug)]
struct ItemSpec {
    market: usize,
    raw: Raw,
    quote: QuoteKind,
    /// How many blocks before the current one the prompt was read.
    back: u64,
}

#[derive(Clone, Debug)]
struct BatchSpec {
    /// Seconds the clock moves before the batch (0: the same block as the previous one).
    advance_secs: u64,
    items: Vec<ItemSpec>,
    /// `(element, blocks ahead)`: that element is read at a block not mined yet.
    future: Option<(usize, u64)>,
}

#[derive(Clone, Debug)]
struct Case {
    books: Vec<Book>,
    batches: Vec<BatchSpec>,
}

fn quote_kind() -> impl Strategy<Value = QuoteKind> {
    prop_oneof![
        6 => (0u64..300, 30u64..600)
            .prop_map(|(slippage_bps, ttl_secs)| QuoteKind::Keeper { slippage_bps, ttl_secs }),
        1 => Just(QuoteKind::Stale),
        1 => Just(QuoteKind::TooTight),
        1 => Just(QuoteKind::Zero),
    ]
}

fn item() -> impl Strategy<Value = ItemSpec> {
    // The healthy markets most often, so that batches repeat a market and fill its slots.
    (select(vec![0usize, 0, 0, 1, 1, 2, 3, 4]), answer(), quote_kind(), 0u64..=3)
        .prop_map(|(market, raw, quote, back)| ItemSpec { market, raw, quote, back })
}

fn batch() -> impl Strategy<Value = BatchSpec> {
    let future = prop_oneof![7 => Just(None), 1 => (0usize..8, 1u64..=3).prop_map(Some)];
    (0u64..=200, vec(item(), 1..=8), future).prop_map(|(advance_secs, items, future)| BatchSpec {
        advance_secs,
        items,
        future,
    })
}

fn case() -> impl Strategy<Value = Case> {
    (vec(book(), MARKETS.len()), vec(batch(), 1..=4))
        .prop_map(|(books, batches)| Case { books, batches })
}

/// Both worlds with the markets of [`MARKETS`] and `books`, at block [`BLOCK`]: the compiled
/// gate, the reference, and each one's market addresses in [`MARKETS`] order.
fn worlds(
    artifact: &GateArtifact,
    books: &[Book],
) -> (EvmWorld, ReferenceWorld, Vec<Address>, Vec<Address>) {
    let funds = adversary::default_initial_collateral();
    let mut evm = EvmWorld::deploy(artifact, &config(), funds, NOW).expect("deploys");
    let mut reference = ReferenceWorld::new(&config(), funds, NOW);
    let evm_markets = markets(&mut evm, books);
    let reference_markets = markets(&mut reference, books);
    evm.set_block(BLOCK);
    reference.set_block(BLOCK);
    (evm, reference, evm_markets, reference_markets)
}

/// The quote the keeper sends for `raw`, from `(bestBid, bestAsk)` read at `now`.
fn quote_for(raw: &[u8], kind: QuoteKind, (bid, ask): (u64, u64), now: u64) -> Quote {
    let verdict = model::parse_verdict(raw).ok();
    match kind {
        QuoteKind::Keeper { slippage_bps, ttl_secs } => {
            world::keeper_quote(verdict, bid, ask, now, slippage_bps, ttl_secs)
        }
        QuoteKind::Stale => world::keeper_quote(verdict, bid, ask, now - 1_000, 100, 60),
        QuoteKind::TooTight => {
            let q = world::keeper_quote(verdict, bid, ask, now, 0, 600);
            Quote { max_price_paid: q.max_price_paid * U256::from(9u64) / U256::from(10u64), ..q }
        }
        QuoteKind::Zero => Quote::default(),
    }
}

/// What the random batches exercised.
#[derive(Debug, Default)]
struct Coverage {
    cases: u32,
    batches: u32,
    elements: u32,
    by_reason: BTreeMap<u8, u32>,
    /// Batches refused whole for a read block not mined yet.
    refused_future: u32,
    /// Elements on a market an earlier element of the same batch bought from.
    after_a_fill_on_their_market: u32,
    /// Elements with an answer over 64 bytes.
    long_answers: u32,
    max_batch_len: usize,
    max_batch_gas: u64,
}

fn run_case(
    artifact: &GateArtifact,
    case: &Case,
    coverage: &mut Coverage,
) -> Result<(), TestCaseError> {
    let (mut evm, mut reference, evm_markets, reference_markets) = worlds(artifact, &case.books);
    coverage.cases += 1;
    for (b, spec) in case.batches.iter().enumerate() {
        if spec.advance_secs > 0 {
            let now = reference.now() + spec.advance_secs;
            evm.set_time(now);
            reference.set_time(now);
        }
        let (now, block) = (reference.now(), reference.block());
        ensure!(evm.block() == block && evm.now() == now, "the worlds' clocks drifted");
        // The keeper reads every book once, before the batch; both worlds show the same.
        let mut books = Vec::new();
        for (&em, &rm) in evm_markets.iter().zip(&reference_markets) {
            let (got, want) = (evm.best(em).expect("best"), reference.best(rm).expect("best"));
            ensure!(got == want, "batch {b}: compiled book {got:?}, reference {want:?}");
            books.push(want);
        }
        let future = spec.future.map(|(i, ahead)| (i % spec.items.len(), ahead));
        let items = |markets: &[Address]| -> Vec<BatchItem> {
            spec.items
                .iter()
                .enumerate()
                .map(|(i, it)| BatchItem {
                    market: markets[it.market],
                    raw: it.raw.0.clone(),
                    read_block: match future {
                        Some((f, ahead)) if f == i => block + ahead,
                        _ => block.saturating_sub(it.back),
                    },
                    quote: quote_for(&it.raw.0, it.quote, books[it.market], now),
                })
                .collect()
        };
        let before = check_world_states(
            &mut evm,
            &mut reference,
            &evm_markets,
            &reference_markets,
            "before",
        )?;
        let want = reference.submit_batch(&items(&reference_markets)).expect("reference runs");
        let got = evm.submit_batch(&items(&evm_markets)).expect("compiled runs");
        let what = format!("batch {b} of {:?}", spec.items.len());
        coverage.batches += 1;
        match (&got, &want) {
            (Ok(g), Ok(w)) => {
                ensure!(future.is_none(), "{what}: admitted with an element read in the future");
                ensure!(
                    g.rows.len() == spec.items.len() && w.rows.len() == spec.items.len(),
                    "{what}: {} compiled and {} reference rows",
                    g.rows.len(),
                    w.rows.len()
                );
                let mut bought = Vec::new();
                for (i, (g, w)) in g.rows.iter().zip(&w.rows).enumerate() {
                    let (g, w) = (comparable(g, &evm_markets), comparable(w, &reference_markets));
                    ensure!(g == w, "{what}, element {i}: compiled {g:?}, reference {w:?}");
                    let it = &spec.items[i];
                    if bought.contains(&it.market) {
                        coverage.after_a_fill_on_their_market += 1;
                    }
                    if w.2 == 0 {
                        bought.push(it.market);
                    }
                    if it.raw.0.len() > model::MAX_ANSWER_LEN {
                        coverage.long_answers += 1;
                    }
                    *coverage.by_reason.entry(w.2).or_default() += 1;
                }
                coverage.elements += spec.items.len() as u32;
                coverage.max_batch_len = coverage.max_batch_len.max(spec.items.len());
                coverage.max_batch_gas = coverage.max_batch_gas.max(g.gas_used.unwrap_or(0));
            }
            (Err(g), Err(w)) => {
                ensure!(g == w, "{what}: compiled refused {g:?}, reference {w:?}");
                let Some((f, ahead)) = future else {
                    return Err(TestCaseError::fail(format!(
                        "{what}: refused {w:?} with no future read"
                    )));
                };
                let expected = BatchRefusal::ReadBlockInFuture {
                    index: f,
                    error: ReadBlockInFuture { read_block: block + ahead, current_block: block },
                };
                ensure!(*w == expected, "{what}: the reference refused {w:?}, not {expected:?}");
                coverage.refused_future += 1;
                let after = check_world_states(
                    &mut evm,
                    &mut reference,
                    &evm_markets,
                    &reference_markets,
                    "after a refusal",
                )?;
                ensure!(
                    after == before,
                    "{what}: a refused batch moved the gate: {before:?} -> {after:?}"
                );
            }
            _ => {
                return Err(TestCaseError::fail(format!(
                    "{what}: compiled {got:?}, reference {want:?}"
                )))
            }
        }
        ensure!(evm.disagreements().is_empty(), "{what}: {:?}", evm.disagreements());
        check_world_states(&mut evm, &mut reference, &evm_markets, &reference_markets, &what)?;
    }
    Ok(())
}

#[test]
fn random_batches_agree_with_the_reference_element_by_element() {
    let started = std::time::Instant::now();
    let artifact = common::gate_artifact();
    let c = common::batches::run_seeded(0x0ba7_c4e5, 40, case(), |case, coverage| {
        run_case(&artifact, case, coverage)
    });
    println!(
        "{} cases, {} batches ({} refused whole for a future read block), {} elements \
         (at most {} a batch, {} after a fill on their own market, {} answers over 64 bytes), \
         at most {} gas a batch, in {:.2} s",
        c.cases,
        c.batches,
        c.refused_future,
        c.elements,
        c.max_batch_len,
        c.after_a_fill_on_their_market,
        c.long_answers,
        c.max_batch_gas,
        started.elapsed().as_secs_f64()
    );
    common::batches::print_by_reason(&c.by_reason);
    // The run must have exercised what it claims to: trades, refusals of many kinds, whole
    // refusals, and elements deciding after an earlier one bought from their market.
    assert!(c.by_reason.get(&0).copied().unwrap_or(0) >= 10, "{c:?}");
    for reason in [1, 11, 12, 15, 16, 19] {
        assert!(c.by_reason.contains_key(&reason), "reason {reason} never published: {c:?}");
    }
    assert!(c.by_reason.len() >= 9, "{c:?}");
    assert!(
        c.refused_future > 0 && c.after_a_fill_on_their_market > 0 && c.long_answers > 0,
        "{c:?}"
    );
    assert!(c.max_batch_len == 8, "{c:?}");
}

#[test]
fn a_batch_leaves_the_gate_as_the_same_elements_sent_one_by_one() {
    let artifact = common::gate_artifact();
    let books = [
        // Enough at 0.42 for one order and half of another, then 0.45; bids at 0.38.
        Book { asks: vec![(420_000, 150), (450_000, 150)], bids: vec![(380_000, 150)] },
        // Ten lots at 0.50: below the minimum fill of an order of 100.
        Book { asks: vec![(500_000, 10)], bids: vec![(300_000, 150)] },
        Book { asks: vec![(400_000, 150)], bids: vec![(350_000, 150)] },
        Book { asks: vec![(400_000, 150)], bids: vec![(350_000, 150)] },
        Book { asks: vec![(400_000, 150)], bids: vec![(350_000, 150)] },
    ];
    let (mut whole, mut reference, markets, reference_markets) = worlds(&artifact, &books);
    let (mut single, _, single_markets, _) = worlds(&artifact, &books);
    assert_eq!(markets, single_markets, "two fresh worlds deploy the same markets");
    let mut quoted = |raw: &[u8], m: usize, kind: QuoteKind| {
        let book = reference.best(reference_markets[m]).expect("best");
        (raw.to_vec(), quote_for(raw, kind, book, NOW), m)
    };
    let keeper = QuoteKind::Keeper { slippage_bps: 200, ttl_secs: 60 };
    let long = [b"BUY_UP".to_vec(), vec![b' '; 200]].concat();
    let elements = [
        quoted(b"BUY_UP", 0, keeper),
        // The same market again: the rest of the 0.42 level, within the same quote.
        quoted(b" BUY_UP\n", 0, keeper),
        // The other side of a market held UP.
        quoted(b"BUY_DOWN", 0, keeper),
        quoted(b"ABSTAIN", 1, keeper),
        quoted(b"maybe", 1, keeper),
        // Too little to fill: undone.
        quoted(b"BUY_UP", 1, keeper),
        quoted(b"BUY_UP", 3, keeper),
        quoted(b"'BUY_DOWN'", 1, QuoteKind::Stale),
        // A second and a third slot.
        quoted(b"BUY_DOWN", 1, keeper),
        quoted(b"BUY_DOWN", 2, keeper),
        // No fourth.
        quoted(b"BUY_UP", 4, keeper),
        quoted(&long, 0, keeper),
    ];
    let items = |markets: &[Address]| -> Vec<BatchItem> {
        elements
            .iter()
            .map(|(raw, quote, m)| BatchItem {
                market: markets[*m],
                raw: raw.clone(),
                read_block: BLOCK - 1,
                quote: *quote,
            })
            .collect()
    };

    // Whole refusals first: they publish and change nothing, in all three worlds.
    let before = whole.state().expect("state");
    assert_eq!(reference.state().expect("state"), before);
    assert_eq!(whole.submit_batch(&[]).expect("runs"), Err(BatchRefusal::Empty));
    assert_eq!(reference.submit_batch(&[]).expect("runs"), Err(BatchRefusal::Empty));
    let mut future = items(&markets);
    future[2].read_block = BLOCK + 1;
    future[5].read_block = u64::MAX;
    let expected = BatchRefusal::ReadBlockInFuture {
        index: 2,
        error: ReadBlockInFuture { read_block: BLOCK + 1, current_block: BLOCK },
    };
    let mut reference_future = items(&reference_markets);
    reference_future[2].read_block = BLOCK + 1;
    reference_future[5].read_block = u64::MAX;
    assert_eq!(reference.submit_batch(&reference_future).expect("runs"), Err(expected));
    assert_eq!(whole.submit_batch(&future).expect("runs"), Err(expected));
    assert_eq!(whole.state().expect("state"), before, "a refused batch moved the gate");

    // The batch, one transaction.
    let batch = whole.submit_batch(&items(&markets)).expect("runs").expect("admitted");
    // The same elements one by one, in the same block.
    let mut one_by_one = Vec::new();
    let mut single_gas = 0;
    for it in items(&single_markets) {
        let row = single
            .submit(it.market, &it.raw, it.read_block, &it.quote)
            .expect("runs")
            .expect("admitted");
        single_gas += row.gas_used.unwrap_or(0);
        one_by_one.push(Row { gas_used: None, ..row });
    }
    let mut expected_rows = Vec::new();
    for it in items(&reference_markets) {
        let row = reference
            .submit(it.market, &it.raw, it.read_block, &it.quote)
            .expect("runs")
            .expect("admitted");
        expected_rows.push(comparable(&row, &reference_markets));
    }
    assert_eq!(batch.rows, one_by_one, "the batch's rows against the single submissions'");
    let got: Vec<_> = batch.rows.iter().map(|r| comparable(r, &markets)).collect();
    assert_eq!(got, expected_rows, "the batch's rows against the reference's");
    assert!(whole.disagreements().is_empty(), "{:?}", whole.disagreements());
    assert!(single.disagreements().is_empty(), "{:?}", single.disagreements());
    let state = whole.state().expect("state");
    assert_eq!(state, single.state().expect("state"));
    assert_eq!(state, reference.state().expect("state"));
    for (i, (&m, &rm)) in markets.iter().zip(&reference_markets).enumerate() {
        let p = whole.position(m).expect("position");
        assert_eq!(p, single.position(m).expect("position"), "market {i}");
        assert_eq!(p, reference.position(rm).expect("position"), "market {i}");
    }
    // The reasons the reference expects, so the comparison above covered trades, the repeat,
    // an undone fill and refusals.
    let reasons: Vec<u8> = expected_rows.iter().map(|r| r.2).collect();
    println!("reasons {reasons:?}; batch gas {:?}, {single_gas} gas one by one", batch.gas_used);
    assert_eq!(reasons, [0, 0, 17, 1, 11, 18, 19, 16, 0, 0, 8, 11]);
}

#[test]
fn a_planted_disagreement_in_a_batch_is_reported_with_its_element() {
    let artifact = common::gate_artifact();
    let books =
        vec![Book { asks: vec![(420_000, 150)], bids: vec![(380_000, 150)] }; MARKETS.len()];
    let (mut evm, _, markets, _) = worlds(&artifact, &books);
    // The reference side of the cross-check now sizes orders at half the deployed gate's.
    let bounds = evm.reference_bounds_mut();
    bounds.max_size /= U256::from(2u64);
    let keeper = QuoteKind::Keeper { slippage_bps: 200, ttl_secs: 60 };
    let items: Vec<BatchItem> = [(&b"ABSTAIN"[..], 0), (b"BUY_UP", 1)]
        .into_iter()
        .map(|(raw, m)| BatchItem {
            market: markets[m],
            raw: raw.to_vec(),
            read_block: BLOCK,
            quote: quote_for(raw, keeper, (380_000, 420_000), NOW),
        })
        .collect();
    let rows = evm.submit_batch(&items).expect("runs").expect("admitted").rows;
    assert_eq!(rows.iter().map(|r| r.reason).collect::<Vec<_>>(), [1, 0]);
    let found = evm.disagreements();
    assert!(found.iter().any(|d| d.starts_with("submitVerdicts element 1: decision")), "{found:?}");
    assert!(!found.iter().any(|d| d.contains("element 0")), "{found:?}");
}
