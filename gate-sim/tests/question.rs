//! The factory's question rule, held to the compiled `MarketFactory` in revm and on a real
//! anvil: a question of 1 to 280 bytes makes a market whose `questionHash()` is keccak256 of its
//! bytes and whose `MarketCreated` publishes the exact text; an empty one reverts
//! `QuestionEmpty()` and a longer one `QuestionTooLong(length, 280)`, and neither makes a market.
//! Lengths are of the bytes sent (multi-byte UTF-8 counts as its bytes).

mod common;

use alloy::{
    primitives::{keccak256, Address, Bytes, Log, U256},
    sol_types::{SolCall, SolEvent, SolValue},
};
use gate_sim::{
    abi::{self, IMarketFactory, IMarketQuestion},
    evm::{self, AnvilChain, Chain, Deployed, Outcome, RevmChain},
    model::{self, GateConfig, QuestionError},
    venue::VenueError,
    world::{self, EvmWorld, MarketSpec, ReferenceWorld, World},
};

const CREATOR: Address = Address::new([0x3a; 20]);
const RESOLVER: Address = Address::new([0x5e; 20]);
const TICK: u64 = 10_000;
const LOT: u64 = 1_000_000;
/// Year 2096: in the future on any clock these tests run on (the factory only wants a future
/// expiry).
const EXPIRY: u64 = 4_000_000_000;

/// Questions at and around both ends of the rule, in ASCII and in multi-byte UTF-8, with the
/// number of bytes each is.
fn questions() -> Vec<(Vec<u8>, usize)> {
    let ascii = |n: usize| "q".repeat(n).into_bytes();
    let mut out = vec![
        (Vec::new(), 0),
        (b"?".to_vec(), 1),
        (ascii(2), 2),
        (b"Will ETH close above $4,000 on 2027-01-01 00:00 UTC?".to_vec(), 52),
        (ascii(279), 279),
        (ascii(280), 280),
        (ascii(281), 281),
        (ascii(282), 282),
        (ascii(1_000), 1_000),
        (ascii(100_000), 100_000),
        // 140 two-byte characters are 280 bytes; 141 are 282.
        ("é".repeat(140).into_bytes(), 280),
        ("é".repeat(141).into_bytes(), 282),
        // 70 four-byte characters are 280 bytes; one more ASCII byte is 281.
        ("🎲".repeat(70).into_bytes(), 280),
        (format!("{}x", "🎲".repeat(70)).into_bytes(), 281),
        // Bytes a reader must not trim or stop at: the hash is of every one of them.
        (b"\0 line one\nline two\t\0".to_vec(), 21),
        // Not UTF-8 at all: still a question of 3 bytes to the factory.
        (vec![0xff, 0xfe, 0x80], 3),
    ];
    out.push((b" ".repeat(280), 280));
    out
}

fn calldata(question: &[u8]) -> Bytes {
    abi::create_market_calldata(
        question,
        U256::from(TICK),
        U256::from(LOT),
        U256::from(LOT),
        EXPIRY,
        RESOLVER,
    )
}

/// The one `MarketCreated` of `factory` in `logs`, its indexed fields decoded by this crate's
/// declaration and its question read as raw bytes from the data (so a question that is not
/// UTF-8 is compared byte for byte too).
fn market_created(factory: Address, logs: &[Log]) -> (IMarketFactory::MarketCreated, Vec<u8>) {
    let ours: Vec<&Log> = logs.iter().filter(|l| l.address == factory).collect();
    assert_eq!(ours.len(), 1, "one MarketCreated log: {logs:?}");
    let log = ours[0];
    assert_eq!(log.topics()[0], IMarketFactory::MarketCreated::SIGNATURE_HASH);
    let (_, _, _, _, _, question) =
        <(U256, U256, U256, u64, Address, Bytes)>::abi_decode_params(&log.data.data)
            .expect("the non-indexed fields decode");
    let event = IMarketFactory::MarketCreated::decode_log(log).map(|l| l.data);
    let event = event.unwrap_or_else(|e| {
        // The typed decode reads the question as a string; for bytes that are not UTF-8 the
        // raw read above is the reference.
        assert!(std::str::from_utf8(&question).is_err(), "MarketCreated does not decode: {e}");
        IMarketFactory::MarketCreated {
            market: Address::from_word(log.topics()[1]),
            index: U256::from_be_bytes(log.topics()[2].0),
            tickSize: U256::from(TICK),
            lotSize: U256::from(LOT),
            minQuantity: U256::from(LOT),
            expiry: EXPIRY,
            resolver: RESOLVER,
            creator: Address::from_word(log.topics()[3]),
            question: String::new(),
        }
    });
    (event, question.to_vec())
}

