//! The `readBlock` rule of `submitVerdict`, held to the compiled gate in revm and on a real
//! anvil: any block up to the one the call is mined in is accepted and published verbatim in the
//! `Decision` (ABSTAIN, an unparseable answer, a trade); one above it, and 2^64 - 1, revert
//! `ReadBlockInFuture(readBlock, currentBlock)` with both values and publish nothing. The rule
//! comes after the keeper and pause checks and before everything else. A seeded run draws blocks
//! around the current one and compares the compiled gate with the reference world.

mod common;

use alloy::{
    primitives::{keccak256, Address, Bytes, U256},
    sol_types::{SolCall, SolError, SolEvent, SolValue},
};
use gate_sim::{
    abi::{self, IBinaryMarket, IGateSubmit, IMarketFactory, IRiskGate, ITestCollateral},
    adversary,
    evm::{self, AnvilChain, Chain, Deployed, Outcome},
    model::{self, GateConfig, Quote, ReadBlockInFuture, Verdict},
    world::{self, EvmWorld, MarketSpec, ReferenceWorld, World, KEEPER, MAKER, PROMPT_HASH},
};

const NOW: u64 = 1_700_000_000;
const BLOCK: u64 = 1_000;

fn config() -> GateConfig {
    GateConfig {
        bounds: adversary::default_bounds(),
        trusted_resolvers: vec![world::HONEST_RESOLVER],
        trusted_creators: vec![MAKER],
        keeper: KEEPER,
        collateral: Address::default(),
        factory_collateral: Address::default(),
    }
}

fn spec() -> MarketSpec {
    MarketSpec {
        question: "Will the read-block test market resolve UP?".into(),
        tick: 10_000,
        lot: U256::from(1_000_000u64),
        min_quantity: U256::from(1_000_000u64),
        expiry_sec: NOW + 3_600,
        resolver: world::HONEST_RESOLVER,
    }
}

/// Both worlds with one market resting 1,000 tUSD of asks at 0.42, at block [`BLOCK`].
fn worlds() -> (EvmWorld, ReferenceWorld, Address, Address) {
    let artifact = common::gate_artifact();
    let funds = U256::from(1_000_000_000u64);
    let mut evm = EvmWorld::deploy(&artifact, &config(), funds, NOW).expect("deploys");
    let mut reference = ReferenceWorld::new(&config(), funds, NOW);
    let mut markets = [Address::ZERO; 2];
    for (i, w) in [&mut evm as &mut dyn World, &mut reference].into_iter().enumerate() {
        let m = w.create_market(MAKER, &spec()).expect("market");
        w.place(m, MAKER, false, 420_000, U256::from(1_000_000_000u64)).expect("ask");
        markets[i] = m;
    }
    evm.set_block(BLOCK);
    reference.set_block(BLOCK);
    (evm, reference, markets[0], markets[1])
}

fn buy_up_quote() -> Quote {
    world::keeper_quote(Some(Verdict::BuyUp), 0, 420_000, NOW, 50, 60)
}

fn future(read_block: u64, current_block: u64) -> Bytes {
    IGateSubmit::ReadBlockInFuture {
        readBlock: read_block,
        currentBlock: U256::from(current_block),
    }
    .abi_encode()
    .into()
}

