// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {GateTestBase} from "./GateTestBase.sol";
import {IRiskGate} from "../../src/interfaces/IRiskGate.sol";

/// @notice evaluate, rules 1 to 11: every rule on both sides of its boundary, the seed's hostile
/// set, and the never-reverts guarantee. Baseline (GateTestBase): bid 400_000, ask 420_000, tick
/// 10_000, lot 100, min 100, 9_000 s left, trusted resolver, nothing held, H = equity; bounds band
/// [50_000, 950_000], maxSize 1_000, headroom 300, 3 positions, notional 10_000, drawdown 20_000.
/// The cost is the worst case at the order's limit: under `looseQuote` that limit is maxPrice
/// (cost 950 for 1_000 units); under `priceQuote(p)` with p on the grid it is p itself, which
/// gives back v1's cost (quantity * price paid).
contract RiskGateEvaluateTest is GateTestBase {
    /// @dev PASS under a quote at `maxPricePaid`.
    function _passQuoted(
        IRiskGate.Snapshot memory s,
        uint256 maxPricePaid,
        uint8 verdict,
        uint256 price,
        uint256 quantity,
        uint256 cost
    ) internal view {
        assertOutcome(s, priceQuote(maxPricePaid), verdict, 0, 0, price, quantity, cost);
    }

    // --- PASS in both directions

    function test_evaluate_passesBuyUpAtBestAsk() public view {
        // Loose quote: limit 950_000, cost ceil(1_000 * 950_000 / 1e6) = 950.
        assertPass(baseSnapshot(), BUY_UP, 420_000, 1_000, 950);
        // Keeper at the price: limit 420_000, cost 1_000 * 420_000 / 1e6 = 420.
        _passQuoted(baseSnapshot(), 420_000, BUY_UP, 420_000, 1_000, 420);
    }

    function test_evaluate_passesBuyDownAtOneMinusBestBid() public view {
        // UP limit 400_000 -> DOWN pays 600_000. Loose: cost 950.
        assertPass(baseSnapshot(), BUY_DOWN, 600_000, 1_000, 950);
        // Quote 600_000: 1e6 - 600_000 = 400_000 is on grid, limit 600_000, cost 600.
        _passQuoted(baseSnapshot(), 600_000, BUY_DOWN, 600_000, 1_000, 600);
    }

    // --- rule 1, rule 11

    function test_evaluate_abstainsWithOnlyRuleOne() public view {
        // Even with every other rule failing, ABSTAIN evaluates nothing else (not the quote).
        IRiskGate.Snapshot memory s = baseSnapshot();
        s.finalized = true;
        s.bestAsk = 0;
        s.resolverTrusted = false;
        s.heldSide = 3;
        assertRejected(s, IRiskGate.Quote(0, 0), ABSTAIN, 1, bit(1));
    }

    function test_evaluate_rejectsUnknownVerdictCodes() public view {
        IRiskGate.Snapshot memory s = baseSnapshot();
        s.resolverTrusted = false; // not looked at either
        assertRejected(s, IRiskGate.Quote(0, 0), 3, 11, bit(11));
        assertRejected(s, IRiskGate.Quote(0, 0), 255, 11, bit(11));
    }

    // --- rule 2 finalized

    function test_evaluate_rejectsWhenFinalized() public view {
        IRiskGate.Snapshot memory s = baseSnapshot();
        s.finalized = true;
        assertRejected(s, BUY_UP, 2, bit(2));
    }

    // --- rule 3 headroom: expiry 10_000, headroom 300

    function test_evaluate_passesWhenHeadroomExactlyMinimum() public view {
        IRiskGate.Snapshot memory s = baseSnapshot();
        s.nowSec = 9_700; // 10_000 - 9_700 = 300 = minHeadroom: allowed
        _passQuoted(s, 420_000, BUY_UP, 420_000, 1_000, 420);
    }

    function test_evaluate_rejectsWhenHeadroomOneSecondShort() public view {
        IRiskGate.Snapshot memory s = baseSnapshot();
        s.nowSec = 9_701; // 299 s left < 300
        assertRejected(s, BUY_UP, 3, bit(3));
    }

    function test_evaluate_rejectsWhenExpiryEqualsNowOrPast() public view {
        IRiskGate.Snapshot memory s = baseSnapshot();
        s.nowSec = 10_000; // expirySec <= nowSec
        assertRejected(s, BUY_UP, 3, bit(3));
        s.nowSec = type(uint64).max; // far past expiry: no underflow (and the loose deadline is
        // uint64 max, so now == deadline: not expired)
        assertRejected(s, BUY_DOWN, 3, bit(3));
        s.expirySec = 0;
        s.nowSec = 0;
        assertRejected(s, BUY_UP, 3, bit(3));
    }

    // --- rule 4 empty side

    function test_evaluate_rejectsBuyUpWhenNoAsks() public view {
        IRiskGate.Snapshot memory s = baseSnapshot();
        s.bestAsk = 0;
        assertRejected(s, BUY_UP, 4, bit(4));
        // The bid side is irrelevant to BUY_UP, and vice versa: DOWN still passes (cost 600 at
        // the keeper's 600_000).
        _passQuoted(s, 600_000, BUY_DOWN, 600_000, 1_000, 600);
    }

    function test_evaluate_rejectsBuyDownWhenNoBids() public view {
        IRiskGate.Snapshot memory s = baseSnapshot();
        s.bestBid = 0;
        assertRejected(s, BUY_DOWN, 4, bit(4));
        _passQuoted(s, 420_000, BUY_UP, 420_000, 1_000, 420);
    }

    // --- rule 5 band, both edges, both directions

    function test_evaluate_passesBuyUpAtBandEdges() public view {
        IRiskGate.Snapshot memory s = baseSnapshot();
        s.bestAsk = 950_000; // == maxPrice; 1_000 * 0.95 = 950
        _passQuoted(s, 950_000, BUY_UP, 950_000, 1_000, 950);
        s.bestAsk = 50_000; // == minPrice; 1_000 * 0.05 = 50
        _passQuoted(s, 50_000, BUY_UP, 50_000, 1_000, 50);
        // Loose quote: the limit stays at maxPrice whatever the ask, cost 950.
        assertPass(s, BUY_UP, 50_000, 1_000, 950);
    }

    function test_evaluate_rejectsBuyUpJustOutsideBand() public view {
        IRiskGate.Snapshot memory s = baseSnapshot();
        s.tickSize = 1;
        s.bestAsk = 950_001;
        assertRejected(s, BUY_UP, 5, bit(5));
        s.bestAsk = 49_999;
        assertRejected(s, BUY_UP, 5, bit(5));
    }

    function test_evaluate_bandBoundsDownPriceNotUpPrice() public view {
        IRiskGate.Snapshot memory s = baseSnapshot();
        s.tickSize = 1;
        // DOWN pays 950_000 == maxPrice: passes; limit 1e6 - roundUp(50_000, 1) = 950_000,
        // cost 1_000 * 0.95 = 950.
        s.bestBid = 50_000;
        _passQuoted(s, 950_000, BUY_DOWN, 950_000, 1_000, 950);
        s.bestBid = 49_999; // DOWN pays 950_001 > maxPrice
        assertRejected(s, BUY_DOWN, 5, bit(5));
        s.bestBid = 950_001; // DOWN pays 49_999 < minPrice
        assertRejected(s, BUY_DOWN, 5, bit(5));
    }

    function test_evaluate_asymmetricBandMeansTheSameInBothDirections() public {
        // Band [0.20, 0.60]: cheap-ish tokens only, whichever side.
        IRiskGate.Params memory p = defaultParams();
        p.minPrice = 200_000;
        p.maxPrice = 600_000;
        gate = deployGate(p);
        IRiskGate.Snapshot memory s = baseSnapshot();
        s.bestBid = 700_000; // DOWN pays 300_000: inside; limit 300_000, 1_000 * 0.3 = 300
        s.bestAsk = 710_000; // UP pays 710_000: outside
        _passQuoted(s, 300_000, BUY_DOWN, 300_000, 1_000, 300);
        // Loose quote: the limit is maxPrice 600_000 (1e6 - 400_000 on grid): cost 600.
        assertPass(s, BUY_DOWN, 300_000, 1_000, 600);
        assertRejected(s, BUY_UP, 5, bit(5));
        s.bestBid = 350_000; // DOWN pays 650_000: outside
        s.bestAsk = 360_000; // UP pays 360_000: inside; 1_000 * 0.36 = 360
        assertRejected(s, BUY_DOWN, 5, bit(5));
        _passQuoted(s, 360_000, BUY_UP, 360_000, 1_000, 360);
    }

    function test_evaluate_rejectsBookAtZeroAndCertainty() public view {
        IRiskGate.Snapshot memory s = baseSnapshot();
        s.bestAsk = 1_000_000; // UP at certainty: outside every band, not rounded
        assertRejected(s, BUY_UP, 5, bit(5));
        s.bestBid = 1_000_000; // DOWN would pay 0: outside every band, no underflow
        assertRejected(s, BUY_DOWN, 5, bit(5));
        // v1 derived the cost from this price and saturated it (rules 9 and 10 failed too).
        // The cost now comes from the limit, at most maxPrice: 950, within every money rule.
        s.bestAsk = type(uint256).max;
        assertRejected(s, BUY_UP, 5, bit(5));
        // A tight quote adds rule 15: 2^256 - 1 > 420_000.
        assertRejected(s, priceQuote(420_000), BUY_UP, 5, bit(5) | bit(15));
        s.bestBid = type(uint256).max;
        assertRejected(s, BUY_DOWN, 5, bit(5));
    }

    // --- tick grid

    function test_evaluate_roundsOffGridAskUpAndBidDown() public view {
        IRiskGate.Snapshot memory s = baseSnapshot();
        s.bestAsk = 420_001; // up onto the 10_000 grid: 430_000; 1_000 * 0.43 = 430
        _passQuoted(s, 430_000, BUY_UP, 430_000, 1_000, 430);
        s.bestBid = 409_999; // down onto the grid: 400_000 -> DOWN pays 600_000; cost 600
        _passQuoted(s, 600_000, BUY_DOWN, 600_000, 1_000, 600);
    }

    function test_evaluate_roundingCanPushPriceOutOfBand() public view {
        IRiskGate.Snapshot memory s = baseSnapshot();
        s.bestAsk = 940_001; // rounds up to 950_000 == maxPrice: still inside
        _passQuoted(s, 950_000, BUY_UP, 950_000, 1_000, 950);
        s.tickSize = 30_000;
        s.bestAsk = 940_001; // rounds up to 960_000 (32 * 30_000) > maxPrice
        assertRejected(s, BUY_UP, 5, bit(5));
        s.bestBid = 29_999; // rounds down to 0 -> DOWN pays 1e6: outside
        assertRejected(s, BUY_DOWN, 5, bit(5));
    }

    function test_evaluate_treatsZeroTickAndLotAsNoGrid() public view {
        IRiskGate.Snapshot memory s = baseSnapshot();
        s.tickSize = 0;
        s.lotSize = 0;
        // Taken as is; limit 420_001 (no grid); ceil(1_000 * 420_001 / 1e6) = ceil(420.001) = 421
        s.bestAsk = 420_001;
        _passQuoted(s, 420_001, BUY_UP, 420_001, 1_000, 421);
        // DOWN pays 600_001; limit 1e6 - (1e6 - 600_001) = 600_001; ceil(600.001) = 601
        s.bestBid = 399_999;
        _passQuoted(s, 600_001, BUY_DOWN, 600_001, 1_000, 601);
    }

    function test_evaluate_tickThatDoesNotDivideOne() public view {
        IRiskGate.Snapshot memory s = baseSnapshot();
        s.tickSize = 7_000; // 1e6 / 7_000 is not an integer
        s.bestAsk = 420_000; // 420_000 = 60 * 7_000: on grid; cost 420
        _passQuoted(s, 420_000, BUY_UP, 420_000, 1_000, 420);
        // 400_000 -> 57 * 7_000 = 399_000 -> DOWN pays 601_000; 1e6 - 601_000 = 399_000 is on
        // the grid, limit 601_000, cost 601
        s.bestBid = 400_000;
        _passQuoted(s, 601_000, BUY_DOWN, 601_000, 1_000, 601);
        // Loose: BUY_UP limit roundDown(950_000, 7_000) = 135 * 7_000 = 945_000, cost 945;
        // BUY_DOWN limit 1e6 - roundUp(50_000, 7_000) = 1e6 - 8 * 7_000 = 944_000, cost 944.
        assertPass(s, BUY_UP, 420_000, 1_000, 945);
        assertPass(s, BUY_DOWN, 601_000, 1_000, 944);
    }

    // --- rules 6 and 7: lot grid and venue minimum

    function test_evaluate_snapsSizeDownOntoLotGrid() public view {
        IRiskGate.Snapshot memory s = baseSnapshot();
        s.lotSize = 300; // 1_000 -> 900; 900 * 0.42 = 378
        s.minQuantity = 0;
        _passQuoted(s, 420_000, BUY_UP, 420_000, 900, 378);
    }

    function test_evaluate_rejectsWhenLotLargerThanMaxSize() public view {
        IRiskGate.Snapshot memory s = baseSnapshot();
        s.lotSize = 1_001; // 1_000 snaps to 0
        assertRejected(s, BUY_UP, 6, bit(6));
        s.lotSize = 1_000; // exactly one lot: passes
        _passQuoted(s, 420_000, BUY_UP, 420_000, 1_000, 420);
    }

    function test_evaluate_minimumQuantityBoundary() public view {
        IRiskGate.Snapshot memory s = baseSnapshot();
        s.minQuantity = 1_000; // quantity == minimum: allowed
        _passQuoted(s, 420_000, BUY_UP, 420_000, 1_000, 420);
        s.minQuantity = 1_001; // one above: 0 < 1_000 < 1_001
        assertRejected(s, BUY_UP, 7, bit(7));
    }

    // --- rule 8 concurrency: cap 3

    function test_evaluate_concurrencyBoundary() public view {
        IRiskGate.Snapshot memory s = baseSnapshot();
        s.openPositions = 2; // one slot left
        _passQuoted(s, 420_000, BUY_UP, 420_000, 1_000, 420);
        s.openPositions = 3; // at the cap
        assertRejected(s, BUY_UP, 8, bit(8));
        s.openPositions = 255;
        assertRejected(s, BUY_DOWN, 8, bit(8));
    }

    // --- rule 9 notional: cap 10_000, BUY_UP cost 420 at the keeper's 420_000

    function test_evaluate_notionalBoundary() public view {
        IRiskGate.Snapshot memory s = baseSnapshot();
        // 9_580 + 420 = 10_000: exactly the cap passes. Drawdown: H = 1_009_580, H - (1e6 - 420)
        // = 10_000 <= 20_000.
        s.openNotional = 9_580;
        _passQuoted(s, 420_000, BUY_UP, 420_000, 1_000, 420);
        s.openNotional = 9_581; // 10_001 > 10_000 (drawdown 10_001 still fine)
        assertRejected(s, priceQuote(420_000), BUY_UP, 9, bit(9));
        // The sum would overflow: still rule 9, not a revert. The equity saturates too, so H is
        // 2^256 - 1 and H - (1e6 - 420) is far beyond 20_000: rule 14 as well.
        s.openNotional = type(uint256).max;
        assertRejected(s, priceQuote(420_000), BUY_UP, 9, bit(9) | bit(14));
        // Under the loose quote the cost is 950: 9_050 + 950 = 10_000 passes, 9_051 does not.
        s.openNotional = 9_050;
        assertPass(s, BUY_UP, 420_000, 1_000, 950);
        s.openNotional = 9_051;
        assertRejected(s, BUY_UP, 9, bit(9));
    }

    // --- rule 10 collateral: BUY_DOWN cost 600 at the keeper's 600_000

    function test_evaluate_collateralBoundary() public view {
        IRiskGate.Snapshot memory s = baseSnapshot();
        // H is the equity here (600 + 0), so the drawdown H - (600 - 600) = 600 is in bound.
        s.collateralAvailable = 600; // exactly the cost passes
        s.highWaterMark = 600;
        _passQuoted(s, 600_000, BUY_DOWN, 600_000, 1_000, 600);
        s.collateralAvailable = 599; // one unit short; drawdown 599 - (599 - 600) = 600, fine
        s.highWaterMark = 599;
        assertRejected(s, priceQuote(600_000), BUY_DOWN, 10, bit(10));
    }

    function test_evaluate_costRoundsUpNeverDown() public view {
        IRiskGate.Snapshot memory s = baseSnapshot();
        s.tickSize = 1;
        s.lotSize = 1;
        s.highWaterMark = 0; // H = max(0, 0 + 0) = 0: the drawdown is the cost alone
        // Below band: rejected, but the cost still feeds rules 9, 10 and 14. Limit 1:
        // ceil(1_000 * 1 / 1e6) = ceil(0.001) = 1 > 0 available.
        s.bestAsk = 1;
        s.collateralAvailable = 0;
        assertRejected(s, priceQuote(1), BUY_UP, 5, bit(5) | bit(10));
        // Limit 420_001: ceil(420.001) = 421 > 420: one unit short.
        s.bestAsk = 420_001;
        s.collateralAvailable = 420;
        assertRejected(s, priceQuote(420_001), BUY_UP, 10, bit(10));
        s.collateralAvailable = 421;
        _passQuoted(s, 420_001, BUY_UP, 420_001, 1_000, 421);
    }

    // --- several rules at once

    function test_evaluate_reportsEveryFailingRuleInMask() public view {
        IRiskGate.Snapshot memory s = baseSnapshot();
        s.finalized = true; // 2
        s.nowSec = 10_000; // 3 (and 13 cannot hold with it: expiry is not in the future)
        s.bestAsk = 990_000; // 5, and 15 below: 990_000 > 900_000
        s.minQuantity = 5_000; // 7
        s.openPositions = 3; // 8
        s.openNotional = 10_000; // 9: 10_000 + 900 > 10_000
        s.collateralAvailable = 0; // 10, and 14: H = 1e6, 1e6 - (0 - 900) > 20_000
        s.resolverTrusted = false; // 12
        s.heldSide = BUY_DOWN; // 17 for a BUY_UP
        // 16: now 10_000 > deadline 9_999. Limit roundDown(900_000) = 900_000, cost 900.
        IRiskGate.Quote memory q = IRiskGate.Quote(900_000, 9_999);
        uint32 all = bit(2) | bit(3) | bit(5) | bit(7) | bit(8) | bit(9) | bit(10) | bit(12)
            | bit(14) | bit(15) | bit(16) | bit(17);
        assertRejected(s, q, BUY_UP, 2, all);
        // Horizon instead of headroom: now 1_000, expiry 1_000 + 7 days + 1.
        s.nowSec = 1_000;
        s.expirySec = 1_000 + MAX_HORIZON + 1;
        q.deadline = 999;
        assertRejected(s, q, BUY_UP, 2, (all & ~bit(3)) | bit(13));
    }

    function test_evaluate_emptySideSkipsBandAndCostRules() public view {
        // Rule 4 failing means rules 5, 9, 10, 14 and 15 are not evaluated; 6, 7, 8 still are.
        IRiskGate.Snapshot memory s = baseSnapshot();
        s.bestAsk = 0;
        s.lotSize = 2_000; // 6
        s.openPositions = 3; // 8
        s.collateralAvailable = 0; // would fail 10 and 14
        assertRejected(s, priceQuote(0), BUY_UP, 4, bit(4) | bit(6) | bit(8));
    }

    function test_evaluate_sizeZeroSkipsCostRules() public view {
        IRiskGate.Snapshot memory s = baseSnapshot();
        s.lotSize = 2_000; // quantity 0: rule 6, and 9/10/14 are not evaluated
        s.collateralAvailable = 0;
        s.openNotional = type(uint256).max;
        assertRejected(s, BUY_UP, 6, bit(6));
    }

    // --- labels

    function test_reasonLabel_returnsLabelsVerbatim() public view {
        assertEq(gate.reasonLabel(0), "PASS");
        assertEq(gate.reasonLabel(1), "model abstained");
        assertEq(gate.reasonLabel(2), "market finalized");
        assertEq(gate.reasonLabel(3), "expiry headroom too short");
        assertEq(gate.reasonLabel(4), "no resting liquidity on the side needed");
        assertEq(gate.reasonLabel(5), "price outside allowed band");
        assertEq(gate.reasonLabel(6), "size snapped to zero on the lot grid");
        assertEq(gate.reasonLabel(7), "size below venue minimum");
        assertEq(gate.reasonLabel(8), "max concurrent positions reached");
        assertEq(gate.reasonLabel(9), "max notional at risk reached");
        assertEq(gate.reasonLabel(10), "insufficient collateral");
        assertEq(gate.reasonLabel(11), "model output not a valid verdict");
        assertEq(gate.reasonLabel(12), "market resolver not trusted");
        assertEq(gate.reasonLabel(13), "expiry too far out");
        assertEq(gate.reasonLabel(14), "max drawdown reached");
        assertEq(gate.reasonLabel(15), "book moved past the quoted limit");
        assertEq(gate.reasonLabel(16), "verdict expired");
        assertEq(gate.reasonLabel(17), "opposite side already held");
        assertEq(gate.reasonLabel(18), "fill below minimum");
        assertEq(gate.reasonLabel(19), "market creator not trusted");
        assertEq(gate.reasonLabel(20), "minimum fill beyond the venue's match cap");
        assertEq(gate.reasonLabel(21), "answer not attested");
        assertEq(gate.reasonLabel(22), "attestors disagree");
    }

    function test_reasonLabel_revertsForUnknownCode() public {
        // 0..24 are codes (21 and 22 new with the attested mode, 23 with the consensus mode,
        // 24 with batches); 25 is the first that is not. The labels and this revert come from
        // the gate's RiskGateViews, forwarded as they stand.
        assertEq(gate.reasonLabel(21), "answer not attested");
        assertEq(gate.reasonLabel(22), "attestors disagree");
        assertEq(gate.reasonLabel(23), "no consensus in time");
        assertEq(gate.reasonLabel(24), "order failed at the market");
        vm.expectRevert(abi.encodeWithSelector(IRiskGate.UnknownReason.selector, uint8(25)));
        gate.reasonLabel(25);
        vm.expectRevert(abi.encodeWithSelector(IRiskGate.UnknownReason.selector, uint8(255)));
        gate.reasonLabel(255);
    }
}
