// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {GateRules} from "../../src/libraries/GateRules.sol";

/// @notice Exposes the pieces of GateRules that `evaluate` does not return (the limit) or only
/// reaches in part (the drawdown branch with H below the balance, fills of huge orders), so
/// tests can check them against hand-worked values.
contract GateRulesHarness {
    function orderLimit(uint256 maxPrice, uint256 maxPricePaid, uint256 tickSize, bool buyUp)
        external
        pure
        returns (uint256)
    {
        return GateRules.orderLimit(maxPrice, maxPricePaid, tickSize, buyUp);
    }

    function costUp(uint256 quantity, uint256 price) external pure returns (uint256) {
        return GateRules.costUp(quantity, price);
    }

    function drawdownExceeded(uint256 hwm, uint256 available, uint256 cost, uint256 maxDrawdown)
        external
        pure
        returns (bool)
    {
        return GateRules.drawdownExceeded(hwm, available, cost, maxDrawdown);
    }

    function highWaterMark(uint256 stored, uint256 available, uint256 openNotional)
        external
        pure
        returns (uint256)
    {
        return GateRules.highWaterMark(stored, available, openNotional);
    }

    function fillBelowMinimum(uint256 filled, uint256 quantity, uint16 minFillBps)
        external
        pure
        returns (bool)
    {
        return GateRules.fillBelowMinimum(filled, quantity, minFillBps);
    }
}
