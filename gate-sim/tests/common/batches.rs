//! What the batch differentials (`batch.rs`, `attested_batch.rs`) share: the gate's bounds and
//! trusted lists, five markets and their books, the answers drawn, and the comparison of the
//! two worlds' rows and state.

use alloy::primitives::{Address, U256};
use gate_sim::{
    adversary,
    model::{self, GateConfig, Quote, Snapshot},
    world::{
        EvmWorld, GateState, MarketSpec, Order, ReferenceWorld, Row, World, ATTACKER,
        HONEST_RESOLVER, KEEPER, MAKER,
    },
};
use proptest::{
    collection::vec,
    prelude::*,
    sample::select,
    test_runner::{Config, RngAlgorithm, TestCaseError, TestRng, TestRunner},
};
use std::{cell::RefCell, collections::BTreeMap, fmt};

pub const NOW: u64 = 1_700_000_000;
/// The block both worlds start the batches in (room below it for reads a few blocks back).
pub const BLOCK: u64 = 1_000;
pub const TICK: u64 = 10_000;
pub const LOT: u64 = 1_000_000;
pub const DAY: u64 = 86_400;

pub fn config() -> GateConfig {
    GateConfig {
        bounds: adversary::default_bounds(),
        trusted_resolvers: vec![HONEST_RESOLVER],
        trusted_creators: vec![MAKER],
        keeper: KEEPER,
        collateral: Address::default(),
        factory_collateral: Address::default(),
    }
}

/// The markets of every world: `(creator, resolver, seconds to expiry)`. Two healthy ones, one
/// whose headroom runs out as the clock moves, one by an untrusted creator (19) and one with an
/// untrusted resolver (12).
pub const MARKETS: [(Address, Address, u64); 5] = [
    (MAKER, HONEST_RESOLVER, 2 * DAY),
    (MAKER, HONEST_RESOLVER, 2 * DAY),
    (MAKER, HONEST_RESOLVER, 400),
    (ATTACKER, HONEST_RESOLVER, 2 * DAY),
    (MAKER, ATTACKER, 2 * DAY),
];

/// A market's resting orders: `(price, lots)` asks and bids.
#[derive(Clone, Debug, Default)]
pub struct Book {
    pub asks: Vec<(u64, u64)>,
    pub bids: Vec<(u64, u64)>,
}

/// An answer, shown short (one may be 100 KB).
#[derive(Clone, PartialEq, Eq)]
pub struct Raw(pub Vec<u8>);

impl fmt::Debug for Raw {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let head = &self.0[..self.0.len().min(24)];
        write!(f, "{:?} ({} bytes)", String::from_utf8_lossy(head), self.0.len())
    }
}

pub fn book() -> impl Strategy<Value = Book> {
    // Asks at or above 0.30 and bids below it never cross. Up to 150 lots a level: the gate's
    // order is 100 lots and its minimum fill 25, so a level fills it, part of it, or too little.
    // A side is empty now and then.
    let side = |prices: std::ops::RangeInclusive<u64>| {
        let levels = vec((prices.prop_map(|p| p * TICK), 1u64..=150), 1..=3);
        prop_oneof![5 => levels, 1 => Just(Vec::new())]
    };
    (side(30..=98), side(2..=29)).prop_map(|(asks, bids)| Book { asks, bids })
}

pub fn answer() -> impl Strategy<Value = Raw> {
    let trim = || vec(select(model::TRIM_BYTES.to_vec()), 0..=3);
    let token =
        (select(vec!["BUY_UP", "BUY_UP", "BUY_DOWN", "BUY_DOWN", "ABSTAIN"]), trim(), trim())
            .prop_map(|(t, pre, post)| [pre, t.as_bytes().to_vec(), post].concat());
    let known: Vec<&'static [u8]> = vec![
        b"buy_up",
        b"BUY UP",
        b"BUY_UPP",
        b"SELL",
        b"",
        "\u{200b}BUY_UP".as_bytes(),
        b"{\"verdict\":\"BUY_UP\"}",
        b"BUY_UP\0",
    ];
    let garbage = prop_oneof![select(known).prop_map(<[u8]>::to_vec), vec(any::<u8>(), 0..24),];
    // 64 bytes trimmed to a token is valid; 65 is refused before trimming.
    let long = prop_oneof![
        4 => (58usize..=59).prop_map(|n| [b"BUY_UP".to_vec(), vec![b' '; n]].concat()),
        4 => (65usize..2_000, any::<u8>()).prop_map(|(n, b)| vec![b; n]),
        1 => Just(vec![b'x'; 100_000]),
    ];
    prop_oneof![12 => token, 4 => garbage, 1 => long].prop_map(Raw)
}