#[test]
fn blocks_up_to_the_current_one_are_published_verbatim_by_the_compiled_gate() {
    let (mut evm, mut reference, m, rm) = worlds();
    let cases: [(&[u8], u64, Quote, u8, u8); 4] = [
        // ABSTAIN read at the current block itself.
        (b"ABSTAIN", BLOCK, Quote::default(), 1, 0),
        // An unparseable answer read at block 0.
        (b"maybe", 0, Quote::default(), 11, 255),
        // A trade read one block back.
        (b"BUY_UP", BLOCK - 1, buy_up_quote(), 0, 1),
        // A trade read at the current block.
        (b"BUY_UP", BLOCK, buy_up_quote(), 0, 1),
    ];
    for (raw, read_block, quote, reason, verdict) in cases {
        let row = evm.submit(m, raw, read_block, &quote).expect("runs").expect("accepted");
        assert_eq!(row.read_block, read_block, "{raw:?}: the Decision's readBlock");
        assert_eq!((row.reason, row.verdict), (reason, verdict), "{row:?}");
        if reason == 0 {
            assert!(!row.order.filled.is_zero(), "{row:?}");
        }
        let expected =
            reference.submit(rm, raw, read_block, &quote).expect("runs").expect("accepted");
        assert_eq!(
            (expected.read_block, expected.reason, expected.verdict, expected.order),
            (row.read_block, row.reason, row.verdict, row.order)
        );
    }
    assert!(evm.disagreements().is_empty(), "{:?}", evm.disagreements());

    // The same read straight from the log, with nothing of the world in between.
    let gate = evm.gate();
    let data = abi::submit_verdict_calldata(m, b"ABSTAIN", PROMPT_HASH, 7, &Quote::default());
    let receipt = evm.chain_mut().send(KEEPER, gate, data).expect("runs");
    assert!(matches!(receipt.outcome, Outcome::Returned(_)), "{receipt:?}");
    let decisions: Vec<_> = receipt
        .logs
        .iter()
        .filter_map(|l| IGateSubmit::Decision::decode_log(l).ok())
        .map(|l| l.data)
        .collect();
    let [d] = decisions.as_slice() else { panic!("one Decision: {:?}", receipt.logs) };
    assert_eq!(
        (d.market, d.promptHash, d.readBlock, d.reason, d.verdict),
        (m, PROMPT_HASH, 7, 1, 0)
    );
    assert_eq!(
        (d.rawHead.as_ref(), d.rawLength, d.rawHash),
        (&b"ABSTAIN"[..], U256::from(7u64), keccak256(b"ABSTAIN"))
    );
    // readBlock is data, not a topic: market, promptHash and reason are the three indexed.
    let log = receipt.logs.iter().find(|l| l.address == gate).expect("the gate's log");
    assert_eq!(log.topics().len(), 4);
    assert_eq!(U256::from_be_bytes(log.topics()[3].0), U256::from(1u64));
}

#[test]
fn blocks_above_the_current_one_revert_with_both_values_and_publish_nothing() {
    let (mut evm, mut reference, m, rm) = worlds();
    let before = evm.state().expect("state");
    for current in [BLOCK, 0, 1] {
        evm.set_block(current);
        reference.set_block(current);
        for raw in [&b"ABSTAIN"[..], b"maybe", b"BUY_UP", b"BUY_DOWN"] {
            let quote = if raw == b"BUY_UP" { buy_up_quote() } else { Quote::default() };
            for read_block in [current + 1, current + 2, u64::MAX] {
                let e = ReadBlockInFuture { read_block, current_block: current };
                let got = evm.submit(m, raw, read_block, &quote).expect("runs");
                assert_eq!(got, Err(e), "{raw:?} read at {read_block} in block {current}");
                let want = reference.submit(rm, raw, read_block, &quote).expect("runs");
                assert_eq!(want, Err(e));
                // The exact revert data, sent without the world.
                let gate = evm.gate();
                let data = abi::submit_verdict_calldata(m, raw, PROMPT_HASH, read_block, &quote);
                let receipt = evm.chain_mut().send(KEEPER, gate, data).expect("runs");
                assert_eq!(receipt.outcome, Outcome::Reverted(future(read_block, current)));
                assert!(receipt.logs.is_empty());
            }
        }
    }
    assert_eq!(evm.state().expect("state"), before, "a refused submission moved the gate");
    assert!(evm.disagreements().is_empty(), "{:?}", evm.disagreements());
}

#[test]
fn the_keeper_and_pause_checks_come_first_and_nothing_else_does() {
    let (mut evm, _, m, _) = worlds();
    let gate = evm.gate();
    let factory = evm.factory();
    let send = |evm: &mut EvmWorld, from: Address, market: Address, raw: &[u8], read_block: u64| {
        let data =
            abi::submit_verdict_calldata(market, raw, PROMPT_HASH, read_block, &Quote::default());
        evm.chain_mut().send(from, gate, data).expect("runs").outcome
    };
    // Not the keeper: NotKeeper, whatever the block.
    let not_keeper: Bytes =
        IGateSubmit::NotKeeper { caller: world::ATTACKER, keeper: KEEPER }.abi_encode().into();
    assert_eq!(
        send(&mut evm, world::ATTACKER, m, b"ABSTAIN", u64::MAX),
        Outcome::Reverted(not_keeper)
    );
    // Paused: GatePaused, whatever the block.
    let pause = IRiskGate::pauseCall {}.abi_encode();
    let r = evm.chain_mut().send(world::DEPLOYER, gate, pause.into()).expect("runs");
    assert!(matches!(r.outcome, Outcome::Returned(_)), "pause: {r:?}");
    let paused: Bytes = IGateSubmit::GatePaused {}.abi_encode().into();
    assert_eq!(send(&mut evm, KEEPER, m, b"ABSTAIN", u64::MAX), Outcome::Reverted(paused));
    let unpause = IRiskGate::unpauseCall {}.abi_encode();
    let r = evm.chain_mut().send(world::DEPLOYER, gate, unpause.into()).expect("runs");
    assert!(matches!(r.outcome, Outcome::Returned(_)), "unpause: {r:?}");
    // Before the market check: a look-alike market with a future block is ReadBlockInFuture;
    // at the current block it is UnknownMarket.
    let fake = Address::repeat_byte(0x99);
    assert_eq!(
        send(&mut evm, KEEPER, fake, b"BUY_UP", BLOCK + 1),
        Outcome::Reverted(future(BLOCK + 1, BLOCK))
    );
    let unknown: Bytes = IGateSubmit::UnknownMarket { market: fake, factory }.abi_encode().into();
    assert_eq!(send(&mut evm, KEEPER, fake, b"BUY_UP", BLOCK), Outcome::Reverted(unknown));
    // Before the answer is looked at: a 100 KB answer with a future block publishes nothing.
    let big = vec![b'x'; 100_000];
    assert_eq!(
        send(&mut evm, KEEPER, m, &big, u64::MAX),
        Outcome::Reverted(future(u64::MAX, BLOCK))
    );
}

