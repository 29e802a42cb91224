// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {IRiskGate} from "../interfaces/IRiskGate.sol";
import {Reason, Reasons, Verdict, Verdicts} from "./GateTypes.sol";
import {Units} from "./Units.sol";
import {VenueLimits} from "./VenueLimits.sol";

/// @title GateRules
/// @notice The pure decision rule of RiskGate: from bounds, a snapshot, the keeper's quote and a
/// verdict to a reason code, the mask of every failing rule, and the order's price, limit,
/// quantity and worst-case cost.
/// @dev Never reverts, whatever the snapshot and quote hold: grids of 0 mean "no grid", book
/// values at or above certainty are outside every band, and all sums and products saturate or
/// are compared without being formed.
library GateRules {
    struct Outcome {
        Reason reason;
        uint32 failedMask;
        uint256 pricePaid; // for the token bought
        uint256 limit; // for the token bought, on the grid, tightened by the quote
        uint256 quantity;
        uint256 cost; // ceil(quantity * limit / ONE)
    }

    /// @notice Evaluates every rule and reports all failures at once.
    /// @param verdict ABSTAIN, BUY_UP or BUY_DOWN; any other code is INVALID_VERDICT.
    function evaluate(
        IRiskGate.Params memory p,
        IRiskGate.Snapshot memory s,
        IRiskGate.Quote memory q,
        Verdict verdict
    ) internal pure returns (Outcome memory o) {
        if (verdict == Verdicts.ABSTAIN) {
            o.reason = Reasons.ABSTAINED;
            o.failedMask = uint32(Reasons.ABSTAINED.bit());
            return o;
        }
        // BUY_DOWN is the highest valid code.
        if (Verdict.unwrap(verdict) > Verdict.unwrap(Verdicts.BUY_DOWN)) {
            o.reason = Reasons.INVALID_VERDICT;
            o.failedMask = uint32(Reasons.INVALID_VERDICT.bit());
            return o;
        }

        uint256 mask = marketRules(p, s, q, verdict);

        bool buyUp = verdict == Verdicts.BUY_UP;
        uint256 bookPrice = buyUp ? s.bestAsk : s.bestBid;
        uint256 pricePaid = 0;
        if (bookPrice == 0) {
            mask |= Reasons.NO_LIQUIDITY.bit();
        } else {
            pricePaid =
                buyUp ? upPricePaid(bookPrice, s.tickSize) : downPricePaid(bookPrice, s.tickSize);
            if (pricePaid < p.minPrice || pricePaid > p.maxPrice) mask |= Reasons.PRICE_BAND.bit();
            if (pricePaid > q.maxPricePaid) mask |= Reasons.QUOTE_LIMIT.bit();
        }

        uint256 quantity = roundDown(p.maxSize, s.lotSize);
        if (quantity == 0) {
            mask |= Reasons.SIZE_ZERO.bit();
        } else {
            if (quantity < s.minQuantity) mask |= Reasons.SIZE_BELOW_MIN.bit();
            if (matchCapBelowMinimum(quantity, s.minQuantity, s.lotSize, p.minFillBps)) {
                mask |= Reasons.MATCH_CAP.bit();
            }
        }

        uint256 limit = orderLimit(p.maxPrice, q.maxPricePaid, s.tickSize, buyUp);
        uint256 cost = 0;
        if (bookPrice != 0 && quantity != 0) {
            cost = costUp(quantity, limit);
            mask |= moneyRules(p, s, cost);
        }

        if (mask == 0) {
            o.pricePaid = pricePaid;
            o.limit = limit;
            o.quantity = quantity;
            o.cost = cost;
            return o;
        }
        // Only bits 2..10, 12..17, 19 and 20 can be set here, so the mask fits in 32 bits.
        // forge-lint: disable-next-line(unsafe-typecast)
        o.failedMask = uint32(mask);
        o.reason = lowestReason(mask);
    }

    /// @notice The rules that read neither the book's prices nor the order's size: 2, 3, 8, 12,
    /// 13, 16, 17 and 19.
    function marketRules(
        IRiskGate.Params memory p,
        IRiskGate.Snapshot memory s,
        IRiskGate.Quote memory q,
        Verdict verdict
    ) internal pure returns (uint256 mask) {
        if (s.finalized) mask |= Reasons.FINALIZED.bit();
        if (s.expirySec <= s.nowSec) {
            mask |= Reasons.HEADROOM.bit();
        } else {
            uint256 left;
            // expirySec > nowSec was just checked.
            unchecked {
                left = s.expirySec - s.nowSec;
            }
            // Exactly minHeadroom seconds left is allowed, and exactly maxHorizon seconds out.
            if (left < p.minHeadroom) mask |= Reasons.HEADROOM.bit();
            if (left > p.maxHorizon) mask |= Reasons.HORIZON.bit();
        }
        if (s.openPositions >= p.maxConcurrent) mask |= Reasons.MAX_CONCURRENT.bit();
        if (!s.resolverTrusted) mask |= Reasons.RESOLVER_UNTRUSTED.bit();
        if (s.nowSec > q.deadline) mask |= Reasons.EXPIRED.bit();
        Verdict held = Verdict.wrap(s.heldSide);
        if (held != Verdicts.ABSTAIN && held != verdict) mask |= Reasons.OPPOSITE_SIDE.bit();
        if (!s.creatorTrusted) mask |= Reasons.CREATOR_UNTRUSTED.bit();
    }

    /// @notice Rule 20: whether one IOC of `quantity` can fail to reach the minimum fill against
    /// a book with liquidity inside its limit. Every resting order holds at least
    /// `m = max(minQuantity, lotSize, 1)` units (the venue cancels a remainder below
    /// `minQuantity`, and orders are whole lots), so a take that hits the match cap has filled
    /// at least `MAX_MATCHES_PER_TAKE * m`. When even that is below the minimum, dust could hold
    /// the market at reason 18; the market's own grid is refused up front instead.
    function matchCapBelowMinimum(
        uint256 quantity,
        uint256 minQuantity,
        uint256 lotSize,
        uint16 minFillBps
    ) internal pure returns (bool) {
        uint256 m = minQuantity > lotSize ? minQuantity : lotSize;
        if (m == 0) m = 1;
        // m * 64 >= quantity already covers every fill the order can want; this also keeps the
        // product below quantity, so it cannot overflow.
        if (m >= quantity / VenueLimits.MAX_MATCHES_PER_TAKE + 1) return false;
        return fillBelowMinimum(m * VenueLimits.MAX_MATCHES_PER_TAKE, quantity, minFillBps);
    }

    /// @notice The rules that read the worst-case cost: 9, 10 and 14.
    function moneyRules(IRiskGate.Params memory p, IRiskGate.Snapshot memory s, uint256 cost)
        internal
        pure
        returns (uint256 mask)
    {
        // openNotional + cost > maxNotional, written so that it cannot overflow.
        if (cost > p.maxNotional || s.openNotional > p.maxNotional - cost) {
            mask |= Reasons.MAX_NOTIONAL.bit();
        }
        if (cost > s.collateralAvailable) mask |= Reasons.COLLATERAL.bit();
        uint256 hwm = highWaterMark(s.highWaterMark, s.collateralAvailable, s.openNotional);
        if (drawdownExceeded(hwm, s.collateralAvailable, cost, p.maxDrawdown)) {
            mask |= Reasons.DRAWDOWN.bit();
        }
    }

    /// @notice The order's limit for the token bought: L = min(maxPrice, maxPricePaid), put on
    /// the tick grid in the direction that tightens (see `downLimitPrice` for DOWN).
    function orderLimit(uint256 maxPrice, uint256 maxPricePaid, uint256 tickSize, bool buyUp)
        internal
        pure
        returns (uint256)
    {
        uint256 quoted = maxPrice < maxPricePaid ? maxPrice : maxPricePaid;
        return buyUp ? roundDown(quoted, tickSize) : downLimitPrice(quoted, tickSize);
    }

    /// @notice H = max(stored, available + openNotional), the sum saturating at 2^256 - 1.
    function highWaterMark(uint256 stored, uint256 available, uint256 openNotional)
        internal
        pure
        returns (uint256)
    {
        uint256 equity;
        unchecked {
            // Saturating add: a wrapped sum is smaller than either operand.
            equity = available + openNotional;
            if (equity < available) equity = type(uint256).max;
        }
        return equity > stored ? equity : stored;
    }

    /// @notice Whether `hwm - (available - cost) > maxDrawdown`, over the integers, exactly.
    /// @dev The left side is `(hwm - available) + cost` when hwm >= available, and
    /// `cost - (available - hwm)` otherwise; neither is ever formed where it could overflow or
    /// go negative.
    function drawdownExceeded(uint256 hwm, uint256 available, uint256 cost, uint256 maxDrawdown)
        internal
        pure
        returns (bool)
    {
        if (hwm >= available) {
            uint256 below = hwm - available;
            return below > maxDrawdown || cost > maxDrawdown - below;
        }
        uint256 above = available - hwm;
        return cost > above && cost - above > maxDrawdown;
    }

    /// @notice Price paid for UP: the best ask rounded UP onto the tick grid, so that an off-grid
    /// book cannot make the order non-marketable. A value at or above ONE is returned unrounded
    /// (it is outside every band and rounding it could overflow).
    function upPricePaid(uint256 bestAsk, uint256 tickSize) internal pure returns (uint256) {
        if (bestAsk >= Units.ONE || tickSize == 0) return bestAsk;
        uint256 rem = bestAsk % tickSize;
        // bestAsk - rem + tickSize <= max(bestAsk + tickSize - 1, tickSize): bestAsk < ONE and
        // when bestAsk < tickSize the sum is exactly tickSize, so it cannot overflow.
        return rem == 0 ? bestAsk : bestAsk - rem + tickSize;
    }

    /// @notice Price paid for DOWN: ONE minus the UP limit, which is the best bid rounded DOWN
    /// onto the tick grid (the seller of UP never gets more than the book offers). A bid at or
    /// above ONE would make the price negative; it saturates at 0, outside every band.
    function downPricePaid(uint256 bestBid, uint256 tickSize) internal pure returns (uint256) {
        if (bestBid >= Units.ONE) return 0;
        // roundDown(bestBid) <= bestBid < ONE.
        unchecked {
            return Units.ONE - roundDown(bestBid, tickSize);
        }
    }

    /// @notice The DOWN limit for a DOWN price bound `quoted`: the UP price `ONE - quoted` is
    /// rounded UP onto the grid (tightening: DOWN then pays less), and the DOWN limit is what is
    /// left of ONE, saturating at 0. The market gets the on-grid UP price `ONE - limit`.
    function downLimitPrice(uint256 quoted, uint256 tickSize) internal pure returns (uint256) {
        if (quoted >= Units.ONE) quoted = Units.ONE; // the quote is never above maxPrice < ONE; stay total
        // quoted <= ONE, and the result is formed only when upPrice < ONE.
        unchecked {
            uint256 upPrice = roundUp(Units.ONE - quoted, tickSize);
            return upPrice >= Units.ONE ? 0 : Units.ONE - upPrice;
        }
    }

    /// @notice The UP limit price sent to the market for a DOWN purchase at DOWN limit `limit`.
    function upLimitForDown(uint256 limit) internal pure returns (uint256) {
        return Units.ONE - limit;
    }

    /// @notice `x` rounded down onto the grid of `step`; a step of 0 is no grid.
    function roundDown(uint256 x, uint256 step) internal pure returns (uint256) {
        if (step == 0) return x;
        // x % step <= x.
        unchecked {
            return x - (x % step);
        }
    }

    /// @notice `x <= ONE` rounded up onto the grid of `step`; a step of 0 is no grid. Returns at
    /// least ONE whenever the rounded value would reach it (callers saturate there), so no
    /// rounding of a value near 2^256 is ever needed.
    function roundUp(uint256 x, uint256 step) internal pure returns (uint256) {
        if (step == 0) return x;
        if (step >= Units.ONE) return x == 0 ? 0 : Units.ONE;
        uint256 rem = x % step;
        // x <= ONE and step < ONE, so x - rem + step < 2 * ONE: no overflow.
        unchecked {
            return rem == 0 ? x : x - rem + step;
        }
    }

    /// @notice Whether a fill is below the minimum: `filled * BPS < quantity * minFillBps`, with
    /// the products compared exactly (quantity * minFillBps saturating only above any fill).
    // The division splits quantity exactly at BPS (q == qh*BPS + ql) before the multiplications,
    // which is what divide-before-multiply warns about; nothing is lost.
    // slither-disable-next-line divide-before-multiply
    function fillBelowMinimum(uint256 filled, uint256 quantity, uint16 minFillBps)
        internal
        pure
        returns (bool)
    {
        // filled <= quantity (checked before), and minFillBps <= BPS, so both products are below
        // quantity * BPS; a quantity above 2^256 / BPS is compared through division instead.
        if (quantity <= type(uint256).max / Units.BPS) {
            return filled * Units.BPS < quantity * minFillBps;
        }
        // ceil(quantity * minFillBps / BPS) without the product: a fill reaches the minimum iff
        // it is at least that many units. Unreachable by a real fill, kept so the rule is total.
        uint256 need = quantity / Units.BPS * minFillBps
            + (quantity % Units.BPS * minFillBps + Units.BPS - 1) / Units.BPS;
        return filled < need;
    }

    /// @notice ceil(quantity * price / ONE), exact, saturating at 2^256 - 1.
    /// @dev Splits both factors at ONE: with q = qh*ONE + ql and p = ph*ONE + pl,
    /// q*p/ONE = qh*p + ql*ph + ql*pl/ONE, where only the last term is fractional (ql, pl < ONE,
    /// so ql*pl < 1e12 cannot overflow) and ql*ph <= p. Only qh*p and the sum can overflow.
    // The divisions split the factors exactly (q == qh*ONE + ql); nothing is lost before the
    // multiplications, which is what divide-before-multiply warns about.
    // slither-disable-next-line divide-before-multiply
    function costUp(uint256 quantity, uint256 price) internal pure returns (uint256) {
        uint256 qh = quantity / Units.ONE;
        uint256 ql = quantity % Units.ONE;
        uint256 ph = price / Units.ONE;
        uint256 pl = price % Units.ONE;
        uint256 fraction = (ql * pl + Units.ONE - 1) / Units.ONE; // round up: the worst case, never floored
        uint256 total = ql * ph + fraction;
        if (qh == 0) return total;
        if (price > type(uint256).max / qh) return type(uint256).max;
        uint256 whole = qh * price;
        unchecked {
            // Saturating add: a wrapped sum is smaller than either operand.
            uint256 sum = whole + total;
            return sum < whole ? type(uint256).max : sum;
        }
    }

    /// @notice The lowest rule code set in `mask` (bit 0 is never set).
    function lowestReason(uint256 mask) internal pure returns (Reason) {
        uint8 code = 1;
        while ((mask >> code) & 1 == 0) ++code;
        return Reason.wrap(code);
    }

    /// @notice Every label, verbatim and stable across versions, in code order, each ended by
    /// `|` (no label contains one): one literal costs far less code than a branch per label.
    bytes internal constant LABELS = "PASS|" // 0 PASS
        "model abstained|" // 1 ABSTAINED
        "market finalized|" // 2 FINALIZED
        "expiry headroom too short|" // 3 HEADROOM
        "no resting liquidity on the side needed|" // 4 NO_LIQUIDITY
        "price outside allowed band|" // 5 PRICE_BAND
        "size snapped to zero on the lot grid|" // 6 SIZE_ZERO
        "size below venue minimum|" // 7 SIZE_BELOW_MIN
        "max concurrent positions reached|" // 8 MAX_CONCURRENT
        "max notional at risk reached|" // 9 MAX_NOTIONAL
        "insufficient collateral|" // 10 COLLATERAL
        "model output not a valid verdict|" // 11 INVALID_VERDICT
        "market resolver not trusted|" // 12 RESOLVER_UNTRUSTED
        "expiry too far out|" // 13 HORIZON
        "max drawdown reached|" // 14 DRAWDOWN
        "book moved past the quoted limit|" // 15 QUOTE_LIMIT
        "verdict expired|" // 16 EXPIRED
        "opposite side already held|" // 17 OPPOSITE_SIDE
        "fill below minimum|" // 18 FILL_BELOW_MIN
        "market creator not trusted|" // 19 CREATOR_UNTRUSTED
        "minimum fill beyond the venue's match cap|" // 20 MATCH_CAP
        "answer not attested|" // 21 NOT_ATTESTED
        "attestors disagree|" // 22 ATTESTORS_DISAGREE
        "no consensus in time|" // 23 NO_CONSENSUS_IN_TIME
        "order failed at the market|"; // 24 ORDER_FAILED

    /// @notice The label of `reason`: the segment of `LABELS` after its `reason`-th `|`.
    function label(Reason reason) internal pure returns (string memory) {
        uint256 code = Reason.unwrap(reason);
        bytes memory all = LABELS;
        uint256 start = 0;
        uint256 seen = 0;
        for (uint256 i; i < all.length; ++i) {
            if (all[i] != "|") continue;
            if (seen == code) {
                bytes memory out = new bytes(i - start);
                for (uint256 k; k < out.length; ++k) {
                    out[k] = all[start + k];
                }
                return string(out);
            }
            ++seen;
            start = i + 1;
        }
        revert IRiskGate.UnknownReason(uint8(code));
    }
}
