// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {GateTestBase} from "./GateTestBase.sol";
import {RiskGate} from "../../src/RiskGate.sol";
import {IRiskGate} from "../../src/interfaces/IRiskGate.sol";

/// @notice evaluate: every rule on both sides of its boundary, the seed's hostile set, and the
/// never-reverts guarantee. Baseline (GateTestBase): bid 400_000, ask 420_000, tick 10_000,
/// lot 100, min 100, 9_000 s left; bounds band [50_000, 950_000], maxSize 1_000, headroom 300,
/// 3 positions, notional 10_000.
contract RiskGateEvaluateTest is GateTestBase {
    // --- PASS in both directions

    function test_evaluate_passesBuyUpAtBestAsk() public view {
        // 1_000 * 420_000 / 1e6 = 420
        assertOutcome(baseSnapshot(), BUY_UP, 0, 0, 420_000, 1_000, 420);
    }

    function test_evaluate_passesBuyDownAtOneMinusBestBid() public view {
        // UP limit 400_000 -> DOWN pays 600_000; 1_000 * 600_000 / 1e6 = 600
        assertOutcome(baseSnapshot(), BUY_DOWN, 0, 0, 600_000, 1_000, 600);
    }

    // --- rule 1, rule 11

    function test_evaluate_abstainsWithOnlyRuleOne() public view {
        // Even with every other rule failing, ABSTAIN evaluates nothing else.
        IRiskGate.Snapshot memory s = baseSnapshot();
        s.finalized = true;
        s.bestAsk = 0;
        assertRejected(s, ABSTAIN, 1, bit(1));
    }

    function test_evaluate_rejectsUnknownVerdictCodes() public view {
        assertRejected(baseSnapshot(), 3, 11, bit(11));
        assertRejected(baseSnapshot(), 255, 11, bit(11));
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
        assertOutcome(s, BUY_UP, 0, 0, 420_000, 1_000, 420);
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
        s.nowSec = type(uint64).max; // far past expiry: no underflow
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
        // The bid side is irrelevant to BUY_UP, and vice versa: DOWN still passes.
        assertOutcome(s, BUY_DOWN, 0, 0, 600_000, 1_000, 600);
    }

    function test_evaluate_rejectsBuyDownWhenNoBids() public view {
        IRiskGate.Snapshot memory s = baseSnapshot();
        s.bestBid = 0;
        assertRejected(s, BUY_DOWN, 4, bit(4));
        assertOutcome(s, BUY_UP, 0, 0, 420_000, 1_000, 420);
    }

    // --- rule 5 band, both edges, both directions

    function test_evaluate_passesBuyUpAtBandEdges() public view {
        IRiskGate.Snapshot memory s = baseSnapshot();
        s.bestAsk = 950_000; // == maxPrice; 1_000 * 0.95 = 950
        assertOutcome(s, BUY_UP, 0, 0, 950_000, 1_000, 950);
        s.bestAsk = 50_000; // == minPrice; 1_000 * 0.05 = 50
        assertOutcome(s, BUY_UP, 0, 0, 50_000, 1_000, 50);
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
        s.bestBid = 50_000; // DOWN pays 950_000 == maxPrice: passes; 1_000 * 0.95 = 950
        assertOutcome(s, BUY_DOWN, 0, 0, 950_000, 1_000, 950);
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
        gate = new RiskGate(p, collateral, factory, keeperAddr);
        IRiskGate.Snapshot memory s = baseSnapshot();
        s.bestBid = 700_000; // DOWN pays 300_000: inside; 1_000 * 0.3 = 300
        s.bestAsk = 710_000; // UP pays 710_000: outside
        assertOutcome(s, BUY_DOWN, 0, 0, 300_000, 1_000, 300);
        assertRejected(s, BUY_UP, 5, bit(5));
        s.bestBid = 350_000; // DOWN pays 650_000: outside
        s.bestAsk = 360_000; // UP pays 360_000: inside; 1_000 * 0.36 = 360
        assertRejected(s, BUY_DOWN, 5, bit(5));
        assertOutcome(s, BUY_UP, 0, 0, 360_000, 1_000, 360);
    }

    function test_evaluate_rejectsBookAtZeroAndCertainty() public view {
        IRiskGate.Snapshot memory s = baseSnapshot();
        s.bestAsk = 1_000_000; // UP at certainty: outside every band, not rounded
        assertRejected(s, BUY_UP, 5, bit(5));
        s.bestBid = 1_000_000; // DOWN would pay 0: outside every band, no underflow
        assertRejected(s, BUY_DOWN, 5, bit(5));
        s.bestAsk = type(uint256).max; // cost saturates; notional and collateral fail too
        assertRejected(s, BUY_UP, 5, bit(5) | bit(9) | bit(10));
        s.bestBid = type(uint256).max;
        assertRejected(s, BUY_DOWN, 5, bit(5));
    }

    // --- tick grid

    function test_evaluate_roundsOffGridAskUpAndBidDown() public view {
        IRiskGate.Snapshot memory s = baseSnapshot();
        s.bestAsk = 420_001; // up onto the 10_000 grid: 430_000; 1_000 * 0.43 = 430
        assertOutcome(s, BUY_UP, 0, 0, 430_000, 1_000, 430);
        s.bestBid = 409_999; // down onto the grid: 400_000 -> DOWN pays 600_000
        assertOutcome(s, BUY_DOWN, 0, 0, 600_000, 1_000, 600);
    }

    function test_evaluate_roundingCanPushPriceOutOfBand() public view {
        IRiskGate.Snapshot memory s = baseSnapshot();
        s.bestAsk = 940_001; // rounds up to 950_000 == maxPrice: still inside
        assertOutcome(s, BUY_UP, 0, 0, 950_000, 1_000, 950);
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
        s.bestAsk = 420_001; // taken as is; ceil(1_000 * 420_001 / 1e6) = ceil(420.001) = 421
        assertOutcome(s, BUY_UP, 0, 0, 420_001, 1_000, 421);
        s.bestBid = 399_999; // DOWN pays 600_001; ceil(600.001) = 601
        assertOutcome(s, BUY_DOWN, 0, 0, 600_001, 1_000, 601);
    }

    function test_evaluate_tickThatDoesNotDivideOne() public view {
        IRiskGate.Snapshot memory s = baseSnapshot();
        s.tickSize = 7_000; // 1e6 / 7_000 is not an integer
        s.bestAsk = 420_000; // 420_000 = 60 * 7_000: on grid; cost 420
        assertOutcome(s, BUY_UP, 0, 0, 420_000, 1_000, 420);
        s.bestBid = 400_000; // 57 * 7_000 = 399_000 -> DOWN pays 601_000; cost 601
        assertOutcome(s, BUY_DOWN, 0, 0, 601_000, 1_000, 601);
    }

    // --- rules 6 and 7: lot grid and venue minimum

    function test_evaluate_snapsSizeDownOntoLotGrid() public view {
        IRiskGate.Snapshot memory s = baseSnapshot();
        s.lotSize = 300; // 1_000 -> 900; 900 * 0.42 = 378
        s.minQuantity = 0;
        assertOutcome(s, BUY_UP, 0, 0, 420_000, 900, 378);
    }

    function test_evaluate_rejectsWhenLotLargerThanMaxSize() public view {
        IRiskGate.Snapshot memory s = baseSnapshot();
        s.lotSize = 1_001; // 1_000 snaps to 0
        assertRejected(s, BUY_UP, 6, bit(6));
        s.lotSize = 1_000; // exactly one lot: passes
        assertOutcome(s, BUY_UP, 0, 0, 420_000, 1_000, 420);
    }

    function test_evaluate_minimumQuantityBoundary() public view {
        IRiskGate.Snapshot memory s = baseSnapshot();
        s.minQuantity = 1_000; // quantity == minimum: allowed
        assertOutcome(s, BUY_UP, 0, 0, 420_000, 1_000, 420);
        s.minQuantity = 1_001; // one above: 0 < 1_000 < 1_001
        assertRejected(s, BUY_UP, 7, bit(7));
    }

    // --- rule 8 concurrency: cap 3

    function test_evaluate_concurrencyBoundary() public view {
        IRiskGate.Snapshot memory s = baseSnapshot();
        s.openPositions = 2; // one slot left
        assertOutcome(s, BUY_UP, 0, 0, 420_000, 1_000, 420);
        s.openPositions = 3; // at the cap
        assertRejected(s, BUY_UP, 8, bit(8));
        s.openPositions = 255;
        assertRejected(s, BUY_DOWN, 8, bit(8));
    }

    // --- rule 9 notional: cap 10_000, BUY_UP cost 420

    function test_evaluate_notionalBoundary() public view {
        IRiskGate.Snapshot memory s = baseSnapshot();
        s.openNotional = 9_580; // 9_580 + 420 = 10_000: exactly the cap passes
        assertOutcome(s, BUY_UP, 0, 0, 420_000, 1_000, 420);
        s.openNotional = 9_581; // 10_001 > 10_000
        assertRejected(s, BUY_UP, 9, bit(9));
        s.openNotional = type(uint256).max; // the sum would overflow: still just rule 9
        assertRejected(s, BUY_UP, 9, bit(9));
    }

    // --- rule 10 collateral: BUY_DOWN cost 600

    function test_evaluate_collateralBoundary() public view {
        IRiskGate.Snapshot memory s = baseSnapshot();
        s.collateralAvailable = 600; // exactly the cost passes
        assertOutcome(s, BUY_DOWN, 0, 0, 600_000, 1_000, 600);
        s.collateralAvailable = 599; // one unit short
        assertRejected(s, BUY_DOWN, 10, bit(10));
    }

    function test_evaluate_costRoundsUpNeverDown() public view {
        IRiskGate.Snapshot memory s = baseSnapshot();
        s.tickSize = 1;
        s.lotSize = 1;
        s.bestAsk = 1; // below band: rejected, but cost still feeds rules 9 and 10
        s.collateralAvailable = 0; // ceil(1_000 * 1 / 1e6) = ceil(0.001) = 1 > 0
        assertRejected(s, BUY_UP, 5, bit(5) | bit(10));
        s.bestAsk = 420_001;
        s.collateralAvailable = 420; // ceil(420.001) = 421 > 420: one unit short
        assertRejected(s, BUY_UP, 10, bit(10));
        s.collateralAvailable = 421;
        assertOutcome(s, BUY_UP, 0, 0, 420_001, 1_000, 421);
    }

    // --- several rules at once

    function test_evaluate_reportsEveryFailingRuleInMask() public view {
        IRiskGate.Snapshot memory s = baseSnapshot();
        s.finalized = true; // 2
        s.nowSec = 10_000; // 3
        s.bestAsk = 990_000; // 5
        s.minQuantity = 5_000; // 7
        s.openPositions = 3; // 8
        s.openNotional = 10_000; // 9: 10_000 + 990 > 10_000
        s.collateralAvailable = 0; // 10
        assertRejected(s, BUY_UP, 2, bit(2) | bit(3) | bit(5) | bit(7) | bit(8) | bit(9) | bit(10));
    }

    function test_evaluate_emptySideSkipsBandAndCostRules() public view {
        // Rule 4 failing means rules 5, 9 and 10 are not evaluated; 6, 7, 8 still are.
        IRiskGate.Snapshot memory s = baseSnapshot();
        s.bestAsk = 0;
        s.lotSize = 2_000; // 6
        s.openPositions = 3; // 8
        s.collateralAvailable = 0;
        assertRejected(s, BUY_UP, 4, bit(4) | bit(6) | bit(8));
    }

    function test_evaluate_sizeZeroSkipsCostRules() public view {
        IRiskGate.Snapshot memory s = baseSnapshot();
        s.lotSize = 2_000; // quantity 0: rule 6, and 9/10 are not evaluated
        s.collateralAvailable = 0;
        s.openNotional = type(uint256).max;
        assertRejected(s, BUY_UP, 6, bit(6));
    }

    // --- labels

    function test_reasonLabel_returnsSeedLabelsVerbatim() public view {
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
    }

    function test_reasonLabel_revertsForUnknownCode() public {
        vm.expectRevert(abi.encodeWithSelector(IRiskGate.UnknownReason.selector, uint8(12)));
        gate.reasonLabel(12);
    }
}
