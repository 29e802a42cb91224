// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {Ownable, Ownable2Step} from "@openzeppelin/contracts/access/Ownable2Step.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {IRiskGate} from "./interfaces/IRiskGate.sol";
import {IBinaryMarket} from "./interfaces/IBinaryMarket.sol";
import {IMarketFactory} from "./interfaces/IMarketFactory.sol";
import {GateRules} from "./libraries/GateRules.sol";
import {VerdictParser} from "./libraries/VerdictParser.sol";

/// @title RiskGate
/// @notice Turns a model's one-word answer into an order whose price and size come only from the
/// live book and from bounds fixed at deploy. The keeper chooses a market and relays the answer;
/// it never supplies a number. The owner can pause, rotate the keeper and withdraw collateral,
/// and can never change a bound.
contract RiskGate is IRiskGate, Ownable2Step {
    using SafeERC20 for IERC20;

    /// @notice The lowest `minHeadroom` any deployment may choose, in seconds.
    uint32 public constant MIN_HEADROOM_FLOOR = 120;
    /// @notice Probability 1.0 in price units; `maxPrice` must stay below it.
    uint256 public constant PRICE_ONE = GateRules.ONE;
    /// @notice The `verdict` of a `Decision` whose raw answer did not parse.
    uint8 public constant VERDICT_INVALID = type(uint8).max;

    uint256 internal immutable _minPrice;
    uint256 internal immutable _maxPrice;
    uint256 internal immutable _maxSize;
    uint32 internal immutable _minHeadroom;
    uint8 internal immutable _maxConcurrent;
    uint256 internal immutable _maxNotional;
    bytes32 internal immutable _paramsHash;
    IERC20 internal immutable _collateral;
    IMarketFactory internal immutable _factory;

    // One slot: every submitVerdict reads keeper and paused, and a PASS updates the count.
    address internal _keeper;
    bool internal _paused;
    uint8 internal _openPositions;

    uint256 internal _openNotional;
    mapping(address market => Position) internal _positions;

    // ---

    constructor(Params memory bounds_, address collateral_, address marketFactory_, address keeper_)
        Ownable(msg.sender)
    {
        if (bounds_.minPrice == 0) revert MinPriceZero();
        if (bounds_.minPrice >= bounds_.maxPrice) {
            revert PriceBandEmpty(bounds_.minPrice, bounds_.maxPrice);
        }
        if (bounds_.maxPrice >= PRICE_ONE) revert MaxPriceAtCertainty(bounds_.maxPrice, PRICE_ONE);
        if (bounds_.maxSize == 0) revert MaxSizeZero();
        if (bounds_.minHeadroom < MIN_HEADROOM_FLOOR) {
            revert MinHeadroomBelowFloor(bounds_.minHeadroom, MIN_HEADROOM_FLOOR);
        }
        if (bounds_.maxConcurrent == 0) revert MaxConcurrentZero();
        if (bounds_.maxNotional == 0) revert MaxNotionalZero();
        if (collateral_ == address(0)) revert ZeroAddress("collateral");
        if (marketFactory_ == address(0)) revert ZeroAddress("marketFactory");
        if (keeper_ == address(0)) revert ZeroAddress("keeper");

        _minPrice = bounds_.minPrice;
        _maxPrice = bounds_.maxPrice;
        _maxSize = bounds_.maxSize;
        _minHeadroom = bounds_.minHeadroom;
        _maxConcurrent = bounds_.maxConcurrent;
        _maxNotional = bounds_.maxNotional;
        _paramsHash = keccak256(abi.encode(bounds_));
        _collateral = IERC20(collateral_);
        _factory = IMarketFactory(marketFactory_);
        _keeper = keeper_;

        emit GateDeployed(_paramsHash, bounds_, collateral_, marketFactory_, keeper_);
        emit KeeperRotated(address(0), keeper_);
    }

    // ---

    /// @inheritdoc IRiskGate
    function parseVerdict(string calldata raw) external pure returns (uint8 verdict) {
        bool ok;
        (ok, verdict) = VerdictParser.tryParse(raw);
        if (!ok) revert UnknownVerdict(bytes(raw).length, VerdictParser.head(raw));
    }

    /// @inheritdoc IRiskGate
    function evaluate(Snapshot calldata s, uint8 verdict)
        external
        view
        returns (uint8 reason, uint16 failedMask, uint256 pricePaid, uint256 quantity, uint256 cost)
    {
        GateRules.Outcome memory o = GateRules.evaluate(_bounds(), s, verdict);
        return (o.reason, o.failedMask, o.pricePaid, o.quantity, o.cost);
    }

    /// @inheritdoc IRiskGate
    function submitVerdict(address market, string calldata raw, bytes32 promptHash)
        external
        returns (uint8 reason)
    {
        if (msg.sender != _keeper) revert NotKeeper(msg.sender, _keeper);
        if (_paused) revert GatePaused();
        // A keeper must not be able to point the gate at a look-alike market.
        if (!_factory.isMarket(market)) revert UnknownMarket(market, address(_factory));

        Order memory order = Order(0, 0, 0, 0, 0);
        uint8 verdict;
        uint16 failedMask;
        bytes memory snapshot;
        // The event needs the fill, so it follows the market call made inside _decide.
        // slither-disable-next-line reentrancy-events
        (verdict, reason, failedMask, snapshot) = _decide(market, raw, order);
        emit Decision(market, promptHash, reason, verdict, failedMask, snapshot, order, raw);
    }

    /// @inheritdoc IRiskGate
    /// @dev Deliberately allowed while paused: closing a position only releases risk.
    function redeem(address market) external returns (uint256 payout) {
        Position memory pos = _positions[market];
        if (pos.upUnits == 0 && pos.downUnits == 0) revert NoOpenPosition(market);
        IBinaryMarket m = IBinaryMarket(market);
        if (!m.finalized()) revert MarketNotFinal(market);
        bool upWon = m.upWins();

        delete _positions[market];
        _openPositions -= 1;
        _openNotional -= pos.notional;

        // A losing position pays 0 and still closes: the market's redeem never reverts for it.
        // State is settled before the call; the event needs the payout, so it follows it.
        // slither-disable-next-line reentrancy-events
        payout = m.redeem();
        emit Settled(market, upWon, pos.upUnits, pos.downUnits, pos.notional, payout);
    }

    /// @inheritdoc IRiskGate
    function pause() external onlyOwner {
        _paused = true;
        emit Paused(msg.sender);
    }

    /// @inheritdoc IRiskGate
    function unpause() external onlyOwner {
        _paused = false;
        emit Unpaused(msg.sender);
    }

    /// @inheritdoc IRiskGate
    function withdrawCollateral(address to, uint256 amount) external onlyOwner {
        if (to == address(0)) revert ZeroAddress("to");
        _collateral.safeTransfer(to, amount);
        emit CollateralWithdrawn(to, amount);
    }

    /// @inheritdoc IRiskGate
    function setKeeper(address newKeeper) external onlyOwner {
        if (newKeeper == address(0)) revert ZeroAddress("keeper");
        emit KeeperRotated(_keeper, newKeeper);
        _keeper = newKeeper;
    }

    /// @notice Disabled: a gate without an owner could never be paused again.
    function renounceOwnership() public view override onlyOwner {
        revert RenounceDisabled();
    }

    // --- views

    /// @inheritdoc IRiskGate
    function reasonLabel(uint8 reason) external pure returns (string memory) {
        return GateRules.label(reason);
    }

    /// @inheritdoc IRiskGate
    function bounds() external view returns (Params memory) {
        return _bounds();
    }

    /// @inheritdoc IRiskGate
    function paramsHash() external view returns (bytes32) {
        return _paramsHash;
    }

    /// @inheritdoc IRiskGate
    function collateral() external view returns (address) {
        return address(_collateral);
    }

    /// @inheritdoc IRiskGate
    function marketFactory() external view returns (address) {
        return address(_factory);
    }

    /// @inheritdoc IRiskGate
    function keeper() external view returns (address) {
        return _keeper;
    }

    /// @inheritdoc IRiskGate
    function paused() external view returns (bool) {
        return _paused;
    }

    /// @inheritdoc IRiskGate
    function openPositions() external view returns (uint8) {
        return _openPositions;
    }

    /// @inheritdoc IRiskGate
    function openNotional() external view returns (uint256) {
        return _openNotional;
    }

    /// @inheritdoc IRiskGate
    function positionOf(address market) external view returns (Position memory) {
        return _positions[market];
    }

    /// @inheritdoc IRiskGate
    function snapshotOf(address market) external view returns (Snapshot memory) {
        if (!_factory.isMarket(market)) revert UnknownMarket(market, address(_factory));
        // Zero-initialized by Solidity, then filled field by field.
        // slither-disable-next-line uninitialized-local
        Snapshot memory s;
        _readSnapshot(market, s);
        return s;
    }

    // --- internal

    function _bounds() internal view returns (Params memory) {
        return Params({
            minPrice: _minPrice,
            maxPrice: _maxPrice,
            maxSize: _maxSize,
            minHeadroom: _minHeadroom,
            maxConcurrent: _maxConcurrent,
            maxNotional: _maxNotional
        });
    }

    /// @dev Everything comes from the market and from the gate's own state, never from calldata.
    /// Fills `s` in place rather than returning a new struct: slither's taint tracking would
    /// otherwise follow `nowSec` into every later comparison and report them all as timestamp
    /// comparisons, when only the headroom rule reads the clock.
    function _readSnapshot(address market, Snapshot memory s) internal view {
        IBinaryMarket.GateQuote memory q = IBinaryMarket(market).gateQuote();
        s.bestBid = q.bestBid;
        s.bestAsk = q.bestAsk;
        s.tickSize = q.tickSize;
        s.lotSize = q.lotSize;
        s.minQuantity = q.minQuantity;
        s.expirySec = q.expiry;
        s.nowSec = uint64(block.timestamp);
        s.finalized = q.finalized;
        s.openPositions = _openPositions;
        s.openNotional = _openNotional;
        s.collateralAvailable = _collateral.balanceOf(address(this));
    }

    /// @dev Parses, reads, evaluates and, on PASS, executes, filling `order` in place. The
    /// snapshot comes back ABI-encoded, or empty when the book was not read: 11 words of zeros
    /// would cost 2_816 gas of log data on every ABSTAIN and would read like an empty book.
    function _decide(address market, string calldata raw, Order memory order)
        internal
        returns (uint8 verdict, uint8 reason, uint16 failedMask, bytes memory snapshot)
    {
        bool ok;
        (ok, verdict) = VerdictParser.tryParse(raw);
        if (!ok) {
            return (
                VERDICT_INVALID,
                GateRules.INVALID_VERDICT,
                uint16(1 << GateRules.INVALID_VERDICT),
                ""
            );
        }
        if (verdict == VerdictParser.ABSTAIN) {
            // Nothing else is evaluated, so the book is not read.
            return (verdict, GateRules.ABSTAINED, uint16(1 << GateRules.ABSTAINED), "");
        }

        // Zero-initialized by Solidity, then filled field by field.
        // slither-disable-next-line uninitialized-local
        Snapshot memory s;
        _readSnapshot(market, s);
        GateRules.Outcome memory o = GateRules.evaluate(_bounds(), s, verdict);
        if (o.reason == GateRules.PASS) {
            order.pricePaid = o.pricePaid;
            order.quantity = o.quantity;
            order.cost = o.cost;
            (order.filled, order.spent) = _execute(market, verdict, o);
        }
        return (verdict, o.reason, o.failedMask, abi.encode(s));
    }

    /// @dev Sends the immediate-or-cancel order. The market may pull at most `cost` (the
    /// allowance), so open notional can never grow past what rule 9 approved; it grows by what
    /// was actually spent, and any allowance left is cleared at once.
    function _execute(address market, uint8 verdict, GateRules.Outcome memory o)
        internal
        returns (uint256 filled, uint256 spent)
    {
        IBinaryMarket m = IBinaryMarket(market);
        _collateral.forceApprove(market, o.cost);
        // The market is factory-made code (checked in submitVerdict) and submitVerdict is
        // keeper-only, so a callback cannot re-enter it; the position can only be booked after
        // the fill is known.
        // slither-disable-start reentrancy-benign
        if (verdict == VerdictParser.BUY_UP) {
            (filled, spent) = m.buyUp(o.pricePaid, o.quantity);
        } else {
            (filled, spent) = m.buyDown(GateRules.downLimit(o.pricePaid), o.quantity);
        }
        if (filled > o.quantity || spent > o.cost) {
            revert FillOutOfBounds(filled, o.quantity, spent, o.cost);
        }
        if (spent < o.cost) _collateral.forceApprove(market, 0);
        if (filled == 0) return (filled, spent);

        Position storage pos = _positions[market];
        if (pos.upUnits == 0 && pos.downUnits == 0) _openPositions += 1;
        if (verdict == VerdictParser.BUY_UP) pos.upUnits += filled;
        else pos.downUnits += filled;
        pos.notional += spent;
        _openNotional += spent;
        // slither-disable-end reentrancy-benign
    }
}
