// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {IMarketFactory} from "../interfaces/IMarketFactory.sol";
import {BinaryMarket} from "./BinaryMarket.sol";
import {Units} from "../libraries/Units.sol";
import {VenueLimits} from "../libraries/VenueLimits.sol";

/// @title MarketFactory
/// @notice Deploys binary markets over one collateral and remembers which addresses it deployed,
/// and who asked for each, so RiskGate can refuse a look-alike market and a market made by a
/// creator it does not trust. It is the only place the grid rule is enforced.
contract MarketFactory is IMarketFactory {
    address public immutable collateral;

    address[] private _markets;
    /// @dev Zero for an address this factory did not deploy; `createMarket`'s caller is never 0.
    mapping(address market => address creator) private _creatorOf;

    constructor(address collateral_) {
        // A zero collateral makes every escrow pull revert: nothing can be lost, so the deployer's
        // choice stands (the interface has no error for it).
        // slither-disable-next-line missing-zero-check
        collateral = collateral_;
    }

    // ---

    /// @inheritdoc IMarketFactory
    function createMarket(
        string calldata question,
        uint256 tickSize,
        uint256 lotSize,
        uint256 minQuantity,
        uint64 expiry,
        address resolver
    ) external returns (address market) {
        // tick * lot a multiple of 1e6 makes every on-grid amount exact (no rounding anywhere);
        // mulmod, because a huge lot must be refused, not overflow.
        if (
            tickSize == 0 || tickSize >= Units.ONE || lotSize == 0
                || mulmod(tickSize, lotSize, Units.ONE) != 0
        ) {
            revert InvalidGrid(tickSize, lotSize);
        }
        // Expiry is wall-clock by design; seconds of validator skew do not matter here.
        // slither-disable-start timestamp
        // forge-lint: disable-next-line(block-timestamp)
        if (expiry <= block.timestamp) revert InvalidExpiry(expiry, block.timestamp);
        // slither-disable-end timestamp
        if (resolver == address(0)) revert ZeroResolver();
        // The question is shown to a language model and to people: bounded here, where every
        // market is made, so no reader has to defend against a megabyte of it.
        uint256 qlen = bytes(question).length;
        if (qlen == 0) revert QuestionEmpty();
        if (qlen > VenueLimits.MAX_QUESTION_BYTES) {
            revert QuestionTooLong(qlen, VenueLimits.MAX_QUESTION_BYTES);
        }

        market = address(
            new BinaryMarket(
                collateral,
                tickSize,
                lotSize,
                minQuantity,
                expiry,
                resolver,
                keccak256(bytes(question))
            )
        );
        uint256 index = _markets.length;
        _markets.push(market);
        _creatorOf[market] = msg.sender;
        // One stack slot (a memory pointer) instead of the calldata offset and length at the
        // bottom of the stack, which the nine-field event cannot reach.
        string memory text = question;
        emit MarketCreated(
            market, index, tickSize, lotSize, minQuantity, expiry, resolver, msg.sender, text
        );
    }

    /// @inheritdoc IMarketFactory
    function isMarket(address market) external view returns (bool) {
        return _creatorOf[market] != address(0);
    }

    /// @inheritdoc IMarketFactory
    function creatorOf(address market) external view returns (address) {
        return _creatorOf[market];
    }

    /// @inheritdoc IMarketFactory
    function marketCount() external view returns (uint256) {
        return _markets.length;
    }

    /// @inheritdoc IMarketFactory
    function marketAt(uint256 index) external view returns (address) {
        return _markets[index];
    }
}
