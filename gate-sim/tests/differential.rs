//! The differential in `make test`: 10,000 cases in-process and 500 on a real anvil, plus a
//! check that the harness itself notices a disagreement and shrinks it into a forge test.

mod common;

use alloy::primitives::{Address, Bytes};
use alloy::sol_types::SolCall;
use gate_sim::{
    abi::{IAttestorSet, IRiskGate},
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
    // Then a quarter as many `tally` calls on attested gates, some settings refused.
    assert!(report.attested_calls >= 2_500, "{report:?}");
    assert!(report.attested_refused > 0, "{report:?}");
    println!(
        "revm: {} cases, {:.0} cases/s; {} attested calls on {} gates in {:.2} s",
        report.rows,
        report.rows_per_sec(),
        report.attested_calls,
        report.attested_gates,
        report.attested_elapsed.as_secs_f64()
    );
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
    assert!(report.attested_calls >= 125, "{report:?}");
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

    fn chain_id(&mut self) -> evm::Result<u64> {
        self.0.chain_id()
    }

    /// `tally` reports reason 0 whenever the real set said 21 (answer not attested).
    fn call_at_block(&mut self, to: Address, data: Bytes, block: u64) -> evm::Result<Outcome> {
        let out = self.0.call_at_block(to, data.clone(), block)?;
        if data.starts_with(&IAttestorSet::tallyCall::SELECTOR) {
            if let Outcome::Returned(ret) = &out {
                // The judgment's first word after its offset is the reason.
                if ret.len() > 64 && ret[63] == 21 {
                    let mut forged = ret.to_vec();
                    forged[63] = 0;
                    return Ok(Outcome::Returned(forged.into()));
                }
            }
        }
        Ok(out)
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

#[test]
fn a_planted_attested_disagreement_is_found_shrunk_and_rendered_as_a_forge_test() {
    let artifact = common::gate_artifact();
    let mut chain = Tampered(RevmChain::new());
    // No relayed rows (their `evaluate` is tampered with too), attested calls only.
    let plan = diff::Plan { cases: 0, attested_calls: 2_000, seed: 3 };
    let report = diff::run_plan(&mut chain, &artifact, &plan, &mut |_, _| {}).expect("runs");
    let m = report.mismatch.expect("the forged judgment must be noticed");
    let diff::Mismatch::Attested(a) = &m else { panic!("wrong kind: {m:?}") };
    let diff::AttestedWhat::Tally { expected, got, notes, .. } = &a.what else {
        panic!("wrong kind: {a:?}")
    };
    let reason = |o: &Outcome| match o {
        Outcome::Returned(d) => gate_sim::abi::decode_judgment(d).map(|j| j.reason),
        _ => None,
    };
    assert_eq!((reason(&expected[0]), reason(got)), (Some(21), Some(0)));
    // Shrunk: one call, and few answers (a lone answer short of k, or none, is enough).
    assert!(notes.len() <= 2, "not shrunk: {notes:?}");
    let description = m.describe();
    assert!(description.contains("tally at block"), "{description}");
    let test = gate_sim::forge::render(&m, "test_gateSim_plantedAttested");
    assert!(test.contains("function test_gateSim_plantedAttested() public {"), "{test}");
    assert!(test.contains("IRiskGate.Attestors memory attestors"), "{test}");
    assert!(test.contains("vm.roll("), "{test}");
    assert!(test.contains("vm.chainId(1);"), "{test}");
    assert!(test.contains("gate.attestorSet().staticcall(hex\""), "{test}");
    assert!(test.contains("assertEq(ok, true);"), "{test}");
    println!("{description}\n\n{test}");
}
