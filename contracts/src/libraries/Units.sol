// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @title Units
/// @notice The fixed-point units the gate and the venue share, defined once for both.
library Units {
    /// @notice Probability 1.0 in price units: prices are probabilities in 1e6 units, and one
    /// unit of a winning token pays one collateral base unit.
    uint256 internal constant ONE = 1_000_000;
    /// @notice 100 % in basis points.
    uint256 internal constant BPS = 10_000;
}
