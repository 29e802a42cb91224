//! Renders a disagreement as a forge test function, ready to paste into a test contract that
//! derives from the project's `Test` base (`contracts/test/utils/Test.sol`) and imports
//! `RiskGate`, `MarketFactory` and `IRiskGate`. The expected values are the reference model's,
//! which follow the specification; the comment says what the contract returned instead.

use crate::{
    abi,
    attested::AttestorSetting,
    diff::{self, AttestedMismatch, AttestedWhat, Mismatch},
    evm::{Deployed, Outcome},
    model::{GateConfig, Quote, Snapshot},
};
use alloy::primitives::{hex, Address, U256};
use std::fmt::Write;

fn num(v: U256) -> String {
    if v == U256::MAX {
        "type(uint256).max".to_string()
    } else {
        v.to_string()
    }
}

fn bytes_literal(b: &[u8]) -> String {
    format!("hex\"{}\"", hex::encode(b))
}

/// An address as a 42-digit number, so that solc does not take it for an address literal (which
/// would need a checksum).
fn address(a: Address) -> String {
    format!("address(uint160(0x00{}))", hex::encode(a))
}

/// The bounds, the trusted list and the factory: everything `new RiskGate(...)` takes.
fn deploy_lines(out: &mut String, config: &GateConfig) {
    let b = &config.bounds;
    let _ = writeln!(out, "        IRiskGate.Params memory bounds = IRiskGate.Params({{");
    let _ = writeln!(out, "            minPrice: {},", num(b.min_price));
    let _ = writeln!(out, "            maxPrice: {},", num(b.max_price));
    let _ = writeln!(out, "            maxSize: {},", num(b.max_size));
    let _ = writeln!(out, "            minHeadroom: {},", b.min_headroom_secs);
    let _ = writeln!(out, "            maxConcurrent: {},", b.max_concurrent);
    let _ = writeln!(out, "            maxNotional: {},", num(b.max_notional));
    let _ = writeln!(out, "            maxHorizon: {},", b.max_horizon_secs);
    let _ = writeln!(out, "            maxDrawdown: {},", num(b.max_drawdown));
    let _ = writeln!(out, "            writeOffGrace: {},", b.write_off_grace_secs);
    let _ = writeln!(out, "            minFillBps: {}", b.min_fill_bps);
    let _ = writeln!(out, "        }});");
    let n = config.trusted_resolvers.len();
    let _ = writeln!(out, "        address[] memory trusted = new address[]({n});");
    for (i, a) in config.trusted_resolvers.iter().enumerate() {
        let _ = writeln!(out, "        trusted[{i}] = {};", address(*a));
    }
    let n = config.trusted_creators.len();
    let _ = writeln!(out, "        address[] memory creators = new address[]({n});");
    for (i, a) in config.trusted_creators.iter().enumerate() {
        let _ = writeln!(out, "        creators[{i}] = {};", address(*a));
    }
    let _ = writeln!(
        out,
        "        MarketFactory factory = new MarketFactory({});",
        address(config.factory_collateral)
    );
}

/// `new RiskGate(...)` with the same placeholder collateral and the keeper the differential
/// deploys with, the real factory deployed just before, and the relayed mode (no attestors).
fn new_gate(config: &GateConfig) -> String {
    format!(
        "new RiskGate(bounds, trusted, creators, {}, address(factory), {}, \
         IRiskGate.Attestors(new address[](0), 0, 0, 0), address(0))",
        address(config.collateral),
        address(config.keeper)
    )
}