/// Everything an accepted question must leave behind.
fn check_created(
    event: &IMarketFactory::MarketCreated,
    published: &[u8],
    question: &[u8],
    market: Address,
    index: u64,
    creator: Address,
) {
    let what = format!("a question of {} bytes", question.len());
    assert_eq!(
        (event.market, event.index, event.creator),
        (market, U256::from(index), creator),
        "{what}"
    );
    assert_eq!(
        (event.tickSize, event.lotSize, event.minQuantity, event.expiry, event.resolver),
        (U256::from(TICK), U256::from(LOT), U256::from(LOT), EXPIRY, RESOLVER),
        "{what}"
    );
    assert_eq!(published, question, "{what}: MarketCreated publishes the exact bytes");
    if let Ok(text) = std::str::from_utf8(question) {
        assert_eq!(event.question, text, "{what}: the decoded text");
    }
}

fn expected_revert(e: &QuestionError) -> Outcome {
    Outcome::Reverted(abi::question_error_data(e))
}

#[test]
fn the_compiled_factory_takes_1_to_280_bytes_and_publishes_the_exact_question_in_revm() {
    let artifact = common::gate_artifact();
    let mut chain = RevmChain::new();
    chain.set_time(1_700_000_000);
    let Deployed::At(token) = chain.deploy(artifact.collateral_initcode()).expect("deploys") else {
        panic!("TestCollateral must deploy")
    };
    let Deployed::At(factory) = chain.deploy(artifact.factory_initcode(token)).expect("deploys")
    else {
        panic!("MarketFactory must deploy")
    };
    let count = |chain: &mut RevmChain| match chain
        .call(factory, IMarketFactory::marketCountCall {}.abi_encode().into())
        .expect("runs")
    {
        Outcome::Returned(d) => U256::abi_decode(&d).expect("a count"),
        other => panic!("marketCount: {other:?}"),
    };
    let (mut accepted, mut refused) = (0u64, 0);
    for (question, length) in questions() {
        assert_eq!(question.len(), length, "the table's own arithmetic");
        let before = count(&mut chain);
        let receipt = chain.send(CREATOR, factory, calldata(&question)).expect("runs");
        match model::question_hash(&question) {
            Ok(hash) => {
                assert!((1..=280).contains(&length));
                let Outcome::Returned(ret) = &receipt.outcome else {
                    panic!("a question of {length} bytes: {:?}", receipt.outcome)
                };
                let market =
                    IMarketFactory::createMarketCall::abi_decode_returns(ret).expect("an address");
                let (event, published) = market_created(factory, &receipt.logs);
                check_created(&event, &published, &question, market, accepted, CREATOR);
                let got = chain
                    .call(market, IMarketQuestion::questionHashCall {}.abi_encode().into())
                    .expect("runs");
                assert_eq!(got, Outcome::Returned(hash.abi_encode().into()), "{length} bytes");
                assert_eq!(hash, keccak256(&question));
                assert_eq!(count(&mut chain), before + U256::from(1u64));
                accepted += 1;
            }
            Err(e) => {
                let want = if length == 0 {
                    QuestionError::Empty
                } else {
                    QuestionError::TooLong { length, max: 280 }
                };
                assert_eq!(e, want);
                assert_eq!(receipt.outcome, expected_revert(&e), "{length} bytes");
                assert!(receipt.logs.is_empty(), "{length} bytes: {:?}", receipt.logs);
                assert_eq!(count(&mut chain), before, "a refused question made a market");
                refused += 1;
            }
        }
    }
    assert_eq!((accepted, refused), (10, 7));
}

