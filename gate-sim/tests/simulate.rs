//! The simulator through both gates: zero violations and, through the compiled gate, zero
//! disagreements with the reference, for every model.

mod common;

use gate_sim::sim::{self, ModelKind, SimConfig};

fn config(model: ModelKind) -> SimConfig {
    SimConfig {
        markets: 20,
        steps: 1_000,
        seed: 11,
        model,
        bounds: sim::default_bounds(),
        initial_collateral: alloy::primitives::U256::from(1_000_000_000u64),
        step_secs: 60,
    }
}

#[test]
fn reference_gate_never_lets_a_violation_through() {
    for model in [ModelKind::Builtin, ModelKind::Random, ModelKind::Hostile] {
        let r = sim::run(&config(model), None).expect("runs");
        assert_eq!(r.decisions, 20_000);
        assert_eq!(r.violations, 0, "{:?}", r.violation_examples);
        assert!(r.accepted() > 0, "{model:?}: no order accepted, the checks saw nothing");
        // Every decision has exactly one reason.
        assert_eq!(r.by_reason.iter().sum::<u64>(), r.decisions);
    }
}

#[test]
fn compiled_gate_agrees_with_the_reference_through_the_simulation() {
    let artifact = common::gate_artifact();
    for model in [ModelKind::Builtin, ModelKind::Hostile] {
        let r = sim::run(&config(model), Some(&artifact)).expect("runs");
        assert_eq!(r.violations, 0, "{:?}", r.violation_examples);
        assert_eq!(r.disagreements, 0);
        let reference = sim::run(&config(model), None).expect("runs");
        // Same seed, same decisions: the breakdowns match exactly.
        assert_eq!(r.by_reason, reference.by_reason);
        assert_eq!(r.by_rule, reference.by_rule);
    }
}