fn snapshot_lines(out: &mut String, s: &Snapshot, q: &Quote) {
    let _ = writeln!(out, "        IRiskGate.Snapshot memory s = IRiskGate.Snapshot({{");
    let _ = writeln!(out, "            bestBid: {},", num(s.best_bid));
    let _ = writeln!(out, "            bestAsk: {},", num(s.best_ask));
    let _ = writeln!(out, "            tickSize: {},", num(s.tick_size));
    let _ = writeln!(out, "            lotSize: {},", num(s.lot_size));
    let _ = writeln!(out, "            minQuantity: {},", num(s.min_quantity));
    let _ = writeln!(out, "            expirySec: {},", s.expiry_sec);
    let _ = writeln!(out, "            nowSec: {},", s.now_sec);
    let _ = writeln!(out, "            finalized: {},", s.finalized);
    let _ = writeln!(out, "            openPositions: {},", s.open_positions);
    let _ = writeln!(out, "            openNotional: {},", num(s.open_notional));
    let _ = writeln!(out, "            collateralAvailable: {},", num(s.collateral_available));
    let _ = writeln!(out, "            resolverTrusted: {},", s.resolver_trusted);
    let _ = writeln!(out, "            heldSide: {},", s.held_side);
    let _ = writeln!(out, "            highWaterMark: {},", num(s.high_water_mark));
    let _ = writeln!(out, "            creatorTrusted: {}", s.creator_trusted);
    let _ = writeln!(out, "        }});");
    let _ = writeln!(
        out,
        "        IRiskGate.Quote memory q = IRiskGate.Quote({{maxPricePaid: {}, deadline: {}}});",
        num(q.max_price_paid),
        q.deadline_sec
    );
}

fn describe(o: &Outcome) -> String {
    match o {
        Outcome::Returned(d) => match abi::decode_decision(d) {
            Some(dec) if d.len() == 160 => format!(
                "returned reason {} mask {} pricePaid {} quantity {} cost {}",
                dec.reason, dec.failed_mask, dec.price_paid, dec.quantity, dec.cost
            ),
            _ => format!("returned 0x{}", hex::encode(d)),
        },
        Outcome::Reverted(d) => format!("reverted {}", abi::describe_revert(d)),
        Outcome::Halted(r) => format!("halted ({r})"),
    }
}

