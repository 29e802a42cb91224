// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {VenueFixture} from "./VenueFixture.sol";
import {IBinaryMarket} from "../../src/interfaces/IBinaryMarket.sol";

/// @notice Random sequences of maker, taker and cancel actions (then resolution and redemption):
/// collateral is conserved after every step and every unit ends up paid out or refunded.
contract BinaryMarketFuzzTest is VenueFixture {
    uint256 private constant STEPS = 24;

    address[3] private _actors;
    uint256[] private _orderIds;
    mapping(uint256 orderId => address owner) private _ownerOf;

    function setUp() public override {
        super.setUp();
        _actors = [alice, bob, carol];
    }

    function testFuzz_market_conservesCollateral(uint256 seed, bool upWins) public {
        for (uint256 i; i < STEPS; ++i) {
            uint256 r = uint256(keccak256(abi.encode(seed, i)));
            address who = _actors[r % 3];
            uint256 action = (r >> 8) % 5;
            uint256 price = bound(r >> 16, 1, 99) * TICK; // 0.01 .. 0.99, on the grid
            uint256 quantity = bound(r >> 64, MIN_QTY / LOT, 20) * LOT;
            if (action == 0) _tryBid(who, price, quantity);
            else if (action == 1) _tryAsk(who, price, quantity);
            else if (action == 2) _buyUp(who, price, quantity);
            else if (action == 3) _buyDown(who, price, quantity);
            else _tryCancel(r >> 128);
            _assertPairsBalanced();
        }

        vm.warp(EXPIRY);
        vm.prank(resolver);
        market.resolve(upWins);
        _assertConserved();
        for (uint256 i; i < 3; ++i) {
            vm.prank(_actors[i]);
            market.redeem();
            _assertConserved();
        }
        assertEq(market.outstanding(), 0, "all winning units redeemed");
        for (uint256 i; i < _orderIds.length; ++i) {
            uint256 id = _orderIds[i];
            vm.prank(_ownerOf[id]);
            try market.cancel(id) {} catch {}
            _assertConserved();
        }
        // Nothing left inside, and nobody gained or lost in total: collateral only moved.
        assertEq(market.escrowTotal(), 0, "all escrow refunded");
        assertEq(usd.balanceOf(address(market)), 0, "market empty");
        assertEq(usd.balanceOf(alice) + usd.balanceOf(bob) + usd.balanceOf(carol), 3 * FUNDS, "sum");
    }

    /// One ask level at 0.45 under random appends, cancels (head, middle or tail alike) and
    /// taker buys, against a model of its FIFO: fills come from the live orders oldest first, a
    /// cancel refunds exactly what its order had left, a dead order refuses a second cancel, and
    /// the level's quantity is always what the live orders have left.
    function testFuzz_cancel_keepsFifoOfLiveOrders(uint256 seed) public {
        uint256[] memory ids = new uint256[](STEPS);
        uint256[] memory left = new uint256[](STEPS); // the model: what each order has left
        uint256 placed;
        for (uint256 i; i < STEPS; ++i) {
            uint256 r = uint256(keccak256(abi.encode(seed, i)));
            uint256 action = r % 3;
            if (action == 0 || placed == 0) {
                address maker = _actors[(r >> 8) % 2]; // alice or bob
                uint256 quantity = bound(r >> 16, MIN_QTY / LOT, 6) * LOT;
                ids[placed] = _ask(maker, 450_000, quantity);
                _ownerOf[ids[placed]] = maker;
                left[placed++] = quantity;
            } else if (action == 1) {
                uint256 k = (r >> 16) % placed;
                vm.prank(_ownerOf[ids[k]]);
                if (left[k] == 0) {
                    vm.expectRevert(
                        abi.encodeWithSelector(IBinaryMarket.OrderNotActive.selector, ids[k])
                    );
                    market.cancel(ids[k]);
                } else {
                    // An ask's escrow is its DOWN leg: left * 0.55.
                    assertEq(market.cancel(ids[k]), left[k] * 550_000 / ONE, "refund");
                    left[k] = 0;
                    _assertConserved();
                }
            } else {
                uint256 want = bound(r >> 16, MIN_QTY / LOT, 20) * LOT;
                vm.recordLogs();
                (uint256 filled, uint256 spent) = _buyUp(carol, 450_000, want);
                uint256[] memory fillIds = _recordedFillIds();
                // The model's fills: live orders oldest first, each for min(left, still wanted).
                uint256 expectedFilled;
                uint256 fills;
                for (uint256 k; k < placed && expectedFilled < want; ++k) {
                    if (left[k] == 0) continue;
                    uint256 fill = left[k] < want - expectedFilled ? left[k] : want - expectedFilled;
                    assertLt(fills, fillIds.length, "too few fills");
                    assertEq(fillIds[fills++], ids[k], "fill order");
                    left[k] -= fill;
                    // The venue cancels a remainder below the minimum (refunding its maker).
                    if (left[k] < MIN_QTY) left[k] = 0;
                    expectedFilled += fill;
                }
                assertEq(fillIds.length, fills, "too many fills");
                assertEq(filled, expectedFilled, "filled");
                assertEq(spent, filled * 450_000 / ONE, "spent at 0.45");
            }
            _assertAskLevel(left, placed);
        }
    }

    /// Every input region of a taker order: each invalid region reverts with its exact error,
    /// a valid order against one resting ask of 300 @ 0.45 fills min(quantity, 300) when the
    /// limit reaches 0.45, at 0.45 per unit.
    function testFuzz_buyUp_validatesEveryInputRegion(
        uint256 limitTicks,
        uint256 limitOffset,
        uint256 lots,
        uint256 quantityOffset
    ) public {
        _ask(bob, 450_000, 300);
        // Half the runs off the tick grid, half off the lot grid; up to 1.2 in price.
        uint256 limit = bound(limitTicks, 0, 120) * TICK;
        if (limitOffset % 2 == 1) limit += bound(limitOffset >> 1, 1, TICK - 1);
        uint256 quantity = bound(lots, 0, 1e12) * LOT;
        if (quantityOffset % 2 == 1) quantity += bound(quantityOffset >> 1, 1, LOT - 1);
        vm.prank(carol);
        if (limit == 0 || limit >= ONE) {
            vm.expectRevert(abi.encodeWithSelector(IBinaryMarket.PriceOutOfRange.selector, limit));
        } else if (limit % TICK != 0) {
            vm.expectRevert(
                abi.encodeWithSelector(IBinaryMarket.PriceOffGrid.selector, limit, TICK)
            );
        } else if (quantity % LOT != 0) {
            vm.expectRevert(
                abi.encodeWithSelector(IBinaryMarket.QuantityOffGrid.selector, quantity, LOT)
            );
        } else if (quantity < MIN_QTY) {
            vm.expectRevert(
                abi.encodeWithSelector(
                    IBinaryMarket.QuantityBelowMinimum.selector, quantity, MIN_QTY
                )
            );
        } else {
            (uint256 filled, uint256 spent) = market.buyUp(limit, quantity);
            uint256 expected = limit >= 450_000 ? (quantity < 300 ? quantity : 300) : 0;
            assertEq(filled, expected, "filled");
            assertEq(spent, expected * 450_000 / ONE, "spent at the maker's price");
            assertLe(filled, quantity, "never more than asked");
            _assertConserved();
            return;
        }
        market.buyUp(limit, quantity);
    }

    // ---

    /// A maker price that would cross is moved one tick inside the spread, or skipped.
    function _tryBid(address who, uint256 price, uint256 quantity) private {
        uint256 ask = market.bestAsk();
        if (ask != 0 && price >= ask) {
            if (ask == TICK) return;
            price = ask - TICK;
        }
        uint256 id = _bid(who, price, quantity);
        _orderIds.push(id);
        _ownerOf[id] = who;
    }

    function _tryAsk(address who, uint256 price, uint256 quantity) private {
        uint256 bid = market.bestBid();
        if (bid != 0 && price <= bid) {
            if (bid == ONE - TICK) return;
            price = bid + TICK;
        }
        uint256 id = _ask(who, price, quantity);
        _orderIds.push(id);
        _ownerOf[id] = who;
    }

    function _tryCancel(uint256 r) private {
        if (_orderIds.length == 0) return;
        uint256 id = _orderIds[r % _orderIds.length];
        vm.prank(_ownerOf[id]);
        try market.cancel(id) {} catch {}
        _assertConserved();
    }

    /// The 0.45 ask level holds exactly what the model's live orders have left, and is gone
    /// when they have nothing left.
    function _assertAskLevel(uint256[] memory left, uint256 placed) private view {
        uint256 total;
        for (uint256 k; k < placed; ++k) {
            total += left[k];
        }
        IBinaryMarket.Level[] memory asks = market.getBookLevels(false, 2);
        if (total == 0) {
            assertEq(asks.length, 0, "empty level removed");
            assertEq(market.bestAsk(), 0, "no best ask");
        } else {
            assertEq(asks.length, 1, "one level");
            _assertLevel(asks[0], 450_000, total);
        }
    }

    /// Before resolution every minted unit is one UP plus one DOWN: the two sides' totals are
    /// each `outstanding`.
    function _assertPairsBalanced() private view {
        uint256 ups;
        uint256 downs;
        for (uint256 i; i < 3; ++i) {
            ups += market.upBalanceOf(_actors[i]);
            downs += market.downBalanceOf(_actors[i]);
        }
        assertEq(ups, market.outstanding(), "UP units != outstanding");
        assertEq(downs, market.outstanding(), "DOWN units != outstanding");
    }
}
