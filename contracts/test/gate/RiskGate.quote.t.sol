// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {GateTestBase} from "./GateTestBase.sol";
import {GateRulesHarness} from "./GateRulesHarness.sol";
import {IRiskGate} from "../../src/interfaces/IRiskGate.sol";

/// @notice The keeper's quote can only tighten: rule 15 (price paid above the quoted price),
/// rule 16 (verdict past its deadline), and the order's limit and worst-case cost, worked by hand
/// on and off the tick grid for both directions. Baseline as in GateTestBase (tick 10_000, lot
/// 100, quantity 1_000, BUY_UP pays 420_000, BUY_DOWN pays 600_000, now 1_000).
contract RiskGateQuoteTest is GateTestBase {
    GateRulesHarness internal rules = new GateRulesHarness();

    // --- rule 15: pricePaid <= maxPricePaid

    function test_evaluate_passesWhenPricePaidEqualsQuote() public view {
        IRiskGate.Snapshot memory s = baseSnapshot();
        assertOutcome(s, priceQuote(420_000), BUY_UP, 0, 0, 420_000, 1_000, 420);
        assertOutcome(s, priceQuote(600_000), BUY_DOWN, 0, 0, 600_000, 1_000, 600);
    }

    function test_evaluate_rejectsWhenPricePaidOneAboveQuote() public view {
        IRiskGate.Snapshot memory s = baseSnapshot();
        assertRejected(s, priceQuote(419_999), BUY_UP, 15, bit(15));
        assertRejected(s, priceQuote(599_999), BUY_DOWN, 15, bit(15));
    }

    function test_evaluate_quoteComparesWithThePriceAfterRounding() public view {
        IRiskGate.Snapshot memory s = baseSnapshot();
        // Ask 420_001 is paid at 430_000 (rounded up onto the grid): a quote of 429_999 is above
        // the ask but below the price paid, and is refused.
        s.bestAsk = 420_001;
        assertRejected(s, priceQuote(429_999), BUY_UP, 15, bit(15));
        assertOutcome(s, priceQuote(430_000), BUY_UP, 0, 0, 430_000, 1_000, 430);
        // Bid 409_999 is taken at 400_000: DOWN pays 600_000, though 1e6 - bid = 590_001.
        s.bestBid = 409_999;
        assertRejected(s, priceQuote(599_999), BUY_DOWN, 15, bit(15));
        assertOutcome(s, priceQuote(600_000), BUY_DOWN, 0, 0, 600_000, 1_000, 600);
    }

    function test_evaluate_quoteOfZeroRefusesEveryNonEmptyBook() public view {
        IRiskGate.Snapshot memory s = baseSnapshot();
        // Quote(0, 0) is what the keeper sends for answers that are not buys. Were such a quote
        // sent with a buy, it fails rule 15 (any price > 0) and, at now 1_000, rule 16.
        assertRejected(s, IRiskGate.Quote(0, 0), BUY_UP, 15, bit(15) | bit(16));
        // With an empty side rule 15 is not evaluated.
        s.bestAsk = 0;
        assertRejected(s, priceQuote(0), BUY_UP, 4, bit(4));
    }

    // --- rule 16: now <= deadline

    function test_evaluate_passesWhenNowEqualsDeadline() public view {
        IRiskGate.Snapshot memory s = baseSnapshot();
        IRiskGate.Quote memory q = IRiskGate.Quote(420_000, 1_000); // now 1_000 == deadline
        assertOutcome(s, q, BUY_UP, 0, 0, 420_000, 1_000, 420);
    }

    function test_evaluate_rejectsWhenNowOneSecondPastDeadline() public view {
        IRiskGate.Snapshot memory s = baseSnapshot();
        IRiskGate.Quote memory q = IRiskGate.Quote(420_000, 999);
        assertRejected(s, q, BUY_UP, 16, bit(16));
        q.maxPricePaid = 600_000;
        assertRejected(s, q, BUY_DOWN, 16, bit(16));
    }

    function test_evaluate_deadlineAtTheEdgesOfUint64() public view {
        IRiskGate.Snapshot memory s = baseSnapshot();
        s.nowSec = 0;
        assertOutcome(s, IRiskGate.Quote(420_000, 0), BUY_UP, 0, 0, 420_000, 1_000, 420);
        s.nowSec = type(uint64).max; // past expiry too: rule 3; and one past deadline max - 1
        assertRejected(
            s, IRiskGate.Quote(420_000, type(uint64).max - 1), BUY_UP, 3, bit(3) | bit(16)
        );
        assertRejected(s, IRiskGate.Quote(420_000, type(uint64).max), BUY_UP, 3, bit(3));
    }

    // --- the limit: L = min(maxPrice, maxPricePaid) put on the grid in the tightening direction

    function test_evaluate_buyUpLimitOnAndOffGrid() public view {
        IRiskGate.Snapshot memory s = baseSnapshot();
        // On grid: L = 430_000, limit 430_000, cost 1_000 * 0.43 = 430 (the ask is 420_000).
        assertOutcome(s, priceQuote(430_000), BUY_UP, 0, 0, 420_000, 1_000, 430);
        // Off grid: L = 429_999 rounds DOWN to 420_000, cost 420.
        assertOutcome(s, priceQuote(429_999), BUY_UP, 0, 0, 420_000, 1_000, 420);
        // Above maxPrice: L = min(950_000, 990_000) = 950_000, cost 950.
        assertOutcome(s, priceQuote(990_000), BUY_UP, 0, 0, 420_000, 1_000, 950);
    }

    function test_evaluate_buyDownLimitOnAndOffGrid() public view {
        IRiskGate.Snapshot memory s = baseSnapshot();
        // On grid: L = 610_000, 1e6 - L = 390_000 on grid, limit 610_000, cost 610.
        assertOutcome(s, priceQuote(610_000), BUY_DOWN, 0, 0, 600_000, 1_000, 610);
        // Off grid: L = 609_999, 1e6 - L = 390_001 rounds UP to 400_000, limit 600_000, cost 600.
        assertOutcome(s, priceQuote(609_999), BUY_DOWN, 0, 0, 600_000, 1_000, 600);
        // L = 600_001: 399_999 rounds up to 400_000, limit 600_000, cost 600.
        assertOutcome(s, priceQuote(600_001), BUY_DOWN, 0, 0, 600_000, 1_000, 600);
        // Above maxPrice: L = 950_000, 50_000 on grid, limit 950_000, cost 950.
        assertOutcome(s, priceQuote(990_000), BUY_DOWN, 0, 0, 600_000, 1_000, 950);
    }

    function test_evaluate_limitWithoutGridRoundsOnlyTheCost() public view {
        IRiskGate.Snapshot memory s = baseSnapshot();
        s.tickSize = 0;
        // BUY_UP L = 420_500: limit 420_500, cost ceil(1_000 * 420_500 / 1e6) = ceil(420.5) = 421.
        assertOutcome(s, priceQuote(420_500), BUY_UP, 0, 0, 420_000, 1_000, 421);
        // BUY_DOWN L = 600_300: limit 1e6 - (1e6 - 600_300) = 600_300, ceil(600.3) = 601.
        assertOutcome(s, priceQuote(600_300), BUY_DOWN, 0, 0, 600_000, 1_000, 601);
    }

    function test_orderLimit_handWorked() public view {
        // BUY_UP: roundDown(min(maxPrice, quote), tick).
        assertEq(rules.orderLimit(950_000, 422_100, 10_000, true), 420_000);
        assertEq(rules.orderLimit(950_000, 420_000, 10_000, true), 420_000);
        assertEq(rules.orderLimit(950_000, 9_999, 10_000, true), 0, "below one tick: 0");
        assertEq(rules.orderLimit(950_000, type(uint256).max, 7_000, true), 945_000);
        // BUY_DOWN: 1e6 - roundUp(1e6 - L, tick).
        // 603_000 -> 397_000 -> 400_000 -> 600_000 (the keeper's 600_000 + 50 bps).
        assertEq(rules.orderLimit(950_000, 603_000, 10_000, false), 600_000);
        assertEq(rules.orderLimit(950_000, 950_000, 10_000, false), 950_000);
        // 950_000 -> 50_000 -> 56_000 (8 * 7_000) -> 944_000.
        assertEq(rules.orderLimit(950_000, type(uint256).max, 7_000, false), 944_000);
        // Saturates at 0: L = 50_000 -> 950_000 -> 1_200_000 (4 * 300_000) >= 1e6 -> 0.
        assertEq(rules.orderLimit(950_000, 50_000, 300_000, false), 0);
        // L = 0 -> 1e6 on any grid -> 0.
        assertEq(rules.orderLimit(950_000, 0, 10_000, false), 0);
        // No grid: the limit is L itself.
        assertEq(rules.orderLimit(950_000, 600_300, 0, false), 600_300);
        assertEq(rules.orderLimit(950_000, 420_500, 0, true), 420_500);
    }

    function test_costUp_handWorked() public view {
        assertEq(rules.costUp(1_000, 420_000), 420, "exact");
        assertEq(rules.costUp(1_000, 420_001), 421, "420.001 up to 421");
        assertEq(rules.costUp(1, 1), 1, "1e-6 up to 1");
        assertEq(rules.costUp(0, 950_000), 0, "nothing");
        assertEq(rules.costUp(1_000, 0), 0, "limit 0");
        // (2^256 - 1) * 0.5 = 2^255 - 0.5, rounded up: 2^255.
        assertEq(rules.costUp(type(uint256).max, 500_000), 1 << 255, "huge, no overflow");
        // (2^256 - 1) * 2 overflows: saturates.
        assertEq(rules.costUp(type(uint256).max, 2_000_000), type(uint256).max, "saturates");
    }

    function test_evaluate_hugeOrderCostsHalfOfTwoToThe256() public {
        // maxSize 2^256 - 1 with no lot grid and a limit of 0.5: cost = ceil((2^256 - 1) / 2)
        // = 2^255, computed without overflow. Wide caps let it pass.
        IRiskGate.Params memory p = defaultParams();
        p.maxSize = type(uint256).max;
        p.maxNotional = type(uint256).max;
        p.maxDrawdown = type(uint256).max;
        gate = deployGate(p);
        IRiskGate.Snapshot memory s = baseSnapshot();
        s.lotSize = 0;
        // Resting orders of at least 2^254 units: 64 of them cover the order, so rule 20 passes
        // (with the fixture's 100 units, 64 * 100 is far below 30 % of 2^256 - 1).
        s.minQuantity = uint256(1) << 254;
        s.collateralAvailable = type(uint256).max;
        s.highWaterMark = type(uint256).max;
        assertOutcome(
            s, priceQuote(500_000), BUY_UP, 0, 0, 420_000, type(uint256).max, uint256(1) << 255
        );
    }
}