/// Creates the markets of [`MARKETS`] in `w`, each with its book; their addresses in that order.
pub fn markets(w: &mut dyn World, books: &[Book]) -> Vec<Address> {
    MARKETS
        .iter()
        .zip(books)
        .enumerate()
        .map(|(i, (&(creator, resolver, expiry), book))| {
            let spec = MarketSpec {
                question: format!("Will batch test market {i} resolve UP?"),
                tick: TICK,
                lot: U256::from(LOT),
                min_quantity: U256::from(LOT),
                expiry_sec: NOW + expiry,
                resolver,
            };
            let m = w.create_market(creator, &spec).expect("market");
            for (is_bid, levels) in [(false, &book.asks), (true, &book.bids)] {
                for &(price, lots) in levels {
                    w.place(m, MAKER, is_bid, price, U256::from(lots * LOT)).expect("order");
                }
            }
            m
        })
        .collect()
}

/// A row with its market as an index into [`MARKETS`] (the worlds' addresses differ) and
/// without its gas.
pub type Comparable = (usize, u64, u8, u8, u32, Option<Snapshot>, Quote, Order);

pub fn comparable(row: &Row, markets: &[Address]) -> Comparable {
    let index = markets.iter().position(|m| *m == row.market).unwrap_or(usize::MAX);
    (
        index,
        row.read_block,
        row.reason,
        row.verdict,
        row.failed_mask,
        row.snapshot,
        row.quote,
        row.order,
    )
}

/// The two worlds' gate state and every position must be equal: the reference's state.
pub fn check_world_states(
    evm: &mut EvmWorld,
    reference: &mut ReferenceWorld,
    evm_markets: &[Address],
    reference_markets: &[Address],
    what: &str,
) -> Result<GateState, TestCaseError> {
    let (got, want) = (evm.state().expect("state"), reference.state().expect("state"));
    ensure!(got == want, "{what}: compiled state {got:?}, reference {want:?}");
    for (i, (&em, &rm)) in evm_markets.iter().zip(reference_markets).enumerate() {
        let (got, want) =
            (evm.position(em).expect("position"), reference.position(rm).expect("position"));
        ensure!(got == want, "{what}: market {i}: compiled position {got:?}, reference {want:?}");
    }
    Ok(want)
}

/// Runs `cases` cases of `strategy` from the fixed `seed` (ChaCha, no persistence), each through
/// `run` with the coverage so far, and returns the coverage; a failing case is shrunk (200
/// steps at most) and panics with it.
pub fn run_seeded<S: Strategy, C: Default>(
    seed: u64,
    cases: u32,
    strategy: S,
    run: impl Fn(&S::Value, &mut C) -> Result<(), TestCaseError>,
) -> C {
    let mut bytes = [0u8; 32];
    bytes[..8].copy_from_slice(&seed.to_le_bytes());
    let mut runner = TestRunner::new_with_rng(
        Config { cases, failure_persistence: None, max_shrink_iters: 200, ..Config::default() },
        TestRng::from_seed(RngAlgorithm::ChaCha, &bytes),
    );
    let coverage = RefCell::new(C::default());
    if let Err(e) = runner.run(&strategy, |case| run(&case, &mut coverage.borrow_mut())) {
        panic!("{e}");
    }
    coverage.into_inner()
}

/// One line per reason published: its code, label and count.
pub fn print_by_reason(by_reason: &BTreeMap<u8, u32>) {
    for (reason, n) in by_reason {
        println!("  reason {reason:>2} {:<40} {n}", model::reason_label(*reason).unwrap_or("?"));
    }
}
