// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @title IMarketFactory
/// @notice Creates binary markets and answers, authoritatively, whether it created an address.
/// RiskGate trusts only markets for which `isMarket` is true, and reads who created each one
/// (`creatorOf`), since trusting a resolver does not make every market that names it trusted.
interface IMarketFactory {
    error InvalidGrid(uint256 tickSize, uint256 lotSize);
    error InvalidExpiry(uint64 expiry, uint256 nowSec);
    error ZeroResolver();
    /// @notice The question is longer than `max` (`VenueLimits.MAX_QUESTION_BYTES`, 280) bytes.
    error QuestionTooLong(uint256 length, uint256 max);
    error QuestionEmpty();

    event MarketCreated(
        address indexed market,
        uint256 indexed index,
        uint256 tickSize,
        uint256 lotSize,
        uint256 minQuantity,
        uint64 expiry,
        address resolver,
        address indexed creator,
        string question
    );

    /// @notice Deploys a market for `question`, the event it asks about (1 to 280 bytes, stored
    /// by the market as its keccak256 `questionHash` and published whole in `MarketCreated`).
    /// `tickSize * lotSize` must be a positive multiple of 1e6 and `tickSize < 1e6`; `expiry` must
    /// be in the future.
    function createMarket(
        string calldata question,
        uint256 tickSize,
        uint256 lotSize,
        uint256 minQuantity,
        uint64 expiry,
        address resolver
    ) external returns (address market);

    function isMarket(address market) external view returns (bool);
    /// @notice The address that called `createMarket` for `market`, or zero if this factory did
    /// not create it (so `creatorOf(m) != 0` exactly when `isMarket(m)`).
    function creatorOf(address market) external view returns (address);
    function marketCount() external view returns (uint256);
    function marketAt(uint256 index) external view returns (address);
    function collateral() external view returns (address);
}
