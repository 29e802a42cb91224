// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {SafeERC20} from "@openzeppelin/contracts/token/ERC20/utils/SafeERC20.sol";
import {SafeCast} from "@openzeppelin/contracts/utils/math/SafeCast.sol";
import {ReentrancyGuardTransient} from "@openzeppelin/contracts/utils/ReentrancyGuardTransient.sol";
import {IBinaryMarket} from "../interfaces/IBinaryMarket.sol";
import {Units} from "../libraries/Units.sol";
import {VenueLimits} from "../libraries/VenueLimits.sol";

/// @title BinaryMarket
/// @notice A small, real binary market for anvil and tests: one book quoted in UP price, price
/// levels kept sorted best first, FIFO inside a level, makers escrow their own leg, a fill mints
/// one UP and one DOWN unit against exactly one collateral unit.
/// @dev Deployed only by MarketFactory, which enforces the grid rule (`tickSize * lotSize` a
/// multiple of 1e6), so every amount below is an exact integer: no rounding anywhere.
/// Must never hold more or less collateral than `escrowTotal + outstanding` (a direct donation
/// to the contract is the only way to exceed it, and it is simply never paid out).
/// Each level's FIFO is doubly linked, so `cancel` unlinks its order in O(1) and every order in
/// a FIFO has something left to fill: a taker never walks dead entries, and one taker order
/// matches at most `MAX_MATCHES_PER_TAKE` resting orders, whatever the book holds.
/// No resting order is ever below `minQuantity`: placement refuses it, and a partial fill that
/// would leave less cancels the remainder and refunds its maker. So dust cannot stand between a
/// taker and the liquidity behind it: 64 matches fill at least 64 * minQuantity, or all.
contract BinaryMarket is IBinaryMarket, ReentrancyGuardTransient {
    using SafeERC20 for IERC20;

    /// @dev One resting order. Slot 0 packs owner, price, side and the link towards the tail;
    /// slot 1 packs the unfilled quantity (0 = no such order: filled and cancelled orders are
    /// deleted) and the link towards the head. `prev` is read only while the order is not its
    /// level's head: a taker pops heads without rewriting the new head's `prev`, which saves a
    /// cold slot write (~5k gas) per order filled. `remaining` fits in uint208: an order's escrow
    /// is at least quantity / 1e6 and is checked against the uint88 cap first, so a stored
    /// quantity is below 2^88 * 1e6 < 2^108.
    struct Order {
        address owner;
        uint32 price;
        bool isBid;
        uint48 next;
        uint208 remaining;
        uint48 prev;
    }

    /// @dev A price level: FIFO of order ids and links to the neighbouring levels on its side
    /// (`better` is nearer the top of the book). Exists iff `quantity > 0`.
    struct PriceLevel {
        uint48 head;
        uint48 tail;
        uint32 better;
        uint32 worse;
        uint256 quantity;
    }

    /// @dev The hot state, packed into one slot: what `gateQuote` reads, and the two totals
    /// every fill updates. Measured on a first fill against one level: 127.3k gas with both
    /// totals in their own slots, 105.3k with `outstanding` here, ~100k with both here. The
    /// totals are capped at 2^88 - 1 base units (3e20 units of a 6-decimal dollar); beyond that
    /// SafeCast reverts, it never wraps.
    struct Top {
        uint32 bestBid;
        uint32 bestAsk;
        bool finalized;
        bool upWins;
        uint88 escrowTotal;
        uint88 outstanding;
    }

    /// @dev One take's running state: the matches it may still make, and a remainder below
    /// `minQuantity` that a partial fill cancelled, refunded once the taker's state is written
    /// (at most one per take: only the last match can be partial).
    struct Take {
        uint256 matchesLeft;
        address dustOwner;
        uint256 dustRefund;
        uint256 dustUnits;
    }

    /// @inheritdoc IBinaryMarket
    uint256 public constant MAX_MATCHES_PER_TAKE = VenueLimits.MAX_MATCHES_PER_TAKE;

    IERC20 private immutable _collateral;
    uint256 public immutable tickSize;
    uint256 public immutable lotSize;
    uint256 public immutable minQuantity;
    uint64 public immutable expiry;
    address public immutable resolver;
    bytes32 public immutable questionHash;

    Top private _top;
    uint256 private _lastOrderId;
    mapping(uint256 orderId => Order) private _orders;
    mapping(uint256 price => PriceLevel) private _bidLevels;
    mapping(uint256 price => PriceLevel) private _askLevels;
    mapping(address holder => uint256 units) public upBalanceOf;
    mapping(address holder => uint256 units) public downBalanceOf;

    constructor(
        address collateral_,
        uint256 tickSize_,
        uint256 lotSize_,
        uint256 minQuantity_,
        uint64 expiry_,
        address resolver_,
        bytes32 questionHash_
    ) {
        _collateral = IERC20(collateral_);
        tickSize = tickSize_;
        lotSize = lotSize_;
        minQuantity = minQuantity_;
        expiry = expiry_;
        // slither-disable-next-line missing-zero-check
        resolver = resolver_; // only MarketFactory deploys markets, and it refuses a zero resolver
        questionHash = questionHash_;
    }

    // --- makers

    /// @inheritdoc IBinaryMarket
    function placeBid(uint256 price, uint256 quantity)
        external
        nonReentrant
        returns (uint256 orderId)
    {
        Top memory top = _requireOpen();
        _checkOrder(price, quantity);
        if (top.bestAsk != 0 && price >= top.bestAsk) revert OrderWouldCross(price, top.bestAsk);
        // Exact: price on the tick grid, quantity on the lot grid, tick * lot % 1e6 == 0.
        uint256 escrow = quantity * price / Units.ONE;
        // The cap first: it bounds `quantity` below 2^108, so `_rest` can store it as uint208.
        top.escrowTotal = SafeCast.toUint88(uint256(top.escrowTotal) + escrow);
        orderId = _rest(top, true, price, quantity);
        _top = top;
        _collateral.safeTransferFrom(msg.sender, address(this), escrow);
    }

    /// @inheritdoc IBinaryMarket
    function placeAsk(uint256 price, uint256 quantity)
        external
        nonReentrant
        returns (uint256 orderId)
    {
        Top memory top = _requireOpen();
        _checkOrder(price, quantity);
        if (top.bestBid != 0 && price <= top.bestBid) revert OrderWouldCross(price, top.bestBid);
        // Exact, as for bids: (1e6 - price) is on the tick grid too.
        uint256 escrow = quantity * (Units.ONE - price) / Units.ONE;
        // The cap first, as for bids.
        top.escrowTotal = SafeCast.toUint88(uint256(top.escrowTotal) + escrow);
        orderId = _rest(top, false, price, quantity);
        _top = top;
        _collateral.safeTransferFrom(msg.sender, address(this), escrow);
    }

    /// @inheritdoc IBinaryMarket
    function cancel(uint256 orderId) external nonReentrant returns (uint256 refund) {
        Order storage order = _orders[orderId];
        uint256 remaining = order.remaining;
        if (remaining == 0) revert OrderNotActive(orderId);
        address owner = order.owner;
        if (owner != msg.sender) revert NotOrderOwner(orderId, msg.sender, owner);

        uint256 price = order.price;
        bool isBid = order.isBid;
        refund = isBid ? remaining * price / Units.ONE : remaining * (Units.ONE - price) / Units.ONE;
        PriceLevel storage level = isBid ? _bidLevels[price] : _askLevels[price];
        // Every order in a FIFO has something left, so nothing else left means the only order.
        uint256 left = level.quantity - remaining;
        Top memory top = _top;
        if (left == 0) {
            _unlinkLevel(top, isBid, price);
        } else {
            _unlinkOrder(level, orderId, order.next, order.prev);
            level.quantity = left;
        }
        delete _orders[orderId];
        // Checked subtraction first; the result is below the old uint88 value, so it fits.
        top.escrowTotal = SafeCast.toUint88(uint256(top.escrowTotal) - refund);
        _top = top;
        emit OrderCancelled(orderId, owner, refund);
        _collateral.safeTransfer(owner, refund);
    }

    // --- takers

    /// @inheritdoc IBinaryMarket
    function buyUp(uint256 limitPrice, uint256 quantity)
        external
        nonReentrant
        returns (uint256 filled, uint256 spent)
    {
        Top memory top = _requireOpen();
        _checkOrder(limitPrice, quantity);
        Take memory t = Take({
            matchesLeft: MAX_MATCHES_PER_TAKE, dustOwner: address(0), dustRefund: 0, dustUnits: 0
        });
        (filled, spent) = _take(top, false, limitPrice, quantity, t);
        _top = top;
        if (spent != 0) _collateral.safeTransferFrom(msg.sender, address(this), spent);
        if (t.dustRefund != 0) _collateral.safeTransfer(t.dustOwner, t.dustRefund);
    }

    /// @inheritdoc IBinaryMarket
    function buyDown(uint256 upLimitPrice, uint256 quantity)
        external
        nonReentrant
        returns (uint256 filled, uint256 spent)
    {
        Top memory top = _requireOpen();
        _checkOrder(upLimitPrice, quantity);
        Take memory t = Take({
            matchesLeft: MAX_MATCHES_PER_TAKE, dustOwner: address(0), dustRefund: 0, dustUnits: 0
        });
        (filled, spent) = _take(top, true, upLimitPrice, quantity, t);
        _top = top;
        if (spent != 0) _collateral.safeTransferFrom(msg.sender, address(this), spent);
        if (t.dustRefund != 0) _collateral.safeTransfer(t.dustOwner, t.dustRefund);
    }

    // --- resolution

    /// @inheritdoc IBinaryMarket
    function resolve(bool upWins_) external {
        if (msg.sender != resolver) revert NotResolver(msg.sender, resolver);
        // Expiry is wall-clock by design; seconds of validator skew do not matter here.
        // slither-disable-start timestamp
        // forge-lint: disable-next-line(block-timestamp)
        if (block.timestamp < expiry) revert NotYetExpired(block.timestamp, expiry);
        // slither-disable-end timestamp
        Top memory top = _top;
        if (top.finalized) revert AlreadyFinalized();
        top.finalized = true;
        top.upWins = upWins_;
        _top = top;
        // Every minted pair holds exactly one winning unit, so `outstanding` is unchanged.
        emit Resolved(upWins_, block.timestamp);
    }

    /// @inheritdoc IBinaryMarket
    /// @dev Burns both of the caller's balances; `Redeemed.units` is the total burned (winning
    /// plus losing), `payout` the winning part.
    function redeem() external nonReentrant returns (uint256 payout) {
        Top memory top = _top;
        if (!top.finalized) revert NotFinalized();
        uint256 up = upBalanceOf[msg.sender];
        uint256 down = downBalanceOf[msg.sender];
        payout = top.upWins ? up : down;
        if (up != 0) upBalanceOf[msg.sender] = 0;
        if (down != 0) downBalanceOf[msg.sender] = 0;
        if (payout != 0) {
            // Checked subtraction first; the result is below the old uint88 value, so it fits.
            top.outstanding = SafeCast.toUint88(uint256(top.outstanding) - payout);
            _top = top;
        }
        emit Redeemed(msg.sender, up + down, payout);
        if (payout != 0) _collateral.safeTransfer(msg.sender, payout);
    }

    // --- views

    /// @inheritdoc IBinaryMarket
    function getBookLevels(bool bids, uint256 depth) external view returns (Level[] memory levels) {
        mapping(uint256 => PriceLevel) storage side = bids ? _bidLevels : _askLevels;
        uint256 best = bids ? _top.bestBid : _top.bestAsk;
        // Two passes, so a huge `depth` never allocates more than the book holds.
        uint256 count = 0;
        for (uint256 p = best; p != 0 && count < depth; p = side[p].worse) {
            ++count;
        }
        levels = new Level[](count);
        uint256 price = best;
        for (uint256 i; i < count; ++i) {
            levels[i] = Level({price: price, quantity: side[price].quantity});
            price = side[price].worse;
        }
    }

    /// @inheritdoc IBinaryMarket
    function gateQuote() external view returns (GateQuote memory) {
        Top memory top = _top; // one SLOAD; the rest are immutables
        return GateQuote({
            bestBid: top.bestBid,
            bestAsk: top.bestAsk,
            tickSize: tickSize,
            lotSize: lotSize,
            minQuantity: minQuantity,
            expiry: expiry,
            finalized: top.finalized
        });
    }

    /// @inheritdoc IBinaryMarket
    function bestBid() external view returns (uint256) {
        return _top.bestBid;
    }

    /// @inheritdoc IBinaryMarket
    function bestAsk() external view returns (uint256) {
        return _top.bestAsk;
    }

    /// @inheritdoc IBinaryMarket
    function collateral() external view returns (address) {
        return address(_collateral);
    }

    /// @inheritdoc IBinaryMarket
    function escrowTotal() external view returns (uint256) {
        return _top.escrowTotal;
    }

    /// @inheritdoc IBinaryMarket
    function outstanding() external view returns (uint256) {
        return _top.outstanding;
    }

    /// @inheritdoc IBinaryMarket
    function finalized() external view returns (bool) {
        return _top.finalized;
    }

    /// @inheritdoc IBinaryMarket
    function upWins() external view returns (bool) {
        return _top.upWins;
    }

    // --- internal

    /// @dev Trading is open strictly before expiry and while not finalized.
    function _requireOpen() private view returns (Top memory top) {
        top = _top;
        // Expiry is wall-clock by design; seconds of validator skew do not matter here.
        // slither-disable-start timestamp
        // forge-lint: disable-next-line(block-timestamp)
        if (block.timestamp >= expiry || top.finalized) {
            revert TradingClosed(block.timestamp, expiry);
        }
        // slither-disable-end timestamp
    }

    /// @dev The same grid and size rules for maker prices and taker limits. A zero quantity is
    /// undersized whatever `minQuantity` is.
    function _checkOrder(uint256 price, uint256 quantity) private view {
        if (price == 0 || price >= Units.ONE) revert PriceOutOfRange(price);
        if (price % tickSize != 0) revert PriceOffGrid(price, tickSize);
        if (quantity % lotSize != 0) revert QuantityOffGrid(quantity, lotSize);
        if (quantity == 0 || quantity < minQuantity) {
            revert QuantityBelowMinimum(quantity, minQuantity);
        }
    }

    /// @dev Appends a new order to the FIFO of its level, creating and linking the level (sorted,
    /// best first) if it is new. The caller writes `top` back.
    function _rest(Top memory top, bool isBid, uint256 price, uint256 quantity)
        private
        returns (uint256 orderId)
    {
        orderId = _lastOrderId + 1;
        _lastOrderId = orderId;
        // Order ids live in uint48 links: 2.8e14 orders, beyond reach; SafeCast would revert.
        uint48 id = SafeCast.toUint48(orderId);
        // casting to 'uint32' is safe because _checkOrder bounded price below 1e6.
        // forge-lint: disable-next-line(unsafe-typecast)
        uint32 price32 = uint32(price);
        // Cannot revert: the caller checked the uint88 escrow cap, which bounds `quantity`.
        uint208 quantity208 = SafeCast.toUint208(quantity);

        PriceLevel storage level = isBid ? _bidLevels[price] : _askLevels[price];
        // 0 for a new level (empty levels are deleted), where the order is head and `prev` unread.
        uint48 tail = level.tail;
        if (level.quantity != 0) {
            _orders[tail].next = id;
            level.tail = id;
            level.quantity += quantity;
        } else {
            _linkLevel(top, isBid, price32, id, quantity);
        }
        _orders[id] = Order({
            owner: msg.sender,
            price: price32,
            isBid: isBid,
            next: 0,
            remaining: quantity208,
            prev: tail
        });
        emit OrderPlaced(orderId, msg.sender, isBid, price, quantity);
    }

    /// @dev Inserts a new level at `price`, walking from the best level to keep the side sorted.
    function _linkLevel(Top memory top, bool isBid, uint32 price, uint48 id, uint256 quantity)
        private
    {
        mapping(uint256 => PriceLevel) storage side = isBid ? _bidLevels : _askLevels;
        uint32 better = 0;
        uint32 worse = isBid ? top.bestBid : top.bestAsk;
        // Bids: better = higher price. Asks: better = lower price.
        while (worse != 0 && (isBid ? worse > price : worse < price)) {
            better = worse;
            worse = side[worse].worse;
        }
        side[price] =
            PriceLevel({head: id, tail: id, better: better, worse: worse, quantity: quantity});
        if (worse != 0) side[worse].better = price;
        if (better != 0) {
            side[better].worse = price;
        } else if (isBid) {
            top.bestBid = price;
        } else {
            top.bestAsk = price;
        }
    }

    /// @dev Removes an empty level from its side; the caller writes `top` back.
    function _unlinkLevel(Top memory top, bool isBid, uint256 price) private {
        mapping(uint256 => PriceLevel) storage side = isBid ? _bidLevels : _askLevels;
        PriceLevel storage level = side[price];
        uint32 better = level.better;
        uint32 worse = level.worse;
        if (worse != 0) side[worse].better = better;
        if (better != 0) {
            side[better].worse = worse;
        } else if (isBid) {
            top.bestBid = worse;
        } else {
            top.bestAsk = worse;
        }
        delete side[price];
    }

    /// @dev Takes one order out of the middle of its level's FIFO (the level keeps at least one
    /// other order). A new head's `prev` is left as it was: it is never read (see `Order`).
    function _unlinkOrder(PriceLevel storage level, uint256 orderId, uint48 next, uint48 prev)
        private
    {
        uint48 head = level.head;
        if (orderId == head) level.head = next;
        else _orders[prev].next = next;
        if (orderId == level.tail) level.tail = prev;
        else if (orderId != head) _orders[next].prev = prev;
    }

    /// @dev Walks the opposite side best first while it crosses `limit`, level by level, for at
    /// most `MAX_MATCHES_PER_TAKE` resting orders. The taker buys UP against asks (`hitBids`
    /// false) or DOWN against bids (`hitBids` true). Releases the makers' escrow into
    /// `outstanding`; the caller collects `spent`.
    function _take(Top memory top, bool hitBids, uint256 limit, uint256 quantity, Take memory t)
        private
        returns (uint256 filled, uint256 spent)
    {
        uint256 released = 0;
        // Every level holds at least one order and every visit matches one, so both loops end.
        while (filled < quantity && t.matchesLeft != 0) {
            uint256 price = hitBids ? top.bestBid : top.bestAsk;
            if (price == 0 || (hitBids ? price < limit : price > limit)) break;
            (uint256 levelFilled, uint256 levelSpent, bool emptied) =
                _takeLevel(hitBids, price, quantity - filled, t);
            filled += levelFilled;
            spent += levelSpent;
            // The maker's leg of each unit is the unit minus the taker's leg (legs sum to one).
            released += levelFilled - levelSpent;
            if (emptied) _unlinkLevel(top, hitBids, price);
        }
        if (filled != 0) {
            // Checked subtraction first; the result is below the old uint88 value, so it fits.
            top.escrowTotal = SafeCast.toUint88(uint256(top.escrowTotal) - released - t.dustRefund);
            // Each filled unit is one new fully backed pair: `released` from escrow plus `spent`.
            top.outstanding = SafeCast.toUint88(uint256(top.outstanding) + filled);
        }
    }

    /// @dev Fills up to `want` from one level, FIFO, from at most `t.matchesLeft` orders (which
    /// it counts down), dropping the ones it fills completely. Returns what was filled, what the
    /// taker owes, and whether the level is now empty (the caller unlinks it). A partial fill
    /// that would leave its order below `minQuantity` cancels the rest into `t`.
    function _takeLevel(bool hitBids, uint256 price, uint256 want, Take memory t)
        private
        returns (uint256 filled, uint256 spent, bool emptied)
    {
        PriceLevel storage level = hitBids ? _bidLevels[price] : _askLevels[price];
        uint256 orderId = level.head;
        // No order in a FIFO is empty, so each pass fills something from the head, and the
        // level is used up exactly when the walk passes its tail (whose `next` is 0).
        uint256 matchesLeft = t.matchesLeft;
        while (filled < want && orderId != 0 && matchesLeft != 0) {
            Order storage order = _orders[orderId];
            uint256 remaining = order.remaining;
            uint256 fill = remaining < want - filled ? remaining : want - filled;
            spent += _mintPair(hitBids, orderId, order.owner, price, fill);
            filled += fill;
            // Cannot underflow: the loop runs only while it is non-zero. Saves ~60 gas.
            unchecked {
                --matchesLeft;
            }
            if (fill == remaining) {
                // Filled: drop it and move the FIFO head on.
                uint256 next = order.next;
                delete _orders[orderId];
                orderId = next;
            } else if (remaining - fill < minQuantity) {
                // The want is met (this was the last match). What is left is below the venue
                // minimum: cancel it rather than leave dust at the top of the book.
                orderId = _cancelRemainder(hitBids, price, orderId, remaining - fill, t);
            } else {
                // casting to 'uint208' is safe because fill < remaining, itself a uint208.
                // forge-lint: disable-next-line(unsafe-typecast)
                order.remaining = uint208(remaining - fill);
            }
        }
        t.matchesLeft = matchesLeft;
        if (orderId == 0) return (filled, spent, true);
        // casting to 'uint48' is safe because order ids are minted as uint48.
        // forge-lint: disable-next-line(unsafe-typecast)
        level.head = uint48(orderId);
        level.quantity -= filled + t.dustUnits;
    }

    /// @dev Cancels what is left of a partly filled order, `left` units below `minQuantity`,
    /// into `t` (refunded by the caller once its state is written) and returns the next
    /// order of the FIFO. Exact, as for placement: the remainder is on the lot grid.
    function _cancelRemainder(
        bool isBid,
        uint256 price,
        uint256 orderId,
        uint256 left,
        Take memory t
    ) private returns (uint256 next) {
        Order storage order = _orders[orderId];
        address owner = order.owner;
        next = order.next;
        t.dustOwner = owner;
        t.dustUnits = left;
        t.dustRefund = isBid ? left * price / Units.ONE : left * (Units.ONE - price) / Units.ONE;
        delete _orders[orderId];
        emit OrderCancelled(orderId, owner, t.dustRefund);
    }

    /// @dev Mints `fill` UP to the UP buyer and `fill` DOWN to the DOWN buyer and returns the
    /// taker's leg. Exact by the grid rule: `fill * price` is a multiple of 1e6.
    function _mintPair(bool hitBids, uint256 orderId, address maker, uint256 price, uint256 fill)
        private
        returns (uint256 takerLeg)
    {
        uint256 upLeg = fill * price / Units.ONE;
        if (hitBids) {
            upBalanceOf[maker] += fill;
            downBalanceOf[msg.sender] += fill;
            emit Fill(orderId, maker, msg.sender, price, fill);
            return fill - upLeg;
        }
        upBalanceOf[msg.sender] += fill;
        downBalanceOf[maker] += fill;
        emit Fill(orderId, msg.sender, maker, price, fill);
        return upLeg;
    }
}
