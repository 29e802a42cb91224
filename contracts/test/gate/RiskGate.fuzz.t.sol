// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {GateTestBase} from "./GateTestBase.sol";
import {RiskGate} from "../../src/RiskGate.sol";
import {IRiskGate} from "../../src/interfaces/IRiskGate.sol";

/// @notice evaluate under fuzzed bounds (any the constructor accepts) and fuzzed snapshots biased
/// toward the edges: it never reverts, a rejection carries no order, and any accepted order is on
/// both grids, inside the band and within every limit.
contract RiskGateFuzzTest is GateTestBase {
    uint256 internal constant ONE = 1_000_000;

    struct Raw {
        uint256 minPrice;
        uint256 maxPrice;
        uint256 maxSize;
        uint256 headroom;
        uint256 concurrent;
        uint256 notional;
        uint256 bid;
        uint256 ask;
        uint256 tick;
        uint256 lot;
        uint256 minQty;
        uint256 expiry;
        uint256 nowSec;
        uint256 open;
        uint256 openNotional;
        uint256 collateral;
    }

    function testFuzz_evaluate_acceptedOrdersStayInsideBounds(Raw memory r, bool fin, uint8 verdict)
        public
    {
        IRiskGate.Params memory p;
        p.minPrice = _edgy(r.minPrice, 1, ONE - 2);
        p.maxPrice = _edgy(r.maxPrice, p.minPrice + 1, ONE - 1);
        p.maxSize = _edgy(r.maxSize, 1, type(uint256).max);
        p.minHeadroom = uint32(_edgy(r.headroom, 120, type(uint32).max));
        p.maxConcurrent = uint8(_edgy(r.concurrent, 1, 255));
        p.maxNotional = _edgy(r.notional, 1, type(uint256).max);
        RiskGate g = new RiskGate(p, collateral, factory, keeperAddr);

        IRiskGate.Snapshot memory s;
        s.bestBid = _price(r.bid);
        s.bestAsk = _price(r.ask);
        s.tickSize = _grid(r.tick);
        s.lotSize = _grid(r.lot);
        s.minQuantity = _edgy(r.minQty, 0, type(uint256).max);
        s.nowSec = uint64(_edgy(r.nowSec, 0, type(uint64).max));
        s.expirySec = uint64(_edgy(r.expiry, 0, type(uint64).max));
        s.finalized = fin;
        s.openPositions = uint8(_edgy(r.open, 0, 255));
        s.openNotional = _edgy(r.openNotional, 0, type(uint256).max);
        s.collateralAvailable = _edgy(r.collateral, 0, type(uint256).max);
        verdict = uint8(_edgy(verdict, 0, 255));
        // Half the runs are steered toward acceptance, so the accepted-order checks below run
        // thousands of times instead of only when every independent draw happens to pass.
        if (r.open % 2 == 0) {
            s.finalized = false;
            s.nowSec = uint64(bound(r.nowSec, 0, type(uint32).max));
            s.expirySec = s.nowSec + uint64(bound(r.expiry, p.minHeadroom, type(uint32).max));
            s.openPositions = uint8(bound(r.open, 0, p.maxConcurrent - 1));
            s.minQuantity = bound(r.minQty, 0, p.maxSize);
            verdict = uint8(bound(verdict, 1, 2));
        }

        (uint8 reason, uint16 mask, uint256 price, uint256 qty, uint256 cost) =
            g.evaluate(s, verdict);

        if (reason != 0) {
            assertEq(price | qty | cost, 0, "a rejection carries no order");
            assertTrue(mask & (uint16(1) << reason) != 0, "reason is in the mask");
            assertEq(mask & ((uint16(1) << reason) - 1), 0, "reason is the lowest failing rule");
            return;
        }
        assertEq(mask, 0);
        assertTrue(verdict == BUY_UP || verdict == BUY_DOWN, "only a buy passes");
        uint256 upLimit = verdict == BUY_UP ? price : ONE - price;
        if (s.tickSize != 0) assertEq(upLimit % s.tickSize, 0, "UP limit on the tick grid");
        if (s.lotSize != 0) assertEq(qty % s.lotSize, 0, "quantity on the lot grid");
        assertGe(price, p.minPrice, "price >= minPrice");
        assertLe(price, p.maxPrice, "price <= maxPrice");
        assertGt(qty, 0, "quantity > 0");
        assertGe(qty, s.minQuantity, "quantity >= venue minimum");
        assertLe(qty, p.maxSize, "quantity <= maxSize");
        assertLe(cost, s.collateralAvailable, "cost <= collateral");
        assertLe(cost, p.maxNotional, "cost <= maxNotional");
        assertLe(s.openNotional, p.maxNotional - cost, "openNotional + cost <= maxNotional");
        assertLt(s.openPositions, p.maxConcurrent, "a slot was free");
        assertFalse(s.finalized);
        assertGe(uint256(s.expirySec) - s.nowSec, p.minHeadroom, "headroom");
        // The worst case is never floored: cost * 1e6 >= qty * price (no overflow: price < 1e6
        // and cost <= maxNotional, so compare via division).
        assertTrue(cost >= qty / ONE * price, "cost covers whole millions");
        assertEq(
            verdict == BUY_UP ? s.bestAsk <= upLimit : s.bestBid >= upLimit, true, "marketable"
        );
    }

    /// @dev Values at and next to the limits a third of the time, uniform otherwise.
    function _edgy(uint256 x, uint256 lo, uint256 hi) internal pure returns (uint256) {
        uint256 pick = x % 8;
        if (pick == 0) return lo;
        if (pick == 1) return hi;
        if (pick == 2 && lo < hi) return lo + 1;
        return bound(x >> 3, lo, hi);
    }

    function _price(uint256 x) internal pure returns (uint256) {
        uint256 pick = x % 10;
        if (pick == 0) return 0;
        if (pick == 1) return 1;
        if (pick == 2) return ONE - 1;
        if (pick == 3) return ONE;
        if (pick == 4) return _edgy(x >> 4, ONE, type(uint256).max);
        return bound(x >> 4, 0, ONE - 1);
    }

    function _grid(uint256 x) internal pure returns (uint256) {
        uint256 pick = x % 8;
        if (pick == 0) return 0;
        if (pick == 1) return 1;
        if (pick == 2) return 7; // does not divide 1e6
        if (pick == 3) return 10_000;
        if (pick == 4) return _edgy(x >> 3, ONE, type(uint256).max);
        return bound(x >> 3, 1, 250_000);
    }
}
