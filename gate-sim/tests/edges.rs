//! A fixed differential over the edges, so they are covered whatever the random strategies
//! draw: every bounds set below crossed with every snapshot edge and every verdict code, run on
//! the compiled gate in revm and compared byte for byte with the reference model.

mod common;

use alloy::primitives::U256;
use gate_sim::{
    diff,
    evm::{Chain, Deployed, RevmChain},
    model::{Bounds, Snapshot},
};

fn u(v: u64) -> U256 {
    U256::from(v)
}

fn bounds_edges() -> Vec<Bounds> {
    let base = Bounds {
        min_price: u(300_000),
        max_price: u(700_000),
        max_size: u(1_000),
        min_headroom_secs: 3_600,
        max_concurrent: 3,
        max_notional: u(10_000),
    };
    vec![
        base,
        // The widest band, the smallest headroom, one position.
        Bounds {
            min_price: u(1),
            max_price: u(999_999),
            min_headroom_secs: 120,
            max_concurrent: 1,
            ..base
        },
        // Everything at the top of its type.
        Bounds {
            max_size: U256::MAX,
            min_headroom_secs: u32::MAX,
            max_concurrent: 255,
            max_notional: U256::MAX,
            ..base
        },
        // The narrowest band.
        Bounds { min_price: u(499_999), max_price: u(500_000), max_size: u(1), ..base },
    ]
}

fn snapshot_edges() -> Vec<Snapshot> {
    let base = Snapshot {
        best_bid: u(400_000),
        best_ask: u(450_000),
        tick_size: u(10_000),
        lot_size: u(10),
        min_quantity: u(10),
        expiry_sec: 20_000,
        now_sec: 10_000,
        finalized: false,
        open_positions: 0,
        open_notional: U256::ZERO,
        collateral_available: u(1_000_000),
    };
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
        (u64::MAX, u64::MAX - 120),
    ] {
        out.push(Snapshot { expiry_sec: expiry, now_sec: now, ..base });
    }
    for n in [0u8, 1, 2, 3, 254, 255] {
        out.push(Snapshot { open_positions: n, ..base });
    }
    for v in [u(0), u(449), u(450), u(451), u(9_550), u(9_551), U256::MAX - u(1), U256::MAX] {
        out.push(Snapshot { open_notional: v, ..base });
        out.push(Snapshot { collateral_available: v, ..base });
        out.push(Snapshot { min_quantity: v, ..base });
    }
    out.push(Snapshot { finalized: true, ..base });
    out.push(Snapshot {
        best_ask: U256::MAX,
        open_notional: U256::MAX,
        collateral_available: U256::MAX,
        ..base
    });
    out
}

#[test]
fn every_edge_agrees_with_the_reference_in_revm() {
    let artifact = common::gate_artifact();
    let mut chain = RevmChain::new();
    let mut checked = 0;
    for bounds in bounds_edges() {
        let Deployed::At(gate) = chain.deploy(artifact.initcode(&bounds)).expect("deploys") else {
            panic!("{bounds:?} must deploy");
        };
        for snapshot in snapshot_edges() {
            for verdict in [0u8, 1, 2, 3, 255] {
                let found = diff::check_evaluate(&mut chain, gate, &bounds, &snapshot, verdict)
                    .expect("call runs");
                if let Some(m) = found {
                    panic!("{}\n\n{}", m.describe(), m.forge_test("test_gateSim_edge"));
                }
                checked += 1;
            }
        }
    }
    assert!(checked > 1_000, "{checked}");
}