/// splitmix64: a fixed stream, so a failure replays.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn pick<T: Copy>(&mut self, from: &[T]) -> T {
        from[(self.next() % from.len() as u64) as usize]
    }
}

#[test]
fn drawn_read_blocks_around_the_current_block_agree_with_the_reference() {
    let (mut evm, mut reference, m, rm) = worlds();
    let mut rng = Rng(0x5eed);
    let (mut accepted, mut refused) = (0u32, 0u32);
    for i in 0..600 {
        // The chain moves forward by 0 to 3 blocks, now and then jumps far.
        let current = match i % 50 {
            49 => rng.next() >> 1,
            _ => evm.block() + rng.next() % 4,
        };
        evm.set_block(current);
        reference.set_block(current);
        let offset = rng.pick(&[-3i64, -2, -1, 0, 0, 1, 1, 2, 3]);
        let read_block = match rng.next() % 8 {
            0 => 0,
            1 => u64::MAX,
            2 => rng.next(),
            _ => current.saturating_add_signed(offset),
        };
        let raw = rng.pick(&[&b"ABSTAIN"[..], b"BUY_UP", b" BUY_UP\n", b"BUY_DOWN", b"buy", b""]);
        let quote = match model::parse_verdict(raw) {
            Ok(Verdict::BuyUp) => buy_up_quote(),
            _ => Quote::default(),
        };
        let got = evm.submit(m, raw, read_block, &quote).expect("runs");
        let want = reference.submit(rm, raw, read_block, &quote).expect("runs");
        let what = format!("case {i}: {raw:?} read at {read_block} in block {current}");
        assert_eq!(
            got.is_ok(),
            model::check_read_block(read_block, current).is_ok(),
            "{what}: {got:?}"
        );
        match (&got, &want) {
            (Ok(g), Ok(w)) => {
                assert_eq!(g.read_block, read_block, "{what}");
                assert_eq!(
                    (g.read_block, g.reason, g.verdict, g.failed_mask, g.order),
                    (w.read_block, w.reason, w.verdict, w.failed_mask, w.order),
                    "{what}"
                );
                accepted += 1;
            }
            (Err(g), Err(w)) => {
                assert_eq!(*g, ReadBlockInFuture { read_block, current_block: current }, "{what}");
                assert_eq!(g, w, "{what}");
                refused += 1;
            }
            _ => panic!("{what}: compiled {got:?}, reference {want:?}"),
        }
    }
    assert!(accepted > 100 && refused > 100, "{accepted} accepted, {refused} refused");
    assert!(evm.disagreements().is_empty(), "{:?}", evm.disagreements());
}