#[test]
fn both_worlds_refuse_the_same_questions_and_the_compiled_one_checks_every_market() {
    let artifact = common::gate_artifact();
    let config = GateConfig {
        bounds: gate_sim::adversary::default_bounds(),
        trusted_resolvers: vec![world::HONEST_RESOLVER],
        trusted_creators: vec![world::MAKER],
        keeper: world::KEEPER,
        collateral: Address::default(),
        factory_collateral: Address::default(),
    };
    let now = 1_700_000_000;
    let funds = U256::from(1_000_000_000u64);
    let mut evm = EvmWorld::deploy(&artifact, &config, funds, now).expect("deploys");
    let mut reference = ReferenceWorld::new(&config, funds, now);
    for (question, length) in questions() {
        // The worlds take text; bytes that are not UTF-8 are the raw tests' business.
        let Ok(text) = String::from_utf8(question) else { continue };
        let spec = MarketSpec {
            question: text,
            tick: TICK,
            lot: U256::from(LOT),
            min_quantity: U256::from(LOT),
            expiry_sec: now + 3_600,
            resolver: world::HONEST_RESOLVER,
        };
        let got =
            (evm.create_market(world::MAKER, &spec), reference.create_market(world::MAKER, &spec));
        match model::question_hash(spec.question.as_bytes()) {
            Ok(_) => assert!(got.0.is_ok() && got.1.is_ok(), "{length} bytes: {got:?}"),
            Err(e) => {
                for r in [got.0, got.1] {
                    assert!(
                        matches!(r, Err(world::Error::Venue { error: VenueError::Question(q), .. }) if q == e),
                        "{length} bytes: {r:?}"
                    );
                }
            }
        }
    }
    assert!(evm.disagreements().is_empty(), "{:?}", evm.disagreements());
}

#[test]
fn the_compiled_factory_on_anvil_takes_1_to_280_bytes_and_publishes_the_exact_question() {
    let artifact = common::gate_artifact();
    let mut chain = AnvilChain::spawn(&evm::default_anvil_path()).expect("anvil starts");
    let creator = chain.accounts()[0];
    let Deployed::At(token) = chain.deploy(artifact.collateral_initcode()).expect("deploys") else {
        panic!("TestCollateral must deploy")
    };
    let Deployed::At(factory) = chain.deploy(artifact.factory_initcode(token)).expect("deploys")
    else {
        panic!("MarketFactory must deploy")
    };
    let mut index = 0u64;
    for (question, length) in questions() {
        let data = calldata(&question);
        // The dry run says what the transaction will do, with the revert data.
        let dry = chain.call_from(creator, factory, data.clone()).expect("runs");
        let receipt = chain.send_from(creator, factory, data).expect("mined");
        match model::question_hash(&question) {
            Ok(hash) => {
                let Outcome::Returned(ret) = &dry else { panic!("{length} bytes: {dry:?}") };
                let would_be =
                    IMarketFactory::createMarketCall::abi_decode_returns(ret).expect("an address");
                assert!(receipt.status, "{length} bytes");
                let (event, published) = market_created(factory, &receipt.logs);
                // The dry run at the latest block and the transaction in the next one deploy
                // from the same factory nonce: the same address.
                check_created(&event, &published, &question, would_be, index, creator);
                let got = chain
                    .call(event.market, IMarketQuestion::questionHashCall {}.abi_encode().into())
                    .expect("runs");
                assert_eq!(got, Outcome::Returned(hash.abi_encode().into()), "{length} bytes");
                let recorded = chain
                    .call(
                        factory,
                        IMarketFactory::creatorOfCall { market: event.market }.abi_encode().into(),
                    )
                    .expect("runs");
                assert_eq!(recorded, Outcome::Returned(creator.abi_encode().into()));
                index += 1;
            }
            Err(e) => {
                assert_eq!(dry, expected_revert(&e), "{length} bytes");
                assert!(!receipt.status && receipt.logs.is_empty(), "{length} bytes: {receipt:?}");
            }
        }
    }
    let count =
        chain.call(factory, IMarketFactory::marketCountCall {}.abi_encode().into()).expect("runs");
    assert_eq!(count, Outcome::Returned(U256::from(index).abi_encode().into()));
    assert_eq!(index, 10);
}

