//! The hostile corpus against the reference model, the compiled gate in revm, and the compiled
//! gate on a real anvil: 100 % of hostile answers refused with the exact `UnknownVerdict` data,
//! 100 % of valid trimmed forms accepted as their verdict.

mod common;

use gate_sim::{
    corpus::{self, Expect},
    evm::{self, AnvilChain, RevmChain},
};

fn entries() -> Vec<corpus::Entry> {
    corpus::load(&corpus::default_corpus_path()).expect("corpus loads")
}

#[test]
fn corpus_has_at_least_200_hostile_answers_and_every_valid_form() {
    let e = entries();
    let hostile = e.iter().filter(|x| x.expect == Expect::Refuse).count();
    assert!(hostile >= 200, "only {hostile} hostile answers");
    // Each of the three tokens appears among the valid forms, with trims on both sides.
    for token in ["ABSTAIN", "BUY_UP", "BUY_DOWN"] {
        let forms = e
            .iter()
            .filter(|x| matches!(x.expect, Expect::Accept(v) if v.token() == token))
            .count();
        assert!(forms >= 10, "{token}: {forms} valid forms");
    }
    // The 100 KB answers are there (the length check must not depend on the content).
    assert!(e.iter().any(|x| x.raw.len() >= 100_000));
}

#[test]
fn reference_model_refuses_every_hostile_answer_and_accepts_every_valid_one() {
    let tally = corpus::run_reference(&entries());
    println!("{}", tally.summary("reference model"));
    assert!(tally.all_right(), "{:?}", tally.wrong);
}

#[test]
fn compiled_gate_in_revm_refuses_every_hostile_answer_and_accepts_every_valid_one() {
    let artifact = common::gate_artifact();
    let tally = corpus::run_contract(&mut RevmChain::new(), &artifact, &entries()).expect("runs");
    println!("{}", tally.summary("RiskGate in revm"));
    assert_eq!(tally.hostile_refused, tally.hostile);
    assert_eq!(tally.valid_accepted, tally.valid);
    assert!(tally.all_right(), "{:?}", tally.wrong);
}

#[test]
fn compiled_gate_on_anvil_refuses_every_hostile_answer_and_accepts_every_valid_one() {
    let artifact = common::gate_artifact();
    let mut chain = AnvilChain::spawn(&evm::default_anvil_path()).expect("anvil starts");
    let tally = corpus::run_contract(&mut chain, &artifact, &entries()).expect("runs");
    println!("{}", tally.summary("RiskGate on anvil"));
    assert!(tally.all_right(), "{:?}", tally.wrong);
}