#[test]
fn the_compiled_gate_on_anvil_publishes_read_blocks_and_refuses_future_ones() {
    let artifact = common::gate_artifact();
    let mut chain = AnvilChain::spawn(&evm::default_anvil_path()).expect("anvil starts");
    let (owner, keeper) = (chain.accounts()[0], chain.accounts()[1]);
    let deploy =
        |chain: &mut AnvilChain, code: Bytes, what: &str| match chain.deploy(code).expect("runs") {
            Deployed::At(a) => a,
            other => panic!("{what}: {other:?}"),
        };
    let token = deploy(&mut chain, artifact.collateral_initcode(), "TestCollateral");
    let factory = deploy(&mut chain, artifact.factory_initcode(token), "MarketFactory");
    let config = GateConfig {
        trusted_creators: vec![owner],
        keeper,
        collateral: token,
        factory_collateral: token,
        ..config()
    };
    assert!(model::constructor_errors(&config).is_empty(), "{config:?}");
    let gate = deploy(&mut chain, artifact.initcode(&config, factory), "RiskGate");
    let ok = |chain: &mut AnvilChain, from: Address, to: Address, data: Vec<u8>, what: &str| {
        let r = chain.send_from(from, to, data.into()).expect("mined");
        assert!(r.status, "{what}: {r:?}");
        r
    };
    let funds = U256::from(1_000_000_000_000u64);
    ok(
        &mut chain,
        owner,
        token,
        ITestCollateral::mintCall { to: gate, amount: funds }.abi_encode(),
        "mint to the gate",
    );
    ok(
        &mut chain,
        owner,
        token,
        ITestCollateral::mintCall { to: owner, amount: funds }.abi_encode(),
        "mint to the maker",
    );
    // A market an hour out on anvil's clock, created by the trusted owner.
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .expect("after 1970")
        .as_secs();
    let data = abi::create_market_calldata(
        b"Will the anvil read-block market resolve UP?",
        U256::from(10_000u64),
        U256::from(1_000_000u64),
        U256::from(1_000_000u64),
        now + 3_600,
        world::HONEST_RESOLVER,
    );
    let r = ok(&mut chain, owner, factory, data.to_vec(), "createMarket");
    let created = r
        .logs
        .iter()
        .find_map(|l| IMarketFactory::MarketCreated::decode_log(l).ok())
        .expect("MarketCreated");
    let market = created.data.market;
    ok(
        &mut chain,
        owner,
        token,
        ITestCollateral::approveCall { spender: market, amount: U256::MAX }.abi_encode(),
        "approve",
    );
    ok(
        &mut chain,
        owner,
        market,
        IBinaryMarket::placeAskCall {
            price: U256::from(420_000u64),
            quantity: U256::from(1_000_000_000u64),
        }
        .abi_encode(),
        "placeAsk",
    );

    let submit = |raw: &[u8], read_block: u64, quote: &Quote| {
        abi::submit_verdict_calldata(market, raw, PROMPT_HASH, read_block, quote)
    };
    // The block an eth_call runs in, as the gate itself reports it.
    let latest = chain.block_number().expect("block number");
    let probe = chain
        .call_from(keeper, gate, submit(b"ABSTAIN", u64::MAX, &Quote::default()))
        .expect("runs");
    let Outcome::Reverted(data) = &probe else { panic!("u64::MAX must revert: {probe:?}") };
    let e = IGateSubmit::ReadBlockInFuture::abi_decode(data).expect("ReadBlockInFuture");
    let current = u64::try_from(e.currentBlock).expect("a block number");
    assert!(
        current == latest || current == latest + 1,
        "eth_call ran in {current}, latest {latest}"
    );
    println!("anvil: eth_call sees block.number {current} with {latest} the latest mined");
    assert_eq!(probe, Outcome::Reverted(future(u64::MAX, current)));
    let reason_one = Outcome::Returned(U256::from(1u64).abi_encode().into());
    assert_eq!(
        chain
            .call_from(keeper, gate, submit(b"ABSTAIN", current, &Quote::default()))
            .expect("runs"),
        reason_one
    );
    assert_eq!(
        chain
            .call_from(keeper, gate, submit(b"ABSTAIN", current + 1, &Quote::default()))
            .expect("runs"),
        Outcome::Reverted(future(current + 1, current))
    );

    // Real transactions: each is mined in the block after the latest, so naming that block is
    // readBlock == block.number, and one more is in the future.
    let quote = Quote { max_price_paid: U256::from(430_000u64), deadline_sec: u64::MAX };
    for (raw, back, quote, reason, verdict) in [
        (&b"ABSTAIN"[..], 0u64, Quote::default(), 1u8, 0u8),
        (b"maybe", 1, Quote::default(), 11, 255),
        (b"BUY_UP", 2, quote, 0, 1),
    ] {
        let next = chain.block_number().expect("block number") + 1;
        let read_block = next - back;
        let r = chain.send_from(keeper, gate, submit(raw, read_block, &quote)).expect("mined");
        assert!(r.status && r.block_number == next, "{raw:?}: {r:?}");
        let d = r
            .logs
            .iter()
            .find_map(|l| IGateSubmit::Decision::decode_log(l).ok())
            .expect("a Decision")
            .data;
        assert_eq!(
            (d.market, d.promptHash, d.readBlock, d.reason, d.verdict),
            (market, PROMPT_HASH, read_block, reason, verdict),
            "{raw:?}"
        );
        if reason == 0 {
            assert!(!d.order.filled.is_zero(), "{d:?}");
        }
        let next = chain.block_number().expect("block number") + 1;
        let r = chain.send_from(keeper, gate, submit(raw, next + 1, &quote)).expect("mined");
        assert!(!r.status && r.logs.is_empty() && r.block_number == next, "{raw:?}: {r:?}");
    }
}