/// The loader holds the compiled ABIs to this crate's declarations: an artifact from before the
/// change (createMarket without the question, submitVerdict without readBlock, no
/// `ReadBlockInFuture`, a `Decision` without readBlock, an attestor set whose `tally` lost an
/// argument) is refused, naming what is missing.
#[test]
fn an_artifact_without_the_new_interface_is_refused() {
    use gate_sim::artifact::{self, Error, GateArtifact};
    let out = artifact::workspace_root().join("out");
    let dir = std::env::temp_dir().join(format!("gate-sim-drift-{}", std::process::id()));
    let copy = |edit: &dyn Fn(&str, &mut serde_json::Value)| -> Result<GateArtifact, Error> {
        for name in ["RiskGate", "MarketFactory", "TestCollateral", "BinaryMarket", "AttestorSet"] {
            let rel = format!("{name}.sol/{name}.json");
            let text = std::fs::read_to_string(out.join(&rel)).expect("forge artifact");
            let mut json: serde_json::Value = serde_json::from_str(&text).expect("json");
            edit(name, &mut json);
            std::fs::create_dir_all(dir.join(format!("{name}.sol"))).expect("temp dir");
            std::fs::write(dir.join(&rel), json.to_string()).expect("written");
        }
        GateArtifact::load(&dir.join("RiskGate.sol/RiskGate.json"))
    };
    // Drops the `index`-th input of `item` (a function or event named so) of contract `of`.
    let drop_input = |of: &'static str, item: &'static str, index: usize| {
        move |name: &str, json: &mut serde_json::Value| {
            if name != of {
                return;
            }
            for entry in json["abi"].as_array_mut().expect("abi") {
                if entry["name"] == item {
                    entry["inputs"].as_array_mut().expect("inputs").remove(index);
                }
            }
        }
    };
    assert!(copy(&|_: &str, _: &mut serde_json::Value| {}).is_ok(), "the artifacts as built load");
    type Edit = Box<dyn Fn(&str, &mut serde_json::Value)>;
    let cases: [(Edit, &str); 6] = [
        (Box::new(drop_input("MarketFactory", "createMarket", 0)), "createMarket"),
        // The attested gate's set (issue 35): `tally` without its quote.
        (Box::new(drop_input("AttestorSet", "tally", 4)), "tally"),
        (Box::new(drop_input("MarketFactory", "MarketCreated", 8)), "MarketCreated"),
        (Box::new(drop_input("RiskGate", "submitVerdict", 3)), "submitVerdict"),
        (Box::new(drop_input("RiskGate", "Decision", 2)), "Decision"),
        (
            Box::new(|name: &str, json: &mut serde_json::Value| {
                if name == "RiskGate" {
                    json["abi"]
                        .as_array_mut()
                        .expect("abi")
                        .retain(|e| e["name"] != "ReadBlockInFuture");
                }
            }),
            "ReadBlockInFuture",
        ),
    ];
    for (edit, missing) in cases {
        let got = copy(&*edit);
        let named = match &got {
            Err(Error::MissingFunction { name, .. })
            | Err(Error::MissingEvent { name, .. })
            | Err(Error::MissingError { name, .. }) => *name,
            other => panic!("without the new {missing}: {other:?}"),
        };
        assert_eq!(named, missing);
    }
    let _ = std::fs::remove_dir_all(&dir);
}
