// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {GateTestBase} from "./GateTestBase.sol";
import {GateRulesHarness} from "./GateRulesHarness.sol";
import {IRiskGate} from "../../src/interfaces/IRiskGate.sol";

/// @notice evaluate, the rules that bound exposure over time: 12 (trusted resolver), 13 (horizon),
/// 14 (drawdown from the high-water mark) and 17 (opposite side held), each on both sides of its
/// boundary. Baseline as in GateTestBase; the keeper quotes the price paid, so BUY_UP costs
/// 1_000 * 420_000 / 1e6 = 420 and BUY_DOWN 1_000 * 600_000 / 1e6 = 600.
contract RiskGateExposureTest is GateTestBase {
    uint256 internal constant MAX = type(uint256).max;

    GateRulesHarness internal rules = new GateRulesHarness();

    function _up() internal pure returns (IRiskGate.Quote memory) {
        return priceQuote(420_000);
    }

    function _down() internal pure returns (IRiskGate.Quote memory) {
        return priceQuote(600_000);
    }

    // --- rule 12: the market's resolver is trusted

    function test_evaluate_rejectsUntrustedResolver() public view {
        IRiskGate.Snapshot memory s = baseSnapshot();
        s.resolverTrusted = false;
        assertRejected(s, _up(), BUY_UP, 12, bit(12));
        assertRejected(s, _down(), BUY_DOWN, 12, bit(12));
        s.resolverTrusted = true;
        assertOutcome(s, _up(), BUY_UP, 0, 0, 420_000, 1_000, 420);
    }

    // --- rule 13: expiry at most maxHorizon (7 days = 604_800 s) out

    function test_evaluate_passesWhenExpiryExactlyMaxHorizonOut() public view {
        IRiskGate.Snapshot memory s = baseSnapshot();
        s.expirySec = 1_000 + 604_800; // expiry - now == maxHorizon
        assertOutcome(s, _up(), BUY_UP, 0, 0, 420_000, 1_000, 420);
    }

    function test_evaluate_rejectsWhenExpiryOneSecondBeyondMaxHorizon() public view {
        IRiskGate.Snapshot memory s = baseSnapshot();
        s.expirySec = 1_000 + 604_801;
        assertRejected(s, _up(), BUY_UP, 13, bit(13));
        assertRejected(s, _down(), BUY_DOWN, 13, bit(13));
    }

    function test_evaluate_horizonAtTheEdgesOfUint64() public view {
        IRiskGate.Snapshot memory s = baseSnapshot();
        s.nowSec = 0;
        s.expirySec = type(uint64).max; // 2^64 - 1 s out: the locked-slot market of the issue
        assertRejected(s, _up(), BUY_UP, 13, bit(13));
        // An expiry in the past is never "too far out": only rule 3, and no underflow.
        s.nowSec = type(uint64).max;
        s.expirySec = 0;
        assertRejected(s, looseQuote(), BUY_UP, 3, bit(3));
        s.expirySec = type(uint64).max; // expiry == now
        assertRejected(s, looseQuote(), BUY_UP, 3, bit(3));
    }

    function test_evaluate_horizonBoundaryWithTheWidestBound() public {
        IRiskGate.Params memory p = defaultParams();
        p.maxHorizon = type(uint32).max;
        gate = deployGate(p);
        IRiskGate.Snapshot memory s = baseSnapshot();
        s.nowSec = 0;
        s.expirySec = type(uint32).max; // 2^32 - 1 s out == maxHorizon: allowed
        assertOutcome(s, _up(), BUY_UP, 0, 0, 420_000, 1_000, 420);
        s.expirySec = uint64(type(uint32).max) + 1; // one beyond
        assertRejected(s, _up(), BUY_UP, 13, bit(13));
    }

    // --- rule 14: H - (available - cost) <= maxDrawdown (20_000), H = max(stored, equity)

    function test_evaluate_passesWhenDrawdownExactlyAtBound() public view {
        IRiskGate.Snapshot memory s = baseSnapshot();
        // H = max(1_019_580, 1_000_000 + 0) = 1_019_580; H - (1_000_000 - 420) = 20_000.
        s.highWaterMark = 1_019_580;
        assertOutcome(s, _up(), BUY_UP, 0, 0, 420_000, 1_000, 420);
        // BUY_DOWN costs 600: 1_019_400 - (1_000_000 - 600) = 20_000.
        s.highWaterMark = 1_019_400;
        assertOutcome(s, _down(), BUY_DOWN, 0, 0, 600_000, 1_000, 600);
    }

    function test_evaluate_rejectsWhenDrawdownOneUnitOverBound() public view {
        IRiskGate.Snapshot memory s = baseSnapshot();
        s.highWaterMark = 1_019_581; // 19_581 + 420 = 20_001
        assertRejected(s, _up(), BUY_UP, 14, bit(14));
        s.highWaterMark = 1_019_401; // 19_401 + 600 = 20_001
        assertRejected(s, _down(), BUY_DOWN, 14, bit(14));
    }

    function test_evaluate_drawdownTakesEquityWhenAboveStoredMark() public {
        // Open notional counts in the equity: with a stored H of 0, H = 1_000_000 + openNotional.
        // A wide notional cap keeps rule 9 out of the way.
        IRiskGate.Params memory p = defaultParams();
        p.maxNotional = 1_000_000;
        gate = deployGate(p);
        IRiskGate.Snapshot memory s = baseSnapshot();
        s.highWaterMark = 0;
        s.openNotional = 19_580; // H - (1e6 - 420) = 19_580 + 420 = 20_000
        assertOutcome(s, _up(), BUY_UP, 0, 0, 420_000, 1_000, 420);
        s.openNotional = 19_581; // 20_001
        assertRejected(s, _up(), BUY_UP, 14, bit(14));
    }

    function test_evaluate_drawdownWhenCostExceedsBalance() public view {
        IRiskGate.Snapshot memory s = baseSnapshot();
        // available 0: H - (0 - 420) = H + 420, computed without going negative.
        s.collateralAvailable = 0;
        s.highWaterMark = 19_580; // 20_000: rule 10 only
        assertRejected(s, _up(), BUY_UP, 10, bit(10));
        s.highWaterMark = 19_581; // 20_001: rules 10 and 14
        assertRejected(s, _up(), BUY_UP, 10, bit(10) | bit(14));
    }

    function test_evaluate_drawdownNearTwoToThe256() public view {
        IRiskGate.Snapshot memory s = baseSnapshot();
        // H = 2^256 - 1; available 2^256 - 1 - 19_580: H - (available - 420) = 20_000.
        s.highWaterMark = MAX;
        s.collateralAvailable = MAX - 19_580;
        assertOutcome(s, _up(), BUY_UP, 0, 0, 420_000, 1_000, 420);
        s.collateralAvailable = MAX - 19_581; // 20_001
        assertRejected(s, _up(), BUY_UP, 14, bit(14));
        // Balance 2^256 - 1 and nothing below the mark: the drawdown is the cost, 420.
        s.collateralAvailable = MAX;
        assertOutcome(s, _up(), BUY_UP, 0, 0, 420_000, 1_000, 420);
        // Equity saturates: 2^256 - 1 - 100 + 200 -> 2^256 - 1 = H, and
        // H - (2^256 - 1 - 100 - 420) = 520 <= 20_000.
        s.highWaterMark = 0;
        s.collateralAvailable = MAX - 100;
        s.openNotional = 200;
        assertOutcome(s, _up(), BUY_UP, 0, 0, 420_000, 1_000, 420);
        // Balance and notional both 2^256 - 1: rule 9 (notional) fails, and H - (MAX - 420) =
        // 420 is within the drawdown: no overflow anywhere, no rule 14.
        s.collateralAvailable = MAX;
        s.openNotional = MAX;
        assertRejected(s, _up(), BUY_UP, 9, bit(9));
    }

    function test_evaluate_drawdownWithTheWidestBound() public {
        IRiskGate.Params memory p = defaultParams();
        p.maxDrawdown = MAX;
        p.maxNotional = MAX;
        gate = deployGate(p);
        IRiskGate.Snapshot memory s = baseSnapshot();
        s.tickSize = 0; // no grid: the limit is the quote itself
        s.highWaterMark = MAX;
        // Quote 1_000: limit 1_000, cost ceil(1_000 * 1_000 / 1e6) = 1 (rule 15 fails on its
        // own: 420_000 > 1_000). Available 1: H - (1 - 1) = 2^256 - 1 == maxDrawdown: in bound.
        s.collateralAvailable = 1;
        assertRejected(s, priceQuote(1_000), BUY_UP, 15, bit(15));
        // Available 0: H - (0 - 1) = 2^256, one over the bound (and rule 10).
        s.collateralAvailable = 0;
        assertRejected(s, priceQuote(1_000), BUY_UP, 10, bit(10) | bit(14) | bit(15));
    }

    /// @dev The branch evaluate cannot reach (its H is never below the balance): stored H below
    /// the balance, so `cost - (available - H)` is the drawdown.
    function test_drawdownExceeded_whenMarkBelowBalance() public view {
        // H 100, available 150, maxDrawdown 50: 100 - (150 - cost) = cost - 50.
        assertFalse(rules.drawdownExceeded(100, 150, 50, 50), "cost <= excess: no drawdown");
        assertFalse(rules.drawdownExceeded(100, 150, 100, 50), "100 - 50 = 50: at the bound");
        assertTrue(rules.drawdownExceeded(100, 150, 101, 50), "51: one over");
        assertFalse(rules.drawdownExceeded(0, MAX, MAX, 0), "0 - (MAX - MAX) = 0");
        assertTrue(rules.drawdownExceeded(0, MAX - 1, MAX, 0), "0 - (MAX - 1 - MAX) = 1");
        // H above: 1 - (0 - MAX) = MAX + 1 against a bound of MAX.
        assertTrue(rules.drawdownExceeded(1, 0, MAX, MAX), "MAX + 1 > MAX");
        assertFalse(rules.drawdownExceeded(MAX, 0, 0, MAX), "MAX - 0 + 0 == MAX");
    }

    function test_highWaterMark_saturatesAndKeepsThePeak() public view {
        assertEq(rules.highWaterMark(500, 100, 200), 500, "stored peak above equity 300");
        assertEq(rules.highWaterMark(100, 100, 200), 300, "equity 300 above the peak");
        assertEq(rules.highWaterMark(0, MAX, 1), MAX, "MAX + 1 saturates");
        assertEq(rules.highWaterMark(0, MAX - 1, 1), MAX, "exactly MAX");
    }

    // --- rule 17: the other side of this market is not held

    function test_evaluate_heldSideNoneAllowsBothSides() public view {
        IRiskGate.Snapshot memory s = baseSnapshot();
        s.heldSide = 0;
        assertOutcome(s, _up(), BUY_UP, 0, 0, 420_000, 1_000, 420);
        assertOutcome(s, _down(), BUY_DOWN, 0, 0, 600_000, 1_000, 600);
    }

    function test_evaluate_heldSideAllowsAddingToTheSameSide() public view {
        IRiskGate.Snapshot memory s = baseSnapshot();
        s.heldSide = 1; // UP held: BUY_UP adds to it
        assertOutcome(s, _up(), BUY_UP, 0, 0, 420_000, 1_000, 420);
        s.heldSide = 2; // DOWN held: BUY_DOWN adds to it
        assertOutcome(s, _down(), BUY_DOWN, 0, 0, 600_000, 1_000, 600);
    }

    function test_evaluate_rejectsTheOppositeSide() public view {
        IRiskGate.Snapshot memory s = baseSnapshot();
        s.heldSide = 1; // UP held
        assertRejected(s, _down(), BUY_DOWN, 17, bit(17));
        s.heldSide = 2; // DOWN held
        assertRejected(s, _up(), BUY_UP, 17, bit(17));
    }

    function test_evaluate_rejectsBothSidesWhenHeldSideUnknown() public view {
        IRiskGate.Snapshot memory s = baseSnapshot();
        s.heldSide = 3;
        assertRejected(s, _up(), BUY_UP, 17, bit(17));
        assertRejected(s, _down(), BUY_DOWN, 17, bit(17));
        s.heldSide = 255;
        assertRejected(s, _up(), BUY_UP, 17, bit(17));
        assertRejected(s, _down(), BUY_DOWN, 17, bit(17));
    }
}
