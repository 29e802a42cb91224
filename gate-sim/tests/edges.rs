//! A fixed differential over the edges, so they are covered whatever the random strategies
//! draw: every configuration below crossed with every snapshot edge, every quote edge and every
//! verdict code, run on the compiled gate in revm and compared byte for byte with the reference
//! model; and every reason label, verbatim.

mod common;

use alloy::{
    primitives::{Address, Bytes, U256},
    sol_types::SolCall,
};
use gate_sim::{
    abi::{self, IRiskGate},
    diff::{self, Fixture},
    evm::{Chain, Deployed, Outcome, RevmChain},
    model::{self, Bounds, GateConfig, Quote, Snapshot},
};

fn u(v: u64) -> U256 {
    U256::from(v)
}

fn config(bounds: Bounds) -> GateConfig {
    GateConfig {
        bounds,
        trusted_resolvers: vec![Address::with_last_byte(1), Address::repeat_byte(0xff)],
        trusted_creators: vec![Address::with_last_byte(2)],
        keeper: abi::DUMMY_KEEPER,
        collateral: abi::DUMMY_COLLATERAL,
        factory_collateral: abi::DUMMY_COLLATERAL,
    }
}

fn bounds_edges() -> Vec<Bounds> {
    let base = Bounds {
        min_price: u(300_000),
        max_price: u(700_000),
        max_size: u(1_000),
        min_headroom_secs: 3_600,
        max_concurrent: 3,
        max_notional: u(10_000),
        max_horizon_secs: 86_400,
        max_drawdown: u(20_000),
        write_off_grace_secs: 3_600,
        min_fill_bps: 2_500,
    };
    vec![
        base,
        // The widest band, the smallest headroom and horizon, one position, drawdown 1.
        Bounds {
            min_price: u(1),
            max_price: u(999_999),
            min_headroom_secs: 120,
            max_concurrent: 1,
            max_horizon_secs: 120,
            max_drawdown: u(1),
            min_fill_bps: 1,
            ..base
        },
        // Everything at the top of its type.
        Bounds {
            max_size: U256::MAX,
            min_headroom_secs: u32::MAX,
            max_concurrent: 255,
            max_notional: U256::MAX,
            max_horizon_secs: u32::MAX,
            max_drawdown: U256::MAX,
            write_off_grace_secs: u32::MAX,
            min_fill_bps: 10_000,
            ..base
        },
        // The narrowest band.
        Bounds { min_price: u(499_999), max_price: u(500_000), max_size: u(1), ..base },
    ]
}

fn snapshot_edges() -> Vec<Snapshot> {
    let base = gate_sim::fixtures::healthy_snapshot();
    let mut out = vec![base];
    for v in [u(0), u(1), u(499_999), u(500_000), u(999_999), u(1_000_000), u(1_000_001), U256::MAX]
    {
        out.push(Snapshot { best_bid: v, ..base });
        out.push(Snapshot { best_ask: v, ..base });
        out.push(Snapshot { best_bid: v, best_ask: v, tick_size: U256::ZERO, ..base });
    }
    for step in [u(0), u(1), u(3), u(333_333), u(1_000_000), u(1_000_001), U256::MAX] {
        out.push(Snapshot { tick_size: step, best_ask: u(450_001), best_bid: u(409_999), ..base });
        out.push(Snapshot { lot_size: step, ..base });
    }
    for (expiry, now) in [
        (0, 0),
        (0, u64::MAX),
        (u64::MAX, 0),
        (13_599, 10_000),
        (13_600, 10_000),
        (10_000, 10_000),
        (96_400, 10_000),
        (96_401, 10_000),
        (u64::MAX, u64::MAX - 120),
    ] {
        out.push(Snapshot { expiry_sec: expiry, now_sec: now, ..base });
    }
    for n in [0u8, 1, 2, 3, 254, 255] {
        out.push(Snapshot { open_positions: n, ..base });
        out.push(Snapshot { held_side: n, ..base });
    }
    for v in [u(0), u(449), u(450), u(451), u(9_550), u(9_551), U256::MAX - u(1), U256::MAX] {
        out.push(Snapshot { open_notional: v, ..base });
        out.push(Snapshot { collateral_available: v, ..base });
        out.push(Snapshot { min_quantity: v, ..base });
    }
    // The drawdown boundary of the first bounds set (cost 450 at the keeper's UP limit, H =
    // 1_019_550 is exactly 20_000 above 1_000_000 - 450), and H near 2^256.
    for h in [u(1_019_549), u(1_019_550), u(1_019_551), U256::MAX - u(1), U256::MAX] {
        out.push(Snapshot { high_water_mark: h, ..base });
        out.push(Snapshot { high_water_mark: h, collateral_available: U256::MAX, ..base });
    }
    out.push(Snapshot { resolver_trusted: false, ..base });
    out.push(Snapshot { creator_trusted: false, ..base });
    out.push(Snapshot { creator_trusted: false, resolver_trusted: false, ..base });
    // Rule 20 around its boundary for the first bounds set (quantity 1000, 25 %): the smallest
    // resting order m must reach ceil(1000 * 2500 / 640_000) = 4; and m = 1 with no grid.
    for (lot, min) in [(1u64, 3u64), (1, 4), (3, 0), (4, 0), (0, 0), (0, 1), (1, 1), (2, 3)] {
        out.push(Snapshot { lot_size: u(lot), min_quantity: u(min), ..base });
    }
    out.push(Snapshot { finalized: true, ..base });
    out.push(Snapshot {
        best_ask: U256::MAX,
        open_notional: U256::MAX,
        collateral_available: U256::MAX,
        high_water_mark: U256::MAX,
        ..base
    });
    out
}

