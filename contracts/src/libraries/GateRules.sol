// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {IRiskGate} from "../interfaces/IRiskGate.sol";

/// @title GateRules
/// @notice The pure decision rule of RiskGate: from bounds, a snapshot and a verdict to a reason
/// code, the mask of every failing rule, and the order's price, quantity and worst-case cost.
/// @dev Never reverts, whatever the snapshot holds: grids of 0 mean "no grid", book values at or
/// above certainty are outside every band, and all products saturate instead of overflowing.
library GateRules {
    uint8 internal constant PASS = 0;
    uint8 internal constant ABSTAINED = 1;
    uint8 internal constant FINALIZED = 2;
    uint8 internal constant HEADROOM = 3;
    uint8 internal constant NO_LIQUIDITY = 4;
    uint8 internal constant PRICE_BAND = 5;
    uint8 internal constant SIZE_ZERO = 6;
    uint8 internal constant SIZE_BELOW_MIN = 7;
    uint8 internal constant MAX_CONCURRENT = 8;
    uint8 internal constant MAX_NOTIONAL = 9;
    uint8 internal constant COLLATERAL = 10;
    uint8 internal constant INVALID_VERDICT = 11;

    /// @notice Probability 1.0 in price units.
    uint256 internal constant ONE = 1_000_000;

    struct Outcome {
        uint8 reason;
        uint16 failedMask;
        uint256 pricePaid; // for the token bought
        uint256 quantity;
        uint256 cost; // ceil(quantity * pricePaid / ONE)
    }

    /// @notice Evaluates every rule and reports all failures at once.
    /// @param verdict 0 ABSTAIN, 1 BUY_UP, 2 BUY_DOWN; anything else is INVALID_VERDICT.
    function evaluate(IRiskGate.Params memory p, IRiskGate.Snapshot memory s, uint8 verdict)
        internal
        pure
        returns (Outcome memory o)
    {
        if (verdict == 0) {
            o.reason = ABSTAINED;
            o.failedMask = uint16(1 << ABSTAINED);
            return o;
        }
        if (verdict > 2) {
            o.reason = INVALID_VERDICT;
            o.failedMask = uint16(1 << INVALID_VERDICT);
            return o;
        }

        uint256 mask = 0;
        if (s.finalized) mask |= 1 << FINALIZED;
        // Exactly minHeadroom seconds left is allowed; the subtraction runs only when positive.
        if (s.expirySec <= s.nowSec || s.expirySec - s.nowSec < p.minHeadroom) {
            mask |= 1 << HEADROOM;
        }

        bool buyUp = verdict == 1;
        uint256 bookPrice = buyUp ? s.bestAsk : s.bestBid;
        uint256 pricePaid = 0;
        if (bookPrice == 0) {
            mask |= 1 << NO_LIQUIDITY;
        } else {
            pricePaid =
                buyUp ? upPricePaid(bookPrice, s.tickSize) : downPricePaid(bookPrice, s.tickSize);
            if (pricePaid < p.minPrice || pricePaid > p.maxPrice) mask |= 1 << PRICE_BAND;
        }

        uint256 quantity = roundDown(p.maxSize, s.lotSize);
        if (quantity == 0) mask |= 1 << SIZE_ZERO;
        else if (quantity < s.minQuantity) mask |= 1 << SIZE_BELOW_MIN;

        if (s.openPositions >= p.maxConcurrent) mask |= 1 << MAX_CONCURRENT;

        uint256 cost = 0;
        if (bookPrice != 0 && quantity != 0) {
            cost = costUp(quantity, pricePaid);
            // openNotional + cost > maxNotional, written so that it cannot overflow.
            if (cost > p.maxNotional || s.openNotional > p.maxNotional - cost) {
                mask |= 1 << MAX_NOTIONAL;
            }
            if (cost > s.collateralAvailable) mask |= 1 << COLLATERAL;
        }

        if (mask == 0) {
            o.pricePaid = pricePaid;
            o.quantity = quantity;
            o.cost = cost;
            return o;
        }
        // Only bits 2..10 can be set here, so the mask fits in 16 bits.
        // forge-lint: disable-next-line(unsafe-typecast)
        o.failedMask = uint16(mask);
        o.reason = lowestReason(mask);
    }

    /// @notice Price paid for UP: the best ask rounded UP onto the tick grid, so that an off-grid
    /// book cannot make the order non-marketable. A value at or above ONE is returned unrounded
    /// (it is outside every band and rounding it could overflow).
    function upPricePaid(uint256 bestAsk, uint256 tickSize) internal pure returns (uint256) {
        if (bestAsk >= ONE || tickSize == 0) return bestAsk;
        uint256 rem = bestAsk % tickSize;
        // bestAsk - rem + tickSize <= max(bestAsk + tickSize - 1, tickSize): bestAsk < ONE and
        // when bestAsk < tickSize the sum is exactly tickSize, so it cannot overflow.
        return rem == 0 ? bestAsk : bestAsk - rem + tickSize;
    }

    /// @notice Price paid for DOWN: ONE minus the UP limit, which is the best bid rounded DOWN
    /// onto the tick grid (the seller of UP never gets more than the book offers). A bid at or
    /// above ONE would make the price negative; it saturates at 0, outside every band.
    function downPricePaid(uint256 bestBid, uint256 tickSize) internal pure returns (uint256) {
        if (bestBid >= ONE) return 0;
        return ONE - roundDown(bestBid, tickSize);
    }

    /// @notice The UP limit price sent to the market for a DOWN purchase paying `pricePaid`.
    function downLimit(uint256 pricePaid) internal pure returns (uint256) {
        return ONE - pricePaid;
    }

    /// @notice `x` rounded down onto the grid of `step`; a step of 0 is no grid.
    function roundDown(uint256 x, uint256 step) internal pure returns (uint256) {
        return step == 0 ? x : x - (x % step);
    }

    /// @notice ceil(quantity * price / ONE), exact, saturating at 2^256 - 1.
    /// @dev Splits both factors at ONE: with q = qh*ONE + ql and p = ph*ONE + pl,
    /// q*p/ONE = qh*p + ql*ph + ql*pl/ONE, where only the last term is fractional (ql, pl < ONE,
    /// so ql*pl < 1e12 cannot overflow) and ql*ph <= p. Only qh*p and the sum can overflow.
    // The divisions split the factors exactly (q == qh*ONE + ql); nothing is lost before the
    // multiplications, which is what divide-before-multiply warns about.
    // slither-disable-next-line divide-before-multiply
    function costUp(uint256 quantity, uint256 price) internal pure returns (uint256) {
        uint256 qh = quantity / ONE;
        uint256 ql = quantity % ONE;
        uint256 ph = price / ONE;
        uint256 pl = price % ONE;
        uint256 fraction = (ql * pl + ONE - 1) / ONE; // round up: the worst case, never floored
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
    function lowestReason(uint256 mask) internal pure returns (uint8 reason) {
        reason = 1;
        while ((mask >> reason) & 1 == 0) ++reason;
    }

    /// @notice Labels, verbatim; stable across versions.
    function label(uint8 reason) internal pure returns (string memory) {
        if (reason == PASS) return "PASS";
        if (reason == ABSTAINED) return "model abstained";
        if (reason == FINALIZED) return "market finalized";
        if (reason == HEADROOM) return "expiry headroom too short";
        if (reason == NO_LIQUIDITY) return "no resting liquidity on the side needed";
        if (reason == PRICE_BAND) return "price outside allowed band";
        if (reason == SIZE_ZERO) return "size snapped to zero on the lot grid";
        if (reason == SIZE_BELOW_MIN) return "size below venue minimum";
        if (reason == MAX_CONCURRENT) return "max concurrent positions reached";
        if (reason == MAX_NOTIONAL) return "max notional at risk reached";
        if (reason == COLLATERAL) return "insufficient collateral";
        if (reason == INVALID_VERDICT) return "model output not a valid verdict";
        revert IRiskGate.UnknownReason(reason);
    }
}