/// The whole test function.
pub fn render(m: &Mismatch, name: &str) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "    /// Found by `gate-sim diff`; expected values from the reference model (the spec)."
    );
    match m {
        Mismatch::Deploy { got, .. } => {
            let got = match got {
                Deployed::At(a) => format!("deployed at {a}"),
                Deployed::Failed(o) => describe(o),
            };
            let _ = writeln!(out, "    /// The contract {got}.");
        }
        Mismatch::Parse { got, .. }
        | Mismatch::Evaluate { got, .. }
        | Mismatch::View { got, .. } => {
            let _ = writeln!(out, "    /// The contract {}.", describe(got));
        }
        Mismatch::Attested(a) => {
            let got = match &a.what {
                AttestedWhat::Deploy { got: Deployed::At(at), .. } => format!("deployed at {at}"),
                AttestedWhat::Deploy { got: Deployed::Failed(o), .. } => diff::show_outcome(o),
                AttestedWhat::View { got, .. } | AttestedWhat::Tally { got, .. } => {
                    diff::show_outcome(got)
                }
            };
            let _ = writeln!(out, "    /// The contract {got}.");
        }
    }
    if let Mismatch::Attested(a) = m {
        let _ = writeln!(out, "    function {name}() public {{");
        attested_body(&mut out, a);
        let _ = writeln!(out, "    }}");
        return out;
    }
    let _ = writeln!(out, "    function {name}() public {{");
    match m {
        Mismatch::Deploy { config, expected, .. } => {
            deploy_lines(&mut out, config);
            if let Some(first) = expected.first() {
                for alt in expected.iter().skip(1) {
                    let _ = writeln!(
                        out,
                        "        // also acceptable (several rules broken): {}",
                        abi::describe_revert(alt)
                    );
                }
                let _ = writeln!(out, "        // {}", abi::describe_revert(first));
                let _ = writeln!(out, "        vm.expectRevert({});", bytes_literal(first));
                let _ = writeln!(out, "        {};", new_gate(config));
            } else {
                let _ = writeln!(out, "        RiskGate gate = {};", new_gate(config));
                let _ = writeln!(out, "        assertTrue(address(gate).code.length > 0);");
            }
        }
        Mismatch::Parse { config, answer, calldata, expected, .. } => {
            deploy_lines(&mut out, config);
            let _ = writeln!(out, "        RiskGate gate = {};", new_gate(config));
            let _ = writeln!(out, "        // raw answer: {:?}", String::from_utf8_lossy(answer));
            if calldata[..] != abi::parse_verdict_calldata(answer)[..] {
                // Non-canonical calldata (dirty padding, trailing bytes): send it as is.
                let (ok, data) = match expected {
                    Outcome::Returned(d) => (true, d.clone()),
                    Outcome::Reverted(d) => (false, d.clone()),
                    Outcome::Halted(_) => (false, Default::default()),
                };
                let _ = writeln!(
                    out,
                    "        (bool ok, bytes memory ret) = address(gate).staticcall({});",
                    bytes_literal(calldata)
                );
                let _ = writeln!(out, "        assertEq(ok, {ok});");
                let _ = writeln!(out, "        assertEq(ret, {});", bytes_literal(&data));
            } else {
                match expected {
                    Outcome::Reverted(data) => {
                        let _ = writeln!(out, "        // {}", abi::describe_revert(data));
                        let _ = writeln!(out, "        vm.expectRevert({});", bytes_literal(data));
                        let _ =
                            writeln!(out, "        gate.parseVerdict({});", bytes_literal(answer));
                    }
                    Outcome::Returned(data) => {
                        let code = data.last().copied().unwrap_or_default();
                        let _ = writeln!(
                            out,
                            "        assertEq(uint256(gate.parseVerdict({})), {code});",
                            bytes_literal(answer)
                        );
                    }
                    Outcome::Halted(_) => {}
                }
            }
        }
        Mismatch::Evaluate { config, snapshot, quote, verdict, expected, .. } => {
            deploy_lines(&mut out, config);
            let _ = writeln!(out, "        RiskGate gate = {};", new_gate(config));
            snapshot_lines(&mut out, snapshot, quote);
            let _ = writeln!(
                out,
                "        (uint8 reason, uint32 failedMask, uint256 pricePaid, uint256 quantity, uint256 cost) ="
            );
            let _ = writeln!(out, "            gate.evaluate(s, q, {verdict});");
            if let Outcome::Returned(data) = expected {
                if let Some(d) = abi::decode_decision(data) {
                    let _ = writeln!(
                        out,
                        "        assertEq(uint256(reason), {}, \"reason\");",
                        d.reason
                    );
                    let _ = writeln!(
                        out,
                        "        assertEq(uint256(failedMask), {}, \"failedMask\");",
                        d.failed_mask
                    );
                    let _ = writeln!(
                        out,
                        "        assertEq(pricePaid, {}, \"pricePaid\");",
                        num(d.price_paid)
                    );
                    let _ = writeln!(
                        out,
                        "        assertEq(quantity, {}, \"quantity\");",
                        num(d.quantity)
                    );
                    let _ = writeln!(out, "        assertEq(cost, {}, \"cost\");", num(d.cost));
                }
            }
        }
        Mismatch::View { config, name, calldata, expected, .. } => {
            deploy_lines(&mut out, config);
            let _ = writeln!(out, "        RiskGate gate = {};", new_gate(config));
            let _ = writeln!(out, "        // {name}()");
            let (ok, data) = match expected {
                Outcome::Returned(d) => (true, d.clone()),
                Outcome::Reverted(d) => (false, d.clone()),
                Outcome::Halted(_) => (false, Default::default()),
            };
            let _ = writeln!(
                out,
                "        (bool ok, bytes memory ret) = address(gate).staticcall({});",
                bytes_literal(calldata)
            );
            let _ = writeln!(out, "        assertEq(ok, {ok});");
            let _ = writeln!(out, "        assertEq(ret, {});", bytes_literal(&data));
        }
        // Rendered above, before this match.
        Mismatch::Attested(a) => attested_body(&mut out, a),
    }
    let _ = writeln!(out, "    }}");
    out
}

/// The mode's setting as a Solidity `IRiskGate.Attestors` named `attestors`.
fn attestors_lines(out: &mut String, s: &AttestorSetting) {
    let n = s.signers.len();
    let _ = writeln!(out, "        address[] memory signers = new address[]({n});");
    for (i, a) in s.signers.iter().enumerate() {
        let _ = writeln!(out, "        signers[{i}] = {};", address(*a));
    }
    let _ = writeln!(
        out,
        "        IRiskGate.Attestors memory attestors = IRiskGate.Attestors(signers, {}, {}, {});",
        s.threshold, s.max_read_age, s.max_slippage_bps
    );
}

