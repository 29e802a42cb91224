//! The differential in `make test`: 10,000 cases in-process and 500 on a real anvil, plus a
//! check that the harness itself notices a disagreement and shrinks it into a forge test.

mod common;

use alloy::primitives::{Address, Bytes};
use alloy::sol_types::SolCall;
use gate_sim::{
    abi::IRiskGate,
    diff,
    evm::{self, AnvilChain, Chain, Deployed, Outcome, RevmChain},
};

#[test]
fn ten_thousand_cases_in_revm_agree_with_the_reference() {
    let artifact = common::gate_artifact();
    let report = diff::run(&mut RevmChain::new(), &artifact, 10_000, 0x5eed, &mut |_, _| {})
        .expect("differential runs");
    if let Some(m) = &report.mismatch {
        panic!("{}\n\n{}", m.describe(), gate_sim::forge::render(m, "test_gateSim_regression"));
    }
    assert!(report.rows >= 10_000);
    // Some bound sets must have gone through the constructor's refusal path too.
    assert!(report.refused_constructors > 0, "{report:?}");
    println!("revm: {} cases, {:.0} cases/s", report.rows, report.rows_per_sec());
}

#[test]
fn five_hundred_cases_on_anvil_agree_with_the_reference() {
    let artifact = common::gate_artifact();
    let mut chain = AnvilChain::spawn(&evm::default_anvil_path()).expect("anvil starts");
    let report =
        diff::run(&mut chain, &artifact, 500, 0xa11, &mut |_, _| {}).expect("differential runs");
    if let Some(m) = &report.mismatch {
        panic!("{}\n\n{}", m.describe(), gate_sim::forge::render(m, "test_gateSim_regression"));
    }
    assert!(report.rows >= 500);
}

/// A chain that lies: `evaluate` reports PASS-with-price-1 whenever the real gate said reason 3.
struct Tampered(RevmChain);

impl Chain for Tampered {
    fn name(&self) -> &'static str {
        "tampered revm"
    }

    fn deploy(&mut self, initcode: Bytes) -> evm::Result<Deployed> {
        self.0.deploy(initcode)
    }

    fn call(&mut self, to: Address, data: Bytes) -> evm::Result<Outcome> {
        let out = self.0.call(to, data.clone())?;
        if data.starts_with(&IRiskGate::evaluateCall::SELECTOR) {
            if let Outcome::Returned(ret) = &out {
                if ret.len() == 160 && ret[31] == 3 {
                    let mut forged = ret.to_vec();
                    forged[31] = 0;
                    return Ok(Outcome::Returned(forged.into()));
                }
            }
        }
        Ok(out)
    }
}

#[test]
fn a_planted_disagreement_is_found_shrunk_and_rendered_as_a_forge_test() {
    let artifact = common::gate_artifact();
    let mut chain = Tampered(RevmChain::new());
    let report = diff::run(&mut chain, &artifact, 10_000, 3, &mut |_, _| {}).expect("runs");
    let m = report.mismatch.expect("the forged answer must be noticed");
    let diff::Mismatch::Evaluate { expected, got, .. } = &m else { panic!("wrong kind: {m:?}") };
    // The reference said reason 3 (headroom), the forged contract said 0.
    let reason = |o: &Outcome| match o {
        Outcome::Returned(d) => gate_sim::abi::decode_decision(d).map(|d| d.reason),
        _ => None,
    };
    assert_eq!((reason(expected), reason(got)), (Some(3), Some(0)));
    let test = gate_sim::forge::render(&m, "test_gateSim_planted");
    assert!(test.contains("function test_gateSim_planted() public {"), "{test}");
    assert!(test.contains("assertEq(uint256(reason), 3, \"reason\");"), "{test}");
    assert!(test.contains("new RiskGate(bounds,"), "{test}");
}
