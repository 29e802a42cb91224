// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {GateVenueBase} from "./GateVenueBase.sol";
import {console} from "../utils/Test.sol";
import {IRiskGate} from "../../src/interfaces/IRiskGate.sol";
import {BinaryMarket} from "../../src/venue/BinaryMarket.sol";

/// @notice Gas of the gate's main paths, for reading with -vv. Each test is its own transaction,
/// and every market is made in setUp, so storage starts cold as on chain. Two figures each: the
/// gas used inside the gate's frame (`vm.lastCallGas`), and a receipt estimate: that plus the
/// 21_000 base and the calldata (4 gas per zero byte, 16 per other byte; Prague's floor of 10
/// gas per token, a token being a zero byte or a quarter of another, when that is higher), less
/// the refund (at most a fifth). The issue's targets apply to receipts (`make bench`), which
/// these only approximate.
contract RiskGateGasTest is GateVenueBase {
    BinaryMarket internal pricey;

    function setUp() public override {
        super.setUp();
        pricey = newMarket();
        makerQuote(pricey, false, 990_000, 1_000); // UP at 0.99 > maxPrice: rule 5
        // A gate in service has a high-water mark already: its first raise from 0 writes a
        // fresh slot (about 20,000 gas once), which test_gas_firstDecisionSetsTheMark shows.
        gate.withdrawCollateral(address(this), 0);
        assertEq(gate.highWaterMark(), GATE_FUNDS);
    }

    function _report(string memory what, bytes memory data) internal view {
        uint256 zeros;
        for (uint256 i; i < data.length; ++i) {
            if (data[i] == 0) ++zeros;
        }
        uint256 others = data.length - zeros;
        uint256 used = vm.lastCallGas().gasTotalUsed;
        int256 refunded = vm.lastCallGas().gasRefunded;
        uint256 standard = 21_000 + 4 * zeros + 16 * others + used;
        // casting to 'uint256' is safe because only a positive refund is cast.
        // forge-lint: disable-next-line(unsafe-typecast)
        uint256 refund = refunded > 0 ? uint256(refunded) : 0;
        if (refund > standard / 5) refund = standard / 5;
        standard -= refund;
        uint256 floor = 21_000 + 10 * (zeros + 4 * others);
        console.log(what);
        console.log("  gas inside the gate", used);
        console.log("  refund", refund);
        console.log("  receipt estimate", standard > floor ? standard : floor);
    }

    function _submit(BinaryMarket m, string memory raw, IRiskGate.Quote memory q)
        internal
        returns (uint8 reason)
    {
        vm.prank(keeperAddr);
        reason = gate.submitVerdict(address(m), raw, keccak256(bytes(raw)), readBlockNow(), q);
    }

    function test_gas_abstain() public {
        IRiskGate.Quote memory q;
        assertEq(uint256(_submit(market, "ABSTAIN", q)), 1);
        _report(
            "ABSTAIN (target 40,000)",
            abi.encodeCall(
                gate.submitVerdict,
                (address(market), "ABSTAIN", keccak256("ABSTAIN"), readBlockNow(), q)
            )
        );
    }

    function test_gas_refusalThatReadsTheBook() public {
        // The keeper's quote for the 0.99 ask: ceil(990_000 * 1.005) = 994_950.
        IRiskGate.Quote memory q = IRiskGate.Quote(994_950, uint64(block.timestamp) + 60);
        assertEq(uint256(_submit(pricey, "BUY_UP", q)), 5);
        _report(
            "refusal that reads the book, reason 5 (target 75,000)",
            abi.encodeCall(
                gate.submitVerdict,
                (address(pricey), "BUY_UP", keccak256("BUY_UP"), readBlockNow(), q)
            )
        );
    }

    function test_gas_passAgainstOneRestingLevel() public {
        // The fixture's ask: one order of 2_000 at 0.42; the gate buys 1_000 of it.
        IRiskGate.Quote memory q = IRiskGate.Quote(422_100, uint64(block.timestamp) + 60);
        assertEq(uint256(_submit(market, "BUY_UP", q)), 0);
        _report(
            "PASS against one resting level (target 260,000)",
            abi.encodeCall(
                gate.submitVerdict,
                (address(market), "BUY_UP", keccak256("BUY_UP"), readBlockNow(), q)
            )
        );
    }

    function test_gas_evaluate() public {
        IRiskGate.Snapshot memory s = baseSnapshot();
        IRiskGate.Quote memory q = priceQuote(420_000);
        (uint8 reason,,,,) = gate.evaluate(s, q, BUY_UP);
        assertEq(uint256(reason), 0);
        _report(
            "evaluate, a passing BUY_UP (target 6,000 inside the gate)",
            abi.encodeCall(gate.evaluate, (s, q, BUY_UP))
        );
    }

    function test_gas_firstDecisionSetsTheMark() public {
        gate = deployGate(defaultParams());
        token.mint(address(gate), GATE_FUNDS);
        IRiskGate.Quote memory q = IRiskGate.Quote(994_950, uint64(block.timestamp) + 60);
        assertEq(uint256(_submit(pricey, "BUY_UP", q)), 5);
        _report(
            "refusal that reads the book, the gate's first decision (H written from 0)",
            abi.encodeCall(
                gate.submitVerdict,
                (address(pricey), "BUY_UP", keccak256("BUY_UP"), readBlockNow(), q)
            )
        );
        assertEq(gate.highWaterMark(), GATE_FUNDS);
    }

    function test_gas_refusalOfA100KBAnswer() public {
        string memory huge = string(repeatByte("A", 100_000));
        IRiskGate.Quote memory q;
        assertEq(uint256(_submit(market, huge, q)), 11);
        _report(
            "refusal of a 100 KB answer",
            abi.encodeCall(
                gate.submitVerdict,
                (address(market), huge, keccak256(bytes(huge)), readBlockNow(), q)
            )
        );
    }
}
