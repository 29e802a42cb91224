//! Prints a forge test contract whose functions are rendered disagreements with the reference's
//! (correct) expectations, one of each kind; `forge test` on it must pass against the real gate.
//! Used to check the renderer end to end: cargo run --example render_forge > some.t.sol
use alloy::primitives::{Address, Bytes, U256};
use alloy::sol_types::SolCall;
use gate_sim::{
    abi,
    diff::{self, Mismatch},
    evm::{Deployed, Outcome},
    model::{self, ConstructorError, GateConfig, Quote, Snapshot},
    sim,
};

fn main() {
    let config = GateConfig {
        bounds: sim::default_bounds(),
        trusted_resolvers: vec![Address::with_last_byte(1), Address::repeat_byte(0xab)],
        trusted_creators: vec![Address::with_last_byte(2)],
        keeper: abi::DUMMY_KEEPER,
        collateral: abi::DUMMY_COLLATERAL,
        factory_collateral: abi::DUMMY_COLLATERAL,
    };
    let snapshot = Snapshot {
        best_bid: U256::from(400_000u64),
        best_ask: U256::from(450_001u64),
        tick_size: U256::from(10_000u64),
        lot_size: U256::from(3_000_000u64),
        min_quantity: U256::from(1u64),
        expiry_sec: 10_000,
        now_sec: 1_000,
        finalized: false,
        open_positions: 0,
        open_notional: U256::ZERO,
        collateral_available: U256::MAX,
        resolver_trusted: true,
        held_side: model::HELD_UP,
        high_water_mark: U256::MAX,
        creator_trusted: true,
    };
    let quote = Quote { max_price_paid: U256::from(470_000u64), deadline_sec: 1_000 };
    let unused = Outcome::Halted("not run".into());
    let mut cases = Vec::new();
    // A pass (H = MAX and collateral MAX: the drawdown is exactly the cost) and a refusal by
    // rules 15 and 17 (quote below the price, DOWN held on a BUY_UP).
    for (s, q) in [
        (snapshot, quote),
        (
            Snapshot { held_side: model::HELD_DOWN, ..snapshot },
            Quote { max_price_paid: U256::from(459_999u64), ..quote },
        ),
    ] {
        cases.push(Mismatch::Evaluate {
            config: config.clone(),
            snapshot: Box::new(s),
            quote: q,
            verdict: 1,
            expected: Outcome::Returned(abi::decision_return_data(&model::evaluate(
                &config.bounds,
                &s,
                &q,
                1,
            ))),
            got: unused.clone(),
        });
    }
    for (answer, dirty) in [
        (&b"\"BUY_DOWN\"\n"[..], false),
        (b"BUY_UP\xc2\xa0", false),
        (&[b' '; 65][..], false),
        (b"BUY_UP", true),
        (b"BUY", true),
    ] {
        let calldata = if dirty {
            abi::parse_verdict_calldata_dirty(answer)
        } else {
            abi::parse_verdict_calldata(answer)
        };
        cases.push(Mismatch::Parse {
            config: config.clone(),
            answer: answer.to_vec(),
            calldata,
            expected: diff::expected_parse(answer),
            got: unused.clone(),
        });
    }
    let mut broken = config.clone();
    broken.bounds.min_headroom_secs = 119;
    let err: Bytes = abi::constructor_error_data(&ConstructorError::MinHeadroomBelowFloor {
        min_headroom: 119,
        floor: 120,
    });
    cases.push(Mismatch::Deploy {
        config: broken,
        expected: vec![err],
        got: Deployed::Failed(unused.clone()),
    });
    let wrong_factory = GateConfig { factory_collateral: abi::OTHER_COLLATERAL, ..config.clone() };
    cases.push(Mismatch::Deploy {
        expected: model::constructor_errors(&wrong_factory)
            .iter()
            .map(abi::constructor_error_data)
            .collect(),
        config: wrong_factory,
        got: Deployed::Failed(unused.clone()),
    });
    cases.push(Mismatch::View {
        name: "paramsHash",
        calldata: abi::IRiskGate::paramsHashCall {}.abi_encode().into(),
        expected: Outcome::Returned(
            abi::IRiskGate::paramsHashCall::abi_encode_returns(&abi::params_hash(&config)).into(),
        ),
        config: config.clone(),
        got: unused,
    });
    println!("// SPDX-License-Identifier: MIT\npragma solidity 0.8.30;\n");
    println!("import {{Test}} from \"../utils/Test.sol\";\nimport {{RiskGate}} from \"../../src/RiskGate.sol\";\nimport {{MarketFactory}} from \"../../src/venue/MarketFactory.sol\";\nimport {{IRiskGate}} from \"../../src/interfaces/IRiskGate.sol\";\n");
    println!("contract GateSimRenderCheck is Test {{");
    for (i, m) in cases.iter().enumerate() {
        println!("{}", gate_sim::forge::render(m, &format!("test_render_{i}")));
    }
    println!("}}");
}
