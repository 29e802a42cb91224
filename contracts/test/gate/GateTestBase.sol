// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {Test} from "../utils/Test.sol";
import {RiskGate} from "../../src/RiskGate.sol";
import {IRiskGate} from "../../src/interfaces/IRiskGate.sol";

/// @notice Shared fixture for the pure parts of RiskGate: one gate with round, hand-checkable
/// bounds and a baseline snapshot that passes in both directions.
abstract contract GateTestBase is Test {
    uint8 internal constant ABSTAIN = 0;
    uint8 internal constant BUY_UP = 1;
    uint8 internal constant BUY_DOWN = 2;

    // Bounds: band [0.05, 0.95], 1_000 units per order, 5 minutes of headroom, 3 positions,
    // 10_000 units of collateral at risk.
    uint256 internal constant MIN_PRICE = 50_000;
    uint256 internal constant MAX_PRICE = 950_000;
    uint256 internal constant MAX_SIZE = 1_000;
    uint32 internal constant MIN_HEADROOM = 300;
    uint8 internal constant MAX_CONCURRENT = 3;
    uint256 internal constant MAX_NOTIONAL = 10_000;

    address internal collateral = makeAddr("collateral");
    address internal factory = makeAddr("factory");
    address internal keeperAddr = makeAddr("keeper");
    RiskGate internal gate;

    function setUp() public virtual {
        gate = new RiskGate(defaultParams(), collateral, factory, keeperAddr);
    }

    function defaultParams() internal pure returns (IRiskGate.Params memory) {
        return IRiskGate.Params({
            minPrice: MIN_PRICE,
            maxPrice: MAX_PRICE,
            maxSize: MAX_SIZE,
            minHeadroom: MIN_HEADROOM,
            maxConcurrent: MAX_CONCURRENT,
            maxNotional: MAX_NOTIONAL
        });
    }

    /// @dev Book 0.40 / 0.42 on a 0.01 tick, lot 100, minimum 100, 9_000 s to expiry.
    /// BUY_UP pays 420_000 for 1_000 units: cost 1_000 * 420_000 / 1e6 = 420.
    /// BUY_DOWN's UP limit is 400_000, so it pays 1e6 - 400_000 = 600_000: cost 600.
    function baseSnapshot() internal pure returns (IRiskGate.Snapshot memory) {
        return IRiskGate.Snapshot({
            bestBid: 400_000,
            bestAsk: 420_000,
            tickSize: 10_000,
            lotSize: 100,
            minQuantity: 100,
            expirySec: 10_000,
            nowSec: 1_000,
            finalized: false,
            openPositions: 0,
            openNotional: 0,
            collateralAvailable: 1_000_000
        });
    }

    function bit(uint8 rule) internal pure returns (uint16) {
        return uint16(1) << rule;
    }

    function assertOutcome(
        IRiskGate.Snapshot memory s,
        uint8 verdict,
        uint8 wantReason,
        uint16 wantMask,
        uint256 wantPrice,
        uint256 wantQuantity,
        uint256 wantCost
    ) internal view {
        (uint8 reason, uint16 mask, uint256 price, uint256 quantity, uint256 cost) =
            gate.evaluate(s, verdict);
        assertEq(uint256(reason), uint256(wantReason), "reason");
        assertEq(uint256(mask), uint256(wantMask), "failedMask");
        assertEq(price, wantPrice, "pricePaid");
        assertEq(quantity, wantQuantity, "quantity");
        assertEq(cost, wantCost, "cost");
    }

    function assertRejected(IRiskGate.Snapshot memory s, uint8 verdict, uint8 reason, uint16 mask)
        internal
        view
    {
        assertOutcome(s, verdict, reason, mask, 0, 0, 0);
    }

    /// @dev The first 32 bytes of `raw`, zero-padded: what UnknownVerdict reports.
    function headOf(bytes memory raw) internal pure returns (bytes32 h) {
        bytes memory padded = bytes.concat(raw, new bytes(32));
        assembly {
            h := mload(add(padded, 32))
        }
    }

    function unknownVerdict(bytes memory raw) internal pure returns (bytes memory) {
        return abi.encodeWithSelector(IRiskGate.UnknownVerdict.selector, raw.length, headOf(raw));
    }
}