/// Quotes around the base book's prices (UP 450_000, DOWN 600_000), the grid and the deadline.
fn quote_edges() -> Vec<Quote> {
    let q = |p: U256, d: u64| Quote { max_price_paid: p, deadline_sec: d };
    vec![
        q(u(452_250), 10_000),
        q(u(603_000), 10_000),
        q(u(449_999), 10_000),
        q(u(450_000), 10_000),
        q(u(599_999), 10_000),
        q(u(600_000), 10_000),
        q(u(459_999), 10_000),
        q(u(609_999), 10_000),
        q(U256::ZERO, 10_000),
        q(u(1_000_000), 10_000),
        q(U256::MAX, u64::MAX),
        q(u(452_250), 9_999),
        q(u(452_250), 0),
    ]
}

#[test]
fn every_edge_agrees_with_the_reference_in_revm() {
    let artifact = common::gate_artifact();
    let mut chain = RevmChain::new();
    let fixture = Fixture::deploy(&mut chain, &artifact).expect("factories deploy");
    let mut checked = 0;
    for bounds in bounds_edges() {
        let config = config(bounds);
        let initcode = artifact.initcode(&config, fixture.factory);
        let Deployed::At(gate) = chain.deploy(initcode).expect("deploys") else {
            panic!("{config:?} must deploy");
        };
        if let Some(m) = diff::check_views(&mut chain, gate, &config).expect("calls run") {
            panic!("{}\n\n{}", m.describe(), gate_sim::forge::render(&m, "test_gateSim_edge"));
        }
        for snapshot in snapshot_edges() {
            for quote in quote_edges() {
                for verdict in [0u8, 1, 2, 3, 255] {
                    let found =
                        diff::check_evaluate(&mut chain, gate, &config, &snapshot, &quote, verdict)
                            .expect("call runs");
                    if let Some(m) = found {
                        panic!(
                            "{}\n\n{}",
                            m.describe(),
                            gate_sim::forge::render(&m, "test_gateSim_edge")
                        );
                    }
                    checked += 1;
                }
            }
        }
    }
    assert!(checked > 10_000, "{checked}");
}

#[test]
fn reason_labels_are_verbatim_and_21_is_unknown() {
    let artifact = common::gate_artifact();
    let mut chain = RevmChain::new();
    let fixture = Fixture::deploy(&mut chain, &artifact).expect("factories deploy");
    let config = config(bounds_edges()[0]);
    let Deployed::At(gate) =
        chain.deploy(artifact.initcode(&config, fixture.factory)).expect("deploys")
    else {
        panic!("must deploy");
    };
    for reason in 0u8..=23 {
        let got = chain
            .call(gate, Bytes::from(IRiskGate::reasonLabelCall { reason }.abi_encode()))
            .expect("call runs");
        let expected = match model::reason_label(reason) {
            Some(label) => Outcome::Returned(
                IRiskGate::reasonLabelCall::abi_encode_returns(&label.to_string()).into(),
            ),
            None => Outcome::Reverted(
                alloy::sol_types::SolError::abi_encode(&IRiskGate::UnknownReason { reason }).into(),
            ),
        };
        assert_eq!(got, expected, "reasonLabel({reason})");
    }
}

#[test]
fn the_constructor_refuses_a_keeper_that_is_trusted() {
    let artifact = common::gate_artifact();
    let mut chain = RevmChain::new();
    let fixture = Fixture::deploy(&mut chain, &artifact).expect("factories deploy");
    let keeper = abi::DUMMY_KEEPER;
    let base = config(bounds_edges()[0]);
    // 0x4b.. sorts between 0x00..01 and 0xff..: the lists stay ascending.
    let as_resolver = GateConfig {
        trusted_resolvers: vec![Address::with_last_byte(1), keeper, Address::repeat_byte(0xff)],
        ..base.clone()
    };
    let as_creator = GateConfig { trusted_creators: vec![keeper], ..base };
    for (config, error) in [
        (as_resolver, model::ConstructorError::KeeperIsTrustedResolver { keeper }),
        (as_creator, model::ConstructorError::KeeperIsTrustedCreator { keeper }),
    ] {
        assert_eq!(model::constructor_errors(&config), vec![error]);
        let got = chain.deploy(artifact.initcode(&config, fixture.factory)).expect("runs");
        let expected = abi::constructor_error_data(&error);
        assert_eq!(got, Deployed::Failed(Outcome::Reverted(expected)), "{error:?}");
    }
}

#[test]
fn the_constructor_refuses_a_factory_over_another_collateral() {
    let artifact = common::gate_artifact();
    let mut chain = RevmChain::new();
    let fixture = Fixture::deploy(&mut chain, &artifact).expect("factories deploy");
    let config =
        GateConfig { factory_collateral: abi::OTHER_COLLATERAL, ..config(bounds_edges()[0]) };
    let got = chain.deploy(artifact.initcode(&config, fixture.wrong_factory)).expect("runs");
    let expected =
        abi::constructor_error_data(&model::ConstructorError::FactoryCollateralMismatch {
            factory_collateral: abi::OTHER_COLLATERAL,
            collateral: abi::DUMMY_COLLATERAL,
        });
    assert_eq!(got, Deployed::Failed(Outcome::Reverted(expected)));
}
