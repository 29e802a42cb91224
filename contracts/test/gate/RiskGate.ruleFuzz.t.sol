// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {GateVenueBase} from "./GateVenueBase.sol";
import {RiskGate} from "../../src/RiskGate.sol";
import {IRiskGate} from "../../src/interfaces/IRiskGate.sol";
import {BinaryMarket} from "../../src/venue/BinaryMarket.sol";

/// @notice One fuzz test per rule 12 to 18, each driven to both sides of its boundary: every
/// region gets its own branch with the exact expected reason and mask. The rest of the snapshot
/// is the baseline that passes (GateTestBase), so only the rule under test can fail.
contract RiskGateRuleFuzzTest is GateVenueBase {
    uint256 internal constant MAX = type(uint256).max;

    // --- rule 12

    /// @notice Whatever the book, a market whose resolver is not trusted is refused with 12 and
    /// only 12, and the same market under a trusted resolver passes.
    function testFuzz_evaluate_resolverTrustDecides(uint256 askSeed, uint256 bidSeed, bool up)
        public
        view
    {
        IRiskGate.Snapshot memory s = baseSnapshot();
        // Asks and bids whose price paid stays in the band [0.05, 0.95] on the 0.01 grid.
        s.bestAsk = bound(askSeed, 50_000, 950_000);
        s.bestBid = bound(bidSeed, 50_000, 950_000);
        uint8 verdict = up ? BUY_UP : BUY_DOWN;
        s.resolverTrusted = false;
        (uint8 reason, uint32 mask,,,) = gate.evaluate(s, looseQuote(), verdict);
        assertEq(uint256(reason), 12);
        assertEq(uint256(mask), uint256(bit(12)));
        s.resolverTrusted = true;
        (reason, mask,,,) = gate.evaluate(s, looseQuote(), verdict);
        assertEq(uint256(reason), 0, "trusted: passes");
        assertEq(uint256(mask), 0);
    }

    // --- rule 13

    /// @notice expiry - now <= maxHorizon passes, > maxHorizon fails 13, and an expiry at or
    /// before now is rule 3's alone.
    function testFuzz_evaluate_horizonBoundary(
        uint256 horizonSeed,
        uint256 nowSeed,
        uint256 offsetSeed,
        uint256 region
    ) public {
        IRiskGate.Params memory p = defaultParams();
        p.maxHorizon = uint32(bound(horizonSeed, MIN_HEADROOM, type(uint32).max));
        RiskGate g = deployGate(p);
        IRiskGate.Snapshot memory s = baseSnapshot();
        s.nowSec = uint64(bound(nowSeed, 0, type(uint64).max));
        uint256 room = type(uint64).max - s.nowSec; // the furthest expiry from now
        region %= 3;
        uint256 wantMask;
        if (region == 0 && room >= MIN_HEADROOM) {
            // In range: headroom <= expiry - now <= maxHorizon.
            uint256 hi = p.maxHorizon < room ? p.maxHorizon : room;
            s.expirySec = uint64(s.nowSec + _nearTop(offsetSeed, MIN_HEADROOM, hi));
        } else if (region == 1 && room > p.maxHorizon) {
            // Beyond: maxHorizon < expiry - now.
            s.expirySec =
                uint64(s.nowSec + _nearBottom(offsetSeed, uint256(p.maxHorizon) + 1, room));
            wantMask = bit(13);
        } else {
            // Not in the future: headroom fails, horizon is not looked at.
            s.expirySec = uint64(bound(offsetSeed, 0, s.nowSec));
            wantMask = bit(3);
        }
        IRiskGate.Quote memory q = looseQuote();
        (uint8 reason, uint32 mask,,,) = g.evaluate(s, q, BUY_UP);
        assertEq(uint256(mask), wantMask, "mask");
        assertEq(uint256(reason), wantMask == 0 ? 0 : wantMask == bit(13) ? 13 : 3, "reason");
    }

    // --- rule 14

    /// @notice H - (available - cost) <= maxDrawdown passes, one unit more fails 14, for any
    /// bound and balances up to 2^256 - 1. H is the stored mark or the equity, whichever is
    /// higher; the cost is 420 (1_000 units, keeper's limit 0.42).
    function testFuzz_evaluate_drawdownBoundary(
        uint256 drawdownSeed,
        uint256 availableSeed,
        uint256 openSeed,
        uint256 deltaSeed,
        bool fromEquity
    ) public {
        IRiskGate.Params memory p = defaultParams();
        p.maxDrawdown = bound(drawdownSeed, 1, MAX);
        p.maxNotional = MAX; // rule 9 out of the way: only rule 14 and rule 10 can fail
        RiskGate g = deployGate(p);
        uint256 cost = 420;
        IRiskGate.Snapshot memory s = baseSnapshot();
        s.collateralAvailable = bound(availableSeed, 0, MAX);
        // Aim at the boundary: put the drawdown at maxDrawdown + delta, delta in [-2, 2],
        // wherever that is representable; one run in five takes the seeds as they are.
        uint256 delta = bound(deltaSeed, 0, 4);
        uint256 aim = _addSaturating(p.maxDrawdown, delta); // drawdown + 2
        bool raw = deltaSeed % 5 == 4;
        if (fromEquity) {
            // Stored H 0: H is the equity, so the drawdown is openNotional + cost.
            s.highWaterMark = 0;
            s.openNotional = raw || aim < cost + 2 ? bound(openSeed, 0, MAX - cost) : aim - cost - 2;
        } else {
            // Stored H above the equity: the drawdown is H - available + cost.
            s.openNotional = 0;
            uint256 base = s.collateralAvailable >= cost ? s.collateralAvailable - cost : 0;
            s.highWaterMark = raw || aim < 2 ? openSeed : _addSaturating(base, aim - 2);
        }

        // The expected outcome, from the definition, with an explicit overflow flag.
        uint256 equity = _addSaturating(s.collateralAvailable, s.openNotional);
        uint256 h = s.highWaterMark > equity ? s.highWaterMark : equity;
        // drawdown = (h - available) + cost, as h >= available here (h >= equity >= available).
        uint256 below = h - s.collateralAvailable;
        bool over = below > MAX - cost || below + cost > p.maxDrawdown;
        uint32 wantMask = (over ? bit(14) : 0) | (s.collateralAvailable < cost ? bit(10) : 0);

        (uint8 reason, uint32 mask,,, uint256 gotCost) = g.evaluate(s, priceQuote(420_000), BUY_UP);
        assertEq(uint256(mask), uint256(wantMask), "mask");
        if (wantMask == 0) {
            assertEq(uint256(reason), 0, "in bound: passes");
            assertEq(gotCost, cost);
        } else {
            assertEq(uint256(reason), s.collateralAvailable < cost ? 10 : 14, "reason");
        }
    }

    // --- rule 15

    /// @notice The price paid at or below the quote passes, one unit above fails 15; the
    /// limit, and hence the cost, is then the quote rounded in the tightening direction.
    function testFuzz_evaluate_quoteBoundary(
        uint256 priceSeed,
        uint256 quoteSeed,
        bool up,
        bool above
    ) public view {
        IRiskGate.Snapshot memory s = baseSnapshot();
        // The price paid, on the 0.01 grid inside the band: BUY_UP pays the ask, BUY_DOWN
        // pays 1e6 - bid.
        uint256 paid = bound(priceSeed, 5, 95) * 10_000;
        if (up) s.bestAsk = paid;
        else s.bestBid = ONE - paid;
        uint8 verdict = up ? BUY_UP : BUY_DOWN;
        uint256 quoted =
            above ? _nearTop(quoteSeed, 0, paid - 1) : _nearBottom(quoteSeed, paid, MAX);
        (uint8 reason, uint32 mask, uint256 price,, uint256 cost) =
            gate.evaluate(s, priceQuote(quoted), verdict);
        if (above) {
            assertEq(uint256(reason), 15, "price paid above the quote");
            assertEq(uint256(mask), uint256(bit(15)));
            return;
        }
        assertEq(uint256(reason), 0, "price paid within the quote");
        assertEq(price, paid);
        // L = min(0.95, quote); on the 0.01 grid both roundings give the largest grid price
        // <= L, which is >= the price paid (itself on the grid). 1_000 units: cost = limit/1e3.
        uint256 l = quoted < MAX_PRICE ? quoted : MAX_PRICE;
        uint256 limit = l - l % 10_000;
        assertEq(cost, limit / 1_000, "cost at the limit");
        assertGe(limit, paid, "limit >= price paid");
    }

    // --- rule 16

    /// @notice now <= deadline passes, now > deadline fails 16.
    function testFuzz_evaluate_deadlineBoundary(uint256 nowSeed, uint256 deadlineSeed, bool late)
        public
        view
    {
        IRiskGate.Snapshot memory s = baseSnapshot();
        s.nowSec = uint64(bound(nowSeed, 0, type(uint64).max - 9_000));
        s.expirySec = s.nowSec + 9_000;
        IRiskGate.Quote memory q = priceQuote(420_000);
        if (late && s.nowSec > 0) {
            q.deadline = uint64(_nearTop(deadlineSeed, 0, s.nowSec - 1));
        } else {
            late = false;
            q.deadline = uint64(_nearBottom(deadlineSeed, s.nowSec, type(uint64).max));
        }
        (uint8 reason, uint32 mask,,,) = gate.evaluate(s, q, BUY_UP);
        assertEq(uint256(reason), late ? 16 : 0);
        assertEq(uint256(mask), late ? uint256(bit(16)) : 0);
    }

    // --- rule 17

    /// @notice Nothing held or the same side held passes; the other side, or any value above 2,
    /// fails 17.
    function testFuzz_evaluate_heldSideDecides(uint8 held, bool up) public view {
        IRiskGate.Snapshot memory s = baseSnapshot();
        s.heldSide = held;
        uint8 verdict = up ? BUY_UP : BUY_DOWN;
        IRiskGate.Quote memory q = priceQuote(up ? 420_000 : 600_000);
        (uint8 reason, uint32 mask,,,) = gate.evaluate(s, q, verdict);
        if (held == 0 || held == verdict) {
            assertEq(uint256(reason), 0, "none or same side");
            assertEq(uint256(mask), 0);
        } else {
            assertEq(uint256(reason), 17, "other side or unknown");
            assertEq(uint256(mask), uint256(bit(17)));
        }
    }

    // --- rule 18, through the venue

    /// @notice With k lots (of 100) resting at the limit and the rest of the book beyond it, an
    /// order of 1_000 fills k * 100; it is kept iff k * 100 * 10_000 >= 1_000 * minFillBps, i.e.
    /// iff k * 1_000 >= minFillBps, and undone otherwise with nothing moved.
    function testFuzz_submitVerdict_minFillBoundary(
        uint256 bpsSeed,
        uint256 lotsSeed,
        uint256 nearSeed,
        bool up
    ) public {
        uint256 lots = bound(lotsSeed, 1, 10);
        // Half the runs sit on the boundary: minFillBps in {k*1_000 - 1, k*1_000, k*1_000 + 1}.
        uint256 bps = nearSeed % 2 == 0
            ? lots * 1_000 + bound(nearSeed >> 1, 0, 2) - 1
            : bound(bpsSeed, 1, 10_000);
        if (bps == 0) bps = 1;
        if (bps > 10_000) bps = 10_000;
        IRiskGate.Params memory p = defaultParams();
        // casting to 'uint16' is safe because bps was clamped to 1..10_000 just above.
        // forge-lint: disable-next-line(unsafe-typecast)
        p.minFillBps = uint16(bps);
        gate = deployGate(p);
        token.mint(address(gate), GATE_FUNDS);
        BinaryMarket m = newMarket();
        // BUY_UP: asks at 0.42 (limit) and 0.43; BUY_DOWN: bids at 0.40 (UP limit) and 0.39.
        makerQuote(m, !up, up ? 420_000 : 400_000, lots * 100);
        makerQuote(m, !up, up ? 430_000 : 390_000, 5_000);
        uint256 beforeMarket = token.balanceOf(address(m));

        uint8 reason = submit(m, up ? "BUY_UP" : "BUY_DOWN");

        IRiskGate.Position memory pos = gate.positionOf(address(m));
        if (lots * 1_000 >= bps) {
            assertEq(uint256(reason), 0, "at or above the minimum: kept");
            assertEq(up ? pos.upUnits : pos.downUnits, lots * 100);
            // 0.42 per UP unit, 0.60 per DOWN unit.
            uint256 spent = lots * (up ? 42 : 60);
            assertEq(pos.notional, spent);
            assertEq(token.balanceOf(address(gate)), GATE_FUNDS - spent);
            assertEq(uint256(gate.openPositions()), 1);
        } else {
            assertEq(uint256(reason), 18, "below the minimum: undone");
            assertEq(pos.upUnits + pos.downUnits + pos.notional, 0);
            assertEq(token.balanceOf(address(gate)), GATE_FUNDS, "no collateral moved");
            assertEq(token.balanceOf(address(m)), beforeMarket, "market untouched");
            assertEq(up ? m.bestAsk() : m.bestBid(), up ? 420_000 : 400_000, "liquidity rests");
            assertEq(uint256(gate.openPositions()), 0, "no slot");
        }
    }

    // ---

    /// @dev `bound`, but a third of the time at or next to the top of the range.
    function _nearTop(uint256 x, uint256 lo, uint256 hi) internal pure returns (uint256) {
        if (x % 3 == 0) return hi - _min(x % 7, hi - lo);
        return bound(x, lo, hi);
    }

    /// @dev `bound`, but a third of the time at or next to the bottom of the range.
    function _nearBottom(uint256 x, uint256 lo, uint256 hi) internal pure returns (uint256) {
        if (x % 3 == 0) return lo + _min(x % 7, hi - lo);
        return bound(x, lo, hi);
    }

    function _addSaturating(uint256 a, uint256 b) internal pure returns (uint256) {
        return a > MAX - b ? MAX : a + b;
    }

    function _min(uint256 a, uint256 b) internal pure returns (uint256) {
        return a < b ? a : b;
    }
}