/// The constructor's arguments after the creation code, for `vm.etch`.
fn gate_args(config: &GateConfig) -> String {
    format!(
        "abi.encode(bounds, trusted, creators, {}, address(factory), {}, attestors, address(0))",
        address(config.collateral),
        address(config.keeper)
    )
}

/// An attested disagreement as a test: the signatures were made for the gate at the address the
/// differential deployed it at, on its chain id, so the test builds the gate at that same
/// address (the constructor run in place, then its runtime code etched there, as forge-std's
/// `deployCodeTo` does) on that chain id and at the call's block, then sends the exact call
/// data to the gate's set.
fn attested_body(out: &mut String, m: &AttestedMismatch) {
    let AttestedMismatch { config, setting, what } = m;
    deploy_lines(out, config);
    attestors_lines(out, setting);
    let (gate, chain_id, block, to_set, calldata, expected): (_, _, _, _, _, Vec<Outcome>) =
        match what {
            AttestedWhat::Deploy { expected, .. } => {
                for alt in expected.iter().skip(1) {
                    let _ = writeln!(
                        out,
                        "        // also acceptable (several rules broken): {}",
                        abi::describe_revert(alt)
                    );
                }
                if let Some(first) = expected.first() {
                    let _ = writeln!(out, "        // {}", abi::describe_revert(first));
                    let _ = writeln!(out, "        vm.expectRevert({});", bytes_literal(first));
                    let _ = writeln!(
                        out,
                        "        new RiskGate(bounds, trusted, creators, {}, address(factory), {}, attestors);",
                        address(config.collateral),
                        address(config.keeper)
                    );
                } else {
                    let _ = writeln!(
                        out,
                        "        RiskGate gate = new RiskGate(bounds, trusted, creators, {}, address(factory), {}, attestors);",
                        address(config.collateral),
                        address(config.keeper)
                    );
                    let _ = writeln!(out, "        assertTrue(address(gate).code.length > 0);");
                }
                return;
            }
            AttestedWhat::View { gate, chain_id, name, to, calldata, expected, .. } => {
                let _ = writeln!(
                    out,
                    "        // {name}() of the {}",
                    if to == gate { "gate" } else { "set" }
                );
                (*gate, *chain_id, None, to != gate, calldata, vec![expected.clone()])
            }
            AttestedWhat::Tally {
                gate, chain_id, block_number, notes, calldata, expected, ..
            } => {
                let _ = writeln!(out, "        // tally, answers in the order sent:");
                for n in notes {
                    let _ = writeln!(out, "        //   {}", n.replace('\n', "\\n"));
                }
                (*gate, *chain_id, Some(*block_number), true, calldata, expected.clone())
            }
        };
    let _ = writeln!(out, "        vm.chainId({chain_id});");
    if let Some(b) = block {
        let _ = writeln!(out, "        vm.roll({b});");
    }
    let _ = writeln!(out, "        address where = {};", address(gate));
    let _ = writeln!(
        out,
        "        vm.etch(where, abi.encodePacked(type(RiskGate).creationCode, {}));",
        gate_args(config)
    );
    let _ = writeln!(out, "        (bool built, bytes memory runtime) = where.call(\"\");");
    let _ = writeln!(out, "        assertTrue(built);");
    let _ = writeln!(out, "        vm.etch(where, runtime);");
    let _ = writeln!(out, "        RiskGate gate = RiskGate(where);");
    let target = if to_set { "gate.attestorSet()" } else { "address(gate)" };
    let _ = writeln!(
        out,
        "        (bool ok, bytes memory ret) = {target}.staticcall({});",
        bytes_literal(calldata)
    );
    for alt in expected.iter().skip(1) {
        let _ = writeln!(out, "        // also acceptable: {}", diff::show_outcome(alt));
    }
    if let Some(first) = expected.first() {
        let _ = writeln!(out, "        // expected: {}", diff::show_outcome(first));
        let (ok, data) = match first {
            Outcome::Returned(d) => (true, d.clone()),
            Outcome::Reverted(d) => (false, d.clone()),
            Outcome::Halted(_) => (false, Default::default()),
        };
        let _ = writeln!(out, "        assertEq(ok, {ok});");
        let _ = writeln!(out, "        assertEq(ret, {});", bytes_literal(&data));
    }
}
