// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @title VenueLimits
/// @notice The venue's fixed limits that RiskGate's rules depend on, defined once for both.
library VenueLimits {
    /// @notice The most resting orders one immediate-or-cancel take matches. It bounds a taker's
    /// gas whatever the book holds; with every resting order at least the market's minimum size,
    /// a take against liquidity inside its limit fills at least `MAX_MATCHES_PER_TAKE` times that
    /// size (or all it asked for).
    uint256 internal constant MAX_MATCHES_PER_TAKE = 64;

    /// @notice The longest market question, in bytes (UTF-8): a post's length, enough to name
    /// the event, the threshold and the date, too short to smuggle a second prompt into.
    uint256 internal constant MAX_QUESTION_BYTES = 280;
}
