//! Prints a forge test contract whose functions are rendered disagreements with the reference's
//! (correct) expectations, one of each kind; `forge test` on it must pass against the real gate.
//! Used to check the renderer end to end: cargo run --example render_forge > some.t.sol
use alloy::primitives::{Bytes, U256};
use gate_sim::{
    abi,
    diff::{self, Mismatch},
    evm::{Deployed, Outcome},
    model::{self, BoundsError, Snapshot},
    sim,
};

fn main() {
    let bounds = sim::default_bounds();
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
    };
    let unused = Outcome::Halted("not run".into());
    let mut cases = vec![Mismatch::Evaluate {
        bounds,
        snapshot: Box::new(snapshot),
        verdict: 1,
        expected: Outcome::Returned(abi::decision_return_data(&model::evaluate(
            &bounds, &snapshot, 1,
        ))),
        got: unused.clone(),
    }];
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
            bounds,
            answer: answer.to_vec(),
            calldata,
            expected: diff::expected_parse(answer),
            got: unused.clone(),
        });
    }
    let mut broken = bounds;
    broken.min_headroom_secs = 119;
    let err: Bytes = abi::bounds_error_data(&BoundsError::MinHeadroomBelowFloor {
        min_headroom: 119,
        floor: 120,
    });
    cases.push(Mismatch::Deploy {
        bounds: broken,
        expected: vec![err],
        got: Deployed::Failed(unused),
    });
    println!("// SPDX-License-Identifier: MIT\npragma solidity 0.8.30;\n");
    println!("import {{Test}} from \"../utils/Test.sol\";\nimport {{RiskGate}} from \"../../src/RiskGate.sol\";\nimport {{IRiskGate}} from \"../../src/interfaces/IRiskGate.sol\";\n");
    println!("contract GateSimRenderCheck is Test {{");
    for (i, m) in cases.iter().enumerate() {
        println!("{}", m.forge_test(&format!("test_render_{i}")));
    }
    println!("}}");
}
