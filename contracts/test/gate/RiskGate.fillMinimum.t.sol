// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {GateVenueBase} from "./GateVenueBase.sol";
import {IRiskGate} from "../../src/interfaces/IRiskGate.sol";
import {IBinaryMarket} from "../../src/interfaces/IBinaryMarket.sol";
import {BinaryMarket} from "../../src/venue/BinaryMarket.sol";

/// @notice Rule 18 through the real venue: a fill below minFillBps (30 % here) of the quantity is
/// undone whole, in the gate's self-call, and published with the attempted fill; a fill at the
/// minimum is kept. executeOrder is the gate's own frame and refuses everyone else.
contract RiskGateFillMinimumTest is GateVenueBase {
    address internal attacker = makeAddr("attacker");

    struct Books {
        uint256 gateBalance;
        uint256 marketBalance;
        uint256 escrow;
        uint256 outstanding;
        uint256 bestAsk;
        uint256 bestBid;
        bytes32 askLevels;
        bytes32 bidLevels;
    }

    function _books(BinaryMarket m) internal view returns (Books memory b) {
        b.gateBalance = token.balanceOf(address(gate));
        b.marketBalance = token.balanceOf(address(m));
        b.escrow = m.escrowTotal();
        b.outstanding = m.outstanding();
        b.bestAsk = m.bestAsk();
        b.bestBid = m.bestBid();
        b.askLevels = keccak256(abi.encode(m.getBookLevels(false, 10)));
        b.bidLevels = keccak256(abi.encode(m.getBookLevels(true, 10)));
    }

    function _assertNothingMoved(BinaryMarket m, Books memory before) internal view {
        Books memory afterwards = _books(m);
        assertEq(afterwards.gateBalance, before.gateBalance, "gate balance");
        assertEq(afterwards.marketBalance, before.marketBalance, "market balance");
        assertEq(afterwards.escrow, before.escrow, "market escrow");
        assertEq(afterwards.outstanding, before.outstanding, "market outstanding");
        assertEq(afterwards.bestAsk, before.bestAsk, "best ask");
        assertEq(afterwards.bestBid, before.bestBid, "best bid");
        assertEq(afterwards.askLevels, before.askLevels, "ask levels");
        assertEq(afterwards.bidLevels, before.bidLevels, "bid levels");
        IRiskGate.Position memory p = gate.positionOf(address(m));
        assertEq(p.upUnits + p.downUnits + p.notional, 0, "no position");
        assertEq(uint256(gate.openPositions()), 0, "no slot");
        assertEq(gate.openNotional(), 0, "no notional");
        assertEq(m.upBalanceOf(address(gate)) + m.downBalanceOf(address(gate)), 0, "no units");
        assertEq(token.allowance(address(gate), address(m)), 0, "no allowance left");
    }

    function test_submitVerdict_undoesDustAskOneTickBetter() public {
        // The book: 2_000 at 0.42 (maker). An attacker adds one lot (100) at 0.41, one tick better.
        uint256 dustId = quoteAs(attacker, market, false, 410_000, 100);
        // The model is shown 0.41; the keeper quotes ceil(410_000 * 1.005) = 412_050, limit
        // 410_000 on the grid, cost ceil(1_000 * 0.41) = 410. The IOC fills the 100 at 0.41
        // (spent 41) and stops: 0.42 is beyond the limit. 100 * 10_000 < 1_000 * 3_000: undone.
        IRiskGate.Quote memory q = keeperQuote(market, "BUY_UP");
        assertEq(q.maxPricePaid, 412_050);
        IRiskGate.Snapshot memory s = expectedSnapshot(market);
        Books memory before = _books(market);
        IRiskGate.Order memory attempted = IRiskGate.Order(410_000, 410_000, 1_000, 410, 100, 41);
        expectDecision(market, "BUY_UP", 18, BUY_UP, uint32(1) << 18, abi.encode(s, q), attempted);
        assertEq(submitQuoted(market, "BUY_UP", q), 18);
        _assertNothingMoved(market, before);
        // The attacker's dust order is still resting, whole.
        IBinaryMarket.Level[] memory asks = market.getBookLevels(false, 1);
        assertEq(asks[0].price, 410_000);
        assertEq(asks[0].quantity, 100);
        assertEq(market.upBalanceOf(attacker) + market.downBalanceOf(attacker), 0);
        vm.prank(attacker);
        assertEq(market.cancel(dustId), 59, "its escrow, 100 * 0.59, is all still there");
    }

    function test_submitVerdict_keepsFillExactlyAtMinimum() public {
        // 300 of 1_000 at the limit: 300 * 10_000 == 1_000 * 3_000, kept.
        BinaryMarket m = newMarket();
        makerQuote(m, false, 420_000, 300);
        makerQuote(m, false, 430_000, 5_000);
        assertEq(submit(m, "BUY_UP"), 0);
        assertEq(gate.positionOf(address(m)).upUnits, 300);
        assertEq(gate.openNotional(), 126, "300 * 0.42");
    }

    function test_submitVerdict_undoesFillOneLotBelowMinimum() public {
        // 200 of 1_000: 200 * 10_000 < 1_000 * 3_000, undone.
        BinaryMarket m = newMarket();
        makerQuote(m, false, 420_000, 200);
        makerQuote(m, false, 430_000, 5_000);
        Books memory before = _books(m);
        assertEq(submit(m, "BUY_UP"), 18);
        _assertNothingMoved(m, before);
    }

    function test_submitVerdict_undoesThinBuyDown() public {
        // DOWN: bids of 200 at 0.40 (the keeper's limit, 600_000, is UP 400_000) and 5_000 at
        // 0.39, beyond it. The attempt: 200 DOWN for 200 * 0.60 = 120.
        BinaryMarket m = newMarket();
        makerQuote(m, true, 400_000, 200);
        makerQuote(m, true, 390_000, 5_000);
        IRiskGate.Quote memory q = keeperQuote(m, "BUY_DOWN");
        IRiskGate.Snapshot memory s = expectedSnapshot(m);
        Books memory before = _books(m);
        IRiskGate.Order memory attempted = IRiskGate.Order(600_000, 600_000, 1_000, 600, 200, 120);
        expectDecision(m, "BUY_DOWN", 18, BUY_DOWN, uint32(1) << 18, abi.encode(s, q), attempted);
        assertEq(submitQuoted(m, "BUY_DOWN", q), 18);
        _assertNothingMoved(m, before);
    }

    function test_submitVerdict_fullFillRequiredAtTenThousandBps() public {
        IRiskGate.Params memory p = defaultParams();
        p.minFillBps = 10_000;
        gate = deployGate(p);
        token.mint(address(gate), GATE_FUNDS);
        BinaryMarket m = newMarket();
        makerQuote(m, false, 420_000, 900);
        makerQuote(m, false, 430_000, 5_000);
        assertEq(submit(m, "BUY_UP"), 18, "900 of 1_000");
        makerQuote(m, false, 420_000, 100); // now exactly 1_000 at the limit
        assertEq(submit(m, "BUY_UP"), 0);
        assertEq(gate.positionOf(address(m)).upUnits, 1_000);
    }

    // --- the self-call

    function test_executeOrder_revertsForAnyoneButTheGate() public {
        address[3] memory callers = [address(this), keeperAddr, attacker];
        for (uint256 i; i < callers.length; ++i) {
            vm.prank(callers[i]);
            vm.expectRevert(abi.encodeWithSelector(IRiskGate.OnlySelf.selector, callers[i]));
            gate.executeOrder(address(market), BUY_UP, 420_000, 1_000, 420);
        }
        assertEq(token.balanceOf(address(gate)), GATE_FUNDS);
    }
}
