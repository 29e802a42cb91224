// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {GateVenueBase} from "./GateVenueBase.sol";
import {IRiskGate} from "../../src/interfaces/IRiskGate.sol";

/// @notice A real gate and venue on the deploy defaults (band [0.05, 0.95], 100 tUSD per order,
/// 5 minutes of headroom, 3 positions, 250 tUSD notional, 7 days of horizon, 500 tUSD of
/// drawdown, 1 day of grace, 25 % minimum fill) over 10,000 tUSD: the suites that replay
/// attacks and print their cost against the bound.
abstract contract GateDefaultsBase is GateVenueBase {
    uint256 internal constant TUSD = 1e6;
    uint256 internal constant FUNDS = 10_000 * TUSD;
    uint256 internal constant ORDER = 100 * TUSD; // maxSize: units of payout per order
    uint256 internal constant DRAWDOWN = 500 * TUSD;
    uint32 internal constant GRACE = 1 days;

    address internal attacker = makeAddr("attacker");
    address internal honestMaker = makeAddr("honest-maker");

    /// @dev 1 tUSD: with 100 tUSD orders and a 25 % minimum fill (25 tUSD), 64 matches of at
    /// least 1 tUSD fill 64 tUSD >= 25 tUSD, so rule 20 passes; 100 units would not
    /// (64 * 100 = 6_400 < 25e6).
    function marketMinimum() internal pure override returns (uint256) {
        return TUSD;
    }

    function _defaults() internal pure returns (IRiskGate.Params memory) {
        return IRiskGate.Params({
            minPrice: 50_000,
            maxPrice: 950_000,
            maxSize: ORDER,
            minHeadroom: 300,
            maxConcurrent: 3,
            maxNotional: 250 * TUSD,
            maxHorizon: 7 days,
            maxDrawdown: DRAWDOWN,
            writeOffGrace: GRACE,
            minFillBps: 2_500
        });
    }
}
