// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {GateTestBase} from "./GateTestBase.sol";
import {RiskGate} from "../../src/RiskGate.sol";
import {IRiskGate} from "../../src/interfaces/IRiskGate.sol";

/// @notice evaluate under fuzzed bounds (any the constructor accepts), fuzzed snapshots and
/// quotes biased toward the edges: it never reverts, a rejection carries no order, and any
/// accepted order is on both grids, inside the band, within the quote and within every limit.
contract RiskGateFuzzTest is GateTestBase {
    struct Raw {
        uint256 minPrice;
        uint256 maxPrice;
        uint256 maxSize;
        uint256 headroom;
        uint256 concurrent;
        uint256 notional;
        uint256 horizon;
        uint256 drawdown;
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
        uint256 heldSide;
        uint256 hwm;
        uint256 maxPricePaid;
        uint256 deadline;
    }

    function testFuzz_evaluate_acceptedOrdersStayInsideBounds(
        Raw memory r,
        bool fin,
        bool trusted,
        uint8 verdict
    ) public {
        IRiskGate.Params memory p = defaultParams();
        p.minPrice = _edgy(r.minPrice, 1, ONE - 2);
        p.maxPrice = _edgy(r.maxPrice, p.minPrice + 1, ONE - 1);
        p.maxSize = _edgy(r.maxSize, 1, type(uint256).max);
        p.minHeadroom = uint32(_edgy(r.headroom, 120, type(uint32).max));
        p.maxConcurrent = uint8(_edgy(r.concurrent, 1, 255));
        p.maxNotional = _edgy(r.notional, 1, type(uint256).max);
        p.maxHorizon = uint32(_edgy(r.horizon, p.minHeadroom, type(uint32).max));
        p.maxDrawdown = _edgy(r.drawdown, 1, type(uint256).max);
        RiskGate g = deployGate(p);

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
        s.resolverTrusted = trusted;
        s.creatorTrusted = r.deadline % 4 != 0;
        s.heldSide = uint8(_edgy(r.heldSide, 0, 255));
        s.highWaterMark = _edgy(r.hwm, 0, type(uint256).max);
        IRiskGate.Quote memory q;
        q.maxPricePaid = _price(r.maxPricePaid);
        q.deadline = uint64(_edgy(r.deadline, 0, type(uint64).max));
        verdict = uint8(_edgy(verdict, 0, 255));
        // Half the runs are steered toward acceptance, so the accepted-order checks below run
        // thousands of times instead of only when every independent draw happens to pass.
        if (r.open % 2 == 0) {
            s.finalized = false;
            s.resolverTrusted = true;
            s.creatorTrusted = true;
            s.nowSec = uint64(bound(r.nowSec, 0, type(uint32).max));
            s.expirySec = s.nowSec + uint64(bound(r.expiry, p.minHeadroom, p.maxHorizon));
            s.openPositions = uint8(bound(r.open, 0, p.maxConcurrent - 1));
            s.minQuantity = bound(r.minQty, 0, p.maxSize);
            verdict = uint8(bound(verdict, 1, 2));
            s.heldSide = r.heldSide % 2 == 0 ? 0 : verdict;
            q.deadline = uint64(bound(r.deadline, s.nowSec, type(uint64).max));
            s.highWaterMark = bound(r.hwm, 0, s.collateralAvailable);
        }

        Out memory o;
        (o.reason, o.mask, o.price, o.qty, o.cost) = g.evaluate(s, q, verdict);
        _check(p, s, q, verdict, o);
    }

    struct Out {
        uint8 reason;
        uint32 mask;
        uint256 price;
        uint256 qty;
        uint256 cost;
    }

    function _check(
        IRiskGate.Params memory p,
        IRiskGate.Snapshot memory s,
        IRiskGate.Quote memory q,
        uint8 verdict,
        Out memory o
    ) internal pure {
        assertEq(o.mask & (bit(0) | bit(18)), 0, "PASS and rule 18 are never mask bits");
        assertLt(o.mask, bit(21), "no bit beyond 20");
        if (o.reason != 0) {
            assertEq(o.price | o.qty | o.cost, 0, "a rejection carries no order");
            assertTrue(o.reason != 18 && o.reason <= 20, "evaluate never returns 18, nor above 20");
            assertTrue(o.mask & bit(o.reason) != 0, "reason is in the mask");
            assertEq(o.mask & (bit(o.reason) - 1), 0, "reason is the lowest failing rule");
            return;
        }
        assertEq(o.mask, 0);
        assertTrue(verdict == BUY_UP || verdict == BUY_DOWN, "only a buy passes");
        uint256 upLimit = verdict == BUY_UP ? o.price : ONE - o.price;
        if (s.tickSize != 0) assertEq(upLimit % s.tickSize, 0, "UP price on the tick grid");
        if (s.lotSize != 0) assertEq(o.qty % s.lotSize, 0, "quantity on the lot grid");
        assertGe(o.price, p.minPrice, "price >= minPrice");
        assertLe(o.price, p.maxPrice, "price <= maxPrice");
        assertLe(o.price, q.maxPricePaid, "price <= the keeper's quote");
        assertGt(o.qty, 0, "quantity > 0");
        assertGe(o.qty, s.minQuantity, "quantity >= venue minimum");
        assertLe(o.qty, p.maxSize, "quantity <= maxSize");
        assertLe(o.cost, s.collateralAvailable, "cost <= collateral");
        assertLe(o.cost, p.maxNotional, "cost <= maxNotional");
        assertLe(s.openNotional, p.maxNotional - o.cost, "openNotional + cost <= maxNotional");
        assertLt(s.openPositions, p.maxConcurrent, "a slot was free");
        assertFalse(s.finalized);
        assertTrue(s.resolverTrusted, "trusted resolver");
        assertTrue(s.creatorTrusted, "trusted creator");
        assertTrue(s.heldSide == 0 || s.heldSide == verdict, "not the opposite side");
        assertLe(s.nowSec, q.deadline, "not stale");
        assertGe(uint256(s.expirySec) - s.nowSec, p.minHeadroom, "headroom");
        assertLe(uint256(s.expirySec) - s.nowSec, p.maxHorizon, "horizon");
        _assertDrawdownInBound(s, o.cost, p.maxDrawdown);
        assertEq(
            verdict == BUY_UP ? s.bestAsk <= upLimit : s.bestBid >= upLimit, true, "marketable"
        );
        _checkLimit(p, s, q, verdict, o);
    }

    /// @dev The limit, from the specification: L = min(maxPrice, quote); BUY_UP rounds L down,
    /// BUY_DOWN rounds 1e6 - L up. The price paid is at or below it, and the cost is the worst
    /// case at the limit, ceil(qty * limit / 1e6).
    function _checkLimit(
        IRiskGate.Params memory p,
        IRiskGate.Snapshot memory s,
        IRiskGate.Quote memory q,
        uint8 verdict,
        Out memory o
    ) internal pure {
        uint256 limit = _specLimit(p.maxPrice, q.maxPricePaid, s.tickSize, verdict == BUY_UP);
        assertLe(o.price, limit, "price paid <= limit");
        if (s.tickSize != 0) {
            uint256 upSide = verdict == BUY_UP ? limit : ONE - limit;
            assertEq(upSide % s.tickSize, 0, "the market's limit is on the grid");
        }
        if (o.qty <= type(uint128).max) {
            // limit < 1e6 < 2^20, so the product fits.
            assertEq(o.cost, (o.qty * limit + ONE - 1) / ONE, "cost = ceil(qty * limit / 1e6)");
        } else {
            assertGe(o.cost, o.qty / ONE * limit, "cost covers whole millions");
        }
    }

    /// @dev H - (available - cost) <= maxDrawdown with H = max(stored, available + open),
    /// checked as a sum with an explicit overflow test (available >= cost here).
    function _assertDrawdownInBound(IRiskGate.Snapshot memory s, uint256 cost, uint256 maxDD)
        internal
        pure
    {
        uint256 equity;
        unchecked {
            equity = s.collateralAvailable + s.openNotional;
        }
        if (equity < s.collateralAvailable) equity = type(uint256).max;
        uint256 h = s.highWaterMark > equity ? s.highWaterMark : equity;
        uint256 after_ = s.collateralAvailable - cost;
        // h <= after_ + maxDD, where a sum beyond 2^256 - 1 is above any h.
        bool roomOverflows = after_ > type(uint256).max - maxDD;
        assertTrue(roomOverflows || h <= after_ + maxDD, "drawdown within bound");
    }

    function _specLimit(uint256 maxPrice, uint256 quoted, uint256 tick, bool up)
        internal
        pure
        returns (uint256)
    {
        uint256 l = maxPrice < quoted ? maxPrice : quoted;
        if (tick == 0) return l;
        if (up) return l - l % tick;
        uint256 gap = ONE - l; // l <= maxPrice < 1e6
        uint256 upPrice = gap % tick == 0 ? gap : gap - gap % tick + tick;
        return upPrice >= ONE ? 0 : ONE - upPrice;
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
