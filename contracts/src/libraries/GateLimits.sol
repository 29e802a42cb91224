// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @title GateLimits
/// @notice The fixed limits on what a RiskGate deployment may name, defined once for the gate
/// (which publishes them as its public constants) and for the deploy script (which refuses a
/// list the gate would refuse before anything is deployed).
library GateLimits {
    /// @notice The most trusted resolvers a gate may name (each is an immutable).
    uint256 internal constant MAX_TRUSTED_RESOLVERS = 8;
    /// @notice The most trusted market creators a gate may name (each is an immutable).
    uint256 internal constant MAX_TRUSTED_CREATORS = 8;
    /// @notice The most attestors an attested gate may name (each is an immutable).
    uint256 internal constant MAX_ATTESTORS = 8;
}
