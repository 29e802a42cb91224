// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {Vm} from "../utils/Test.sol";
import {VenueFixture} from "./VenueFixture.sol";
import {IBinaryMarket} from "../../src/interfaces/IBinaryMarket.sol";
import {SafeCast} from "@openzeppelin/contracts/utils/math/SafeCast.sol";
import {IERC20Errors} from "@openzeppelin/contracts/interfaces/draft-IERC6093.sol";

/// @notice Unit tests of the binary market. Grid: tick 10_000, lot 100, minimum 200.
/// Expected amounts are worked by hand from the interface: a bid of q at p escrows q*p/1e6, an
/// ask of q at p escrows q*(1e6-p)/1e6, a taker pays its own leg at the maker's price.
contract BinaryMarketTest is VenueFixture {
    // --- placeBid / placeAsk: escrow and book

    function test_placeBid_escrowsUpLegWhenOnGrid() public {
        uint256 before = usd.balanceOf(alice);
        vm.expectEmit(true, true, false, true, address(market));
        emit IBinaryMarket.OrderPlaced(1, alice, true, 420_000, 300);
        uint256 id = _bid(alice, 420_000, 300);
        assertEq(id, 1);
        // 300 * 420_000 / 1e6 = 126
        assertEq(before - usd.balanceOf(alice), 126, "bid escrow");
        assertEq(market.escrowTotal(), 126);
        assertEq(market.bestBid(), 420_000);
        assertEq(market.bestAsk(), 0);
    }

    function test_placeAsk_escrowsDownLegWhenOnGrid() public {
        uint256 before = usd.balanceOf(bob);
        uint256 id = _ask(bob, 450_000, 300);
        assertEq(id, 1);
        // 300 * (1e6 - 450_000) / 1e6 = 300 * 0.55 = 165
        assertEq(before - usd.balanceOf(bob), 165, "ask escrow");
        assertEq(market.escrowTotal(), 165);
        assertEq(market.bestAsk(), 450_000);
    }

    function test_placeBid_acceptsGridEdgesWhenTickAndNearCertainty() public {
        // Lowest price 10_000 with 200 units: 200 * 10_000 / 1e6 = 2.
        _bid(alice, 10_000, 200);
        // Highest ask 990_000 with 200 units: 200 * 10_000 / 1e6 = 2.
        _ask(bob, 990_000, 200);
        assertEq(market.escrowTotal(), 4);
    }

    function test_getBookLevels_sortsBestFirstWhenPlacedOutOfOrder() public {
        _bid(alice, 400_000, 200);
        _bid(bob, 420_000, 300);
        _bid(alice, 410_000, 400);
        _bid(bob, 420_000, 500); // joins the 420_000 level: 300 + 500 = 800
        _ask(alice, 480_000, 200);
        _ask(bob, 450_000, 300);
        _ask(alice, 460_000, 400);

        IBinaryMarket.Level[] memory bids = market.getBookLevels(true, 10);
        assertEq(bids.length, 3);
        _assertLevel(bids[0], 420_000, 800);
        _assertLevel(bids[1], 410_000, 400);
        _assertLevel(bids[2], 400_000, 200);

        IBinaryMarket.Level[] memory asks = market.getBookLevels(false, 10);
        assertEq(asks.length, 3);
        _assertLevel(asks[0], 450_000, 300);
        _assertLevel(asks[1], 460_000, 400);
        _assertLevel(asks[2], 480_000, 200);
        assertEq(market.bestBid(), 420_000);
        assertEq(market.bestAsk(), 450_000);
    }

    function test_getBookLevels_truncatesWhenDepthSmallerThanBook() public {
        _bid(alice, 400_000, 200);
        _bid(alice, 410_000, 200);
        _bid(alice, 420_000, 200);
        IBinaryMarket.Level[] memory two = market.getBookLevels(true, 2);
        assertEq(two.length, 2);
        _assertLevel(two[0], 420_000, 200);
        _assertLevel(two[1], 410_000, 200);
        assertEq(market.getBookLevels(true, 0).length, 0);
        assertEq(market.getBookLevels(true, type(uint256).max).length, 3);
        assertEq(market.getBookLevels(false, type(uint256).max).length, 0);
    }

    function test_gateQuote_returnsTopAndGridInOneCall() public {
        _bid(alice, 420_000, 300);
        _ask(bob, 450_000, 300);
        IBinaryMarket.GateQuote memory q = market.gateQuote();
        assertEq(q.bestBid, 420_000);
        assertEq(q.bestAsk, 450_000);
        assertEq(q.tickSize, TICK);
        assertEq(q.lotSize, LOT);
        assertEq(q.minQuantity, MIN_QTY);
        assertEq(uint256(q.expiry), uint256(EXPIRY));
        assertFalse(q.finalized);
    }

    // --- maker validation

    function test_placeBid_revertsWhenPriceZero() public {
        vm.expectRevert(abi.encodeWithSelector(IBinaryMarket.PriceOutOfRange.selector, 0));
        vm.prank(alice);
        market.placeBid(0, 300);
    }

    function test_placeAsk_revertsWhenPriceAtCertainty() public {
        // 1e6 is on the tick grid but outside (0, 1e6).
        vm.expectRevert(abi.encodeWithSelector(IBinaryMarket.PriceOutOfRange.selector, ONE));
        vm.prank(alice);
        market.placeAsk(ONE, 300);
    }

    function test_placeBid_revertsWhenPriceAboveCertainty() public {
        vm.expectRevert(
            abi.encodeWithSelector(IBinaryMarket.PriceOutOfRange.selector, type(uint256).max)
        );
        vm.prank(alice);
        market.placeBid(type(uint256).max, 300);
    }

    function test_placeBid_revertsWhenPriceOffGrid() public {
        // 425_000 % 10_000 = 5_000
        vm.expectRevert(abi.encodeWithSelector(IBinaryMarket.PriceOffGrid.selector, 425_000, TICK));
        vm.prank(alice);
        market.placeBid(425_000, 300);
    }

    function test_placeAsk_revertsWhenPriceOneBelowGrid() public {
        vm.expectRevert(abi.encodeWithSelector(IBinaryMarket.PriceOffGrid.selector, 449_999, TICK));
        vm.prank(alice);
        market.placeAsk(449_999, 300);
    }

    function test_placeBid_revertsWhenQuantityOffLotGrid() public {
        // 250 % 100 = 50
        vm.expectRevert(abi.encodeWithSelector(IBinaryMarket.QuantityOffGrid.selector, 250, LOT));
        vm.prank(alice);
        market.placeBid(420_000, 250);
    }

    function test_placeAsk_revertsWhenQuantityBelowMinimum() public {
        // 100 is on the lot grid but below the 200 minimum.
        vm.expectRevert(
            abi.encodeWithSelector(IBinaryMarket.QuantityBelowMinimum.selector, 100, MIN_QTY)
        );
        vm.prank(alice);
        market.placeAsk(450_000, 100);
    }

    function test_placeBid_revertsWhenQuantityZero() public {
        vm.expectRevert(
            abi.encodeWithSelector(IBinaryMarket.QuantityBelowMinimum.selector, 0, MIN_QTY)
        );
        vm.prank(alice);
        market.placeBid(420_000, 0);
    }

    function test_placeBid_revertsWhenAtBestAsk() public {
        _ask(bob, 450_000, 300);
        vm.expectRevert(
            abi.encodeWithSelector(IBinaryMarket.OrderWouldCross.selector, 450_000, 450_000)
        );
        vm.prank(alice);
        market.placeBid(450_000, 300);
        // One tick below rests.
        _bid(alice, 440_000, 300);
    }

    function test_placeAsk_revertsWhenBelowBestBid() public {
        _bid(alice, 420_000, 300);
        vm.expectRevert(
            abi.encodeWithSelector(IBinaryMarket.OrderWouldCross.selector, 410_000, 420_000)
        );
        vm.prank(bob);
        market.placeAsk(410_000, 300);
        vm.expectRevert(
            abi.encodeWithSelector(IBinaryMarket.OrderWouldCross.selector, 420_000, 420_000)
        );
        vm.prank(bob);
        market.placeAsk(420_000, 300);
        _ask(bob, 430_000, 300);
    }

    function test_placeBid_revertsWhenAtExpiry() public {
        // block.timestamp == expiry is already closed.
        vm.warp(EXPIRY);
        vm.expectRevert(
            abi.encodeWithSelector(IBinaryMarket.TradingClosed.selector, uint256(EXPIRY), EXPIRY)
        );
        vm.prank(alice);
        market.placeBid(420_000, 300);
    }

    function test_placeAsk_succeedsWhenOneSecondBeforeExpiry() public {
        vm.warp(EXPIRY - 1);
        _ask(bob, 450_000, 300);
        assertEq(market.bestAsk(), 450_000);
    }

    function test_placeBid_revertsWhenFinalizedEvenIfClockBehindExpiry() public {
        vm.warp(EXPIRY);
        vm.prank(resolver);
        market.resolve(true);
        // Only a test can move the clock back; the finalized flag alone must close trading.
        vm.warp(T0);
        vm.expectRevert(
            abi.encodeWithSelector(IBinaryMarket.TradingClosed.selector, T0, uint256(EXPIRY))
        );
        vm.prank(alice);
        market.placeBid(420_000, 300);
    }

    function test_placeBid_revertsWhenAllowanceShort() public {
        // Escrow 300 * 420_000 / 1e6 = 126; allowance 125 is one unit short.
        vm.prank(alice);
        usd.approve(address(market), 125);
        vm.expectRevert(
            abi.encodeWithSelector(
                IERC20Errors.ERC20InsufficientAllowance.selector, address(market), 125, 126
            )
        );
        vm.prank(alice);
        market.placeBid(420_000, 300);
        assertEq(market.bestBid(), 0, "nothing rests after a failed pull");
    }

    function test_placeBid_revertsWhenEscrowTotalWouldExceedCap() public {
        // Totals are packed as uint88 (max ~3.09e26). q = 100 * 2^84 units at 0.99 escrows
        // q * 990_000 / 1e6 = 99 * 2^84 ~ 1.9e27: SafeCast refuses, nothing wraps.
        uint256 quantity = uint256(100) << 84;
        uint256 escrow = uint256(99) << 84;
        usd.mint(alice, escrow);
        vm.expectRevert(
            abi.encodeWithSelector(SafeCast.SafeCastOverflowedUintDowncast.selector, 88, escrow)
        );
        vm.prank(alice);
        market.placeBid(990_000, quantity);
    }

    // --- cancel

    function test_cancel_refundsFullEscrowWhenUnfilled() public {
        uint256 before = usd.balanceOf(alice);
        uint256 id = _bid(alice, 420_000, 300);
        vm.expectEmit(true, true, false, true, address(market));
        emit IBinaryMarket.OrderCancelled(id, alice, 126);
        vm.prank(alice);
        uint256 refund = market.cancel(id);
        _assertConserved();
        assertEq(refund, 126);
        assertEq(usd.balanceOf(alice), before);
        assertEq(market.escrowTotal(), 0);
        assertEq(market.bestBid(), 0);
        assertEq(market.getBookLevels(true, 5).length, 0);
    }

    function test_cancel_refundsUnfilledPartWhenPartiallyFilled() public {
        uint256 id = _ask(bob, 450_000, 500); // escrow 500 * 0.55 = 275
        _buyUp(carol, 450_000, 200); // bob's leg for 200: 200 * 0.55 = 110 released
        vm.prank(bob);
        uint256 refund = market.cancel(id);
        _assertConserved();
        // 300 left * 550_000 / 1e6 = 165 = 275 - 110
        assertEq(refund, 165);
        assertEq(market.escrowTotal(), 0);
        assertEq(market.outstanding(), 200);
    }

    function test_cancel_revertsWhenCallerNotOwner() public {
        uint256 id = _bid(alice, 420_000, 300);
        vm.expectRevert(
            abi.encodeWithSelector(IBinaryMarket.NotOrderOwner.selector, id, bob, alice)
        );
        vm.prank(bob);
        market.cancel(id);
    }

    function test_cancel_revertsWhenAlreadyCancelled() public {
        uint256 id = _bid(alice, 420_000, 300);
        vm.prank(alice);
        market.cancel(id);
        vm.expectRevert(abi.encodeWithSelector(IBinaryMarket.OrderNotActive.selector, id));
        vm.prank(alice);
        market.cancel(id);
    }

    function test_cancel_revertsWhenOrderUnknown() public {
        vm.expectRevert(abi.encodeWithSelector(IBinaryMarket.OrderNotActive.selector, 99));
        vm.prank(alice);
        market.cancel(99);
    }

    function test_cancel_revertsWhenFullyFilled() public {
        uint256 id = _ask(bob, 450_000, 300);
        _buyUp(carol, 450_000, 300);
        vm.expectRevert(abi.encodeWithSelector(IBinaryMarket.OrderNotActive.selector, id));
        vm.prank(bob);
        market.cancel(id);
    }

    function test_cancel_succeedsWhenAfterExpiryAndFinalized() public {
        uint256 id = _ask(bob, 450_000, 300);
        vm.warp(EXPIRY + 10);
        vm.prank(resolver);
        market.resolve(false);
        vm.prank(bob);
        assertEq(market.cancel(id), 165);
        _assertConserved();
        assertEq(usd.balanceOf(address(market)), 0);
    }

    function test_cancel_unlinksMiddleLevelWhenItEmpties() public {
        _bid(alice, 420_000, 200);
        uint256 mid = _bid(alice, 410_000, 200);
        _bid(alice, 400_000, 200);
        vm.prank(alice);
        market.cancel(mid);
        IBinaryMarket.Level[] memory bids = market.getBookLevels(true, 10);
        assertEq(bids.length, 2);
        _assertLevel(bids[0], 420_000, 200);
        _assertLevel(bids[1], 400_000, 200);
        // The freed price can be used again as a fresh level.
        _bid(bob, 410_000, 300);
        bids = market.getBookLevels(true, 10);
        assertEq(bids.length, 3);
        _assertLevel(bids[1], 410_000, 300);
    }

    function test_cancel_movesBestWhenTopLevelEmpties() public {
        uint256 top = _ask(bob, 450_000, 200);
        _ask(bob, 470_000, 200);
        vm.prank(bob);
        market.cancel(top);
        assertEq(market.bestAsk(), 470_000);
        // The bid side can now use 450_000..460_000 without crossing.
        _bid(alice, 460_000, 200);
        assertEq(market.bestBid(), 460_000);
    }

    function test_cancel_keepsLevelWhenOtherOrdersRemain() public {
        uint256 first = _ask(alice, 450_000, 200);
        _ask(bob, 450_000, 300);
        vm.prank(alice);
        market.cancel(first);
        IBinaryMarket.Level[] memory asks = market.getBookLevels(false, 10);
        assertEq(asks.length, 1);
        _assertLevel(asks[0], 450_000, 300);
    }

    // --- cancel: the order leaves its level's FIFO at once
    // Level used below: asks at 0.45 from a (alice 200), b (bob 300), c (alice 400), queued in
    // that order. Escrows at 0.55: a 110, b 165, c 220. A taker pays 0.45 per unit.

    function test_cancel_unlinksHeadWhenFirstInLevel() public {
        (uint256 a, uint256 b, uint256 c) = _threeAsks();
        vm.prank(alice);
        assertEq(market.cancel(a), 110);
        _assertLevel(market.getBookLevels(false, 1)[0], 450_000, 700); // 300 + 400
        vm.recordLogs();
        (uint256 filled, uint256 spent) = _buyUp(carol, 450_000, 700);
        _assertIds(_recordedFillIds(), _ids(b, c), "b then c");
        // 700 * 0.45 = 315
        assertEq(filled, 700);
        assertEq(spent, 315);
        assertEq(market.downBalanceOf(bob), 300);
        assertEq(market.downBalanceOf(alice), 400);
        assertEq(market.bestAsk(), 0);
    }

    function test_cancel_unlinksMiddleWhenBetweenLiveOrders() public {
        (uint256 a, uint256 b, uint256 c) = _threeAsks();
        vm.prank(bob);
        assertEq(market.cancel(b), 165);
        _assertLevel(market.getBookLevels(false, 1)[0], 450_000, 600); // 200 + 400
        vm.recordLogs();
        (uint256 filled, uint256 spent) = _buyUp(carol, 450_000, 1_000);
        _assertIds(_recordedFillIds(), _ids(a, c), "a then c");
        // Only 600 rest: 600 * 0.45 = 270
        assertEq(filled, 600);
        assertEq(spent, 270);
        assertEq(market.downBalanceOf(alice), 600);
        assertEq(market.downBalanceOf(bob), 0);
        assertEq(market.escrowTotal(), 0);
    }

    function test_cancel_relinksNeighboursWhenAdjacentMiddleOrdersGo() public {
        (uint256 a, uint256 b, uint256 c) = _threeAsks();
        uint256 d = _ask(bob, 450_000, 200);
        vm.prank(bob);
        market.cancel(b);
        vm.prank(alice);
        market.cancel(c); // its predecessor is a now, no longer b
        _assertLevel(market.getBookLevels(false, 1)[0], 450_000, 400); // a 200 + d 200
        vm.recordLogs();
        (uint256 filled, uint256 spent) = _buyUp(carol, 450_000, 1_000);
        _assertIds(_recordedFillIds(), _ids(a, d), "a then d");
        // 400 * 0.45 = 180
        assertEq(filled, 400);
        assertEq(spent, 180);
        assertEq(market.escrowTotal(), 0);
    }

    function test_cancel_unlinksTailWhenLastInLevel() public {
        (uint256 a, uint256 b, uint256 c) = _threeAsks();
        vm.prank(alice);
        assertEq(market.cancel(c), 220);
        _assertLevel(market.getBookLevels(false, 1)[0], 450_000, 500); // 200 + 300
        vm.recordLogs();
        (uint256 filled, uint256 spent) = _buyUp(carol, 450_000, 1_000);
        _assertIds(_recordedFillIds(), _ids(a, b), "a then b");
        // 500 * 0.45 = 225
        assertEq(filled, 500);
        assertEq(spent, 225);
        assertEq(market.bestAsk(), 0);
    }

    function test_placeAsk_queuesBehindLiveOrdersWhenTailWasCancelled() public {
        (uint256 a, uint256 b, uint256 c) = _threeAsks();
        vm.prank(alice);
        market.cancel(c);
        uint256 d = _ask(bob, 450_000, 200);
        _assertLevel(market.getBookLevels(false, 1)[0], 450_000, 700); // 200 + 300 + 200
        vm.recordLogs();
        (uint256 filled, uint256 spent) = _buyUp(carol, 450_000, 700);
        _assertIds(_recordedFillIds(), _ids(a, b, d), "a, b, then the late d");
        // 700 * 0.45 = 315; alice 200 DOWN, bob 300 + 200 = 500 DOWN
        assertEq(filled, 700);
        assertEq(spent, 315);
        assertEq(market.downBalanceOf(alice), 200);
        assertEq(market.downBalanceOf(bob), 500);
    }

    function test_cancel_removesLevelWhenOnlyOrder() public {
        uint256 a = _ask(alice, 450_000, 200);
        vm.prank(alice);
        assertEq(market.cancel(a), 110);
        assertEq(market.bestAsk(), 0);
        assertEq(market.getBookLevels(false, 5).length, 0);
        // A new order at the same price starts a fresh level holding only itself.
        uint256 e = _ask(bob, 450_000, 300);
        vm.recordLogs();
        (uint256 filled, uint256 spent) = _buyUp(carol, 450_000, 500);
        _assertIds(_recordedFillIds(), _ids(e), "only e");
        // 300 * 0.45 = 135
        assertEq(filled, 300);
        assertEq(spent, 135);
        vm.expectRevert(abi.encodeWithSelector(IBinaryMarket.OrderNotActive.selector, a));
        vm.prank(alice);
        market.cancel(a);
    }

    function test_cancel_unlinksOrdersWhenTakerMovedTheHead() public {
        (uint256 a, uint256 b, uint256 c) = _threeAsks();
        uint256 d = _ask(bob, 450_000, 200);
        vm.recordLogs();
        _buyUp(carol, 450_000, 200); // fills a exactly: b is the head now
        _assertIds(_recordedFillIds(), _ids(a), "a only");
        vm.prank(alice);
        assertEq(market.cancel(c), 220); // between b and d
        vm.prank(bob);
        assertEq(market.cancel(b), 165); // the new head
        uint256 e = _ask(alice, 450_000, 300);
        _assertLevel(market.getBookLevels(false, 1)[0], 450_000, 500); // d 200 + e 300
        vm.recordLogs();
        (uint256 filled, uint256 spent) = _buyUp(carol, 450_000, 500);
        _assertIds(_recordedFillIds(), _ids(d, e), "d then e");
        // 500 * 0.45 = 225; outstanding 200 + 500 = 700
        assertEq(filled, 500);
        assertEq(spent, 225);
        assertEq(market.escrowTotal(), 0);
        assertEq(market.outstanding(), 700);
        assertEq(market.bestAsk(), 0);
    }

    function test_cancel_unlinksMiddleBidWhenBetweenLiveOrders() public {
        uint256 a = _bid(alice, 420_000, 200);
        uint256 b = _bid(bob, 420_000, 300);
        uint256 c = _bid(alice, 420_000, 400);
        vm.prank(bob);
        // 300 * 0.42 = 126
        assertEq(market.cancel(b), 126);
        vm.recordLogs();
        (uint256 filled, uint256 spent) = _buyDown(carol, 420_000, 600);
        _assertIds(_recordedFillIds(), _ids(a, c), "a then c");
        // 600 * (1 - 0.42) = 348
        assertEq(filled, 600);
        assertEq(spent, 348);
        assertEq(market.upBalanceOf(alice), 600);
        assertEq(market.bestBid(), 0);
    }

    // --- buyUp

    function test_buyUp_fillsOneLevelWhenQuantityMatches() public {
        uint256 id = _ask(bob, 450_000, 300); // bob escrows 165
        uint256 before = usd.balanceOf(carol);
        vm.expectEmit(true, true, true, true, address(market));
        emit IBinaryMarket.Fill(id, carol, bob, 450_000, 300);
        (uint256 filled, uint256 spent) = _buyUp(carol, 450_000, 300);
        // carol pays 300 * 450_000 / 1e6 = 135; 135 + 165 = 300 backs 300 pairs
        assertEq(filled, 300);
        assertEq(spent, 135);
        assertEq(before - usd.balanceOf(carol), 135);
        assertEq(market.upBalanceOf(carol), 300);
        assertEq(market.downBalanceOf(bob), 300);
        assertEq(market.upBalanceOf(bob), 0);
        assertEq(market.downBalanceOf(carol), 0);
        assertEq(market.escrowTotal(), 0);
        assertEq(market.outstanding(), 300);
        assertEq(market.bestAsk(), 0);
        assertEq(usd.balanceOf(address(market)), 300);
    }

    function test_buyUp_paysMakerPriceWhenLimitIsHigher() public {
        _ask(bob, 450_000, 300);
        (uint256 filled, uint256 spent) = _buyUp(carol, 600_000, 300);
        // Price improvement: 300 * 450_000 / 1e6 = 135, not 300 * 0.6 = 180.
        assertEq(filled, 300);
        assertEq(spent, 135);
    }

    function test_buyUp_leavesMakerRemainderWhenPartial() public {
        _ask(bob, 450_000, 500); // escrow 500 * 0.55 = 275
        (uint256 filled, uint256 spent) = _buyUp(carol, 450_000, 200);
        // 200 * 450_000 / 1e6 = 90; bob's released leg 200 * 0.55 = 110; escrow 275 - 110 = 165
        assertEq(filled, 200);
        assertEq(spent, 90);
        assertEq(market.escrowTotal(), 165);
        assertEq(market.outstanding(), 200);
        IBinaryMarket.Level[] memory asks = market.getBookLevels(false, 1);
        _assertLevel(asks[0], 450_000, 300);
    }

    function test_buyUp_fillsWhatRestsWhenBookThinner() public {
        _ask(bob, 450_000, 300);
        uint256 before = usd.balanceOf(carol);
        (uint256 filled, uint256 spent) = _buyUp(carol, 450_000, 1_000);
        // Only 300 rest: 300 * 0.45 = 135, and carol pays exactly that.
        assertEq(filled, 300);
        assertEq(spent, 135);
        assertEq(before - usd.balanceOf(carol), 135);
        assertEq(market.bestAsk(), 0);
    }

    function test_buyUp_walksLevelsBestFirstWhenQuantityLarge() public {
        uint256 a = _ask(alice, 450_000, 300);
        uint256 b = _ask(bob, 460_000, 200);
        _ask(alice, 480_000, 400);
        vm.recordLogs();
        (uint256 filled, uint256 spent) = _buyUp(carol, 460_000, 600);
        // 300 @ 0.45 = 135, then 200 @ 0.46 = 92; 480_000 is above the limit.
        // filled 500, spent 135 + 92 = 227
        assertEq(filled, 500);
        assertEq(spent, 227);
        assertEq(market.bestAsk(), 480_000);
        assertEq(market.downBalanceOf(alice), 300);
        assertEq(market.downBalanceOf(bob), 200);
        assertEq(market.upBalanceOf(carol), 500);
        // escrow left: 400 * 0.52 = 208
        assertEq(market.escrowTotal(), 208);

        Vm.Log[] memory logs = vm.getRecordedLogs();
        uint256 fills;
        for (uint256 i; i < logs.length; ++i) {
            if (logs[i].emitter != address(market)) continue;
            if (logs[i].topics[0] != IBinaryMarket.Fill.selector) continue;
            uint256 expectedId = fills == 0 ? a : b;
            assertEq(uint256(logs[i].topics[1]), expectedId, "fill order");
            ++fills;
        }
        assertEq(fills, 2);
    }

    function test_buyUp_fillsFifoWhenSameLevel() public {
        uint256 first = _ask(alice, 450_000, 200);
        uint256 second = _ask(bob, 450_000, 400);
        (uint256 filled,) = _buyUp(carol, 450_000, 300);
        // alice (first in) is filled fully, bob for the remaining 100.
        assertEq(filled, 300);
        assertEq(market.downBalanceOf(alice), 200);
        assertEq(market.downBalanceOf(bob), 100);
        IBinaryMarket.Level[] memory asks = market.getBookLevels(false, 1);
        _assertLevel(asks[0], 450_000, 300);
        // alice's order is gone, bob's still rests with 300 (>= the minimum 200): refund
        // 300 * 0.55 = 165.
        vm.expectRevert(abi.encodeWithSelector(IBinaryMarket.OrderNotActive.selector, first));
        vm.prank(alice);
        market.cancel(first);
        vm.prank(bob);
        assertEq(market.cancel(second), 165);
        _assertConserved();
    }

    function test_buyUp_cancelsARemainderBelowTheMinimum() public {
        _ask(alice, 450_000, 200);
        uint256 second = _ask(bob, 450_000, 200);
        uint256 bobBefore = usd.balanceOf(bob);
        // alice filled fully, bob for 100, which would leave him 100 < MIN_QTY 200: the venue
        // cancels that remainder and refunds its escrow, 100 * 0.55 = 55, in the same take.
        vm.expectEmit(address(market));
        emit IBinaryMarket.OrderCancelled(second, bob, 55);
        (uint256 filled, uint256 spent) = _buyUp(carol, 450_000, 300);
        assertEq(filled, 300);
        assertEq(spent, 135, "300 * 0.45");
        assertEq(market.downBalanceOf(bob), 100);
        assertEq(usd.balanceOf(bob) - bobBefore, 55, "refunded");
        assertEq(market.bestAsk(), 0, "no dust left resting");
        assertEq(market.getBookLevels(false, 1).length, 0);
        vm.expectRevert(abi.encodeWithSelector(IBinaryMarket.OrderNotActive.selector, second));
        vm.prank(bob);
        market.cancel(second);
        _assertConserved();
    }

    function test_buyDown_cancelsABidRemainderBelowTheMinimum() public {
        uint256 id = _bid(alice, 400_000, 300);
        uint256 before = usd.balanceOf(alice);
        // Taking 200 of 300 leaves 100 < 200: cancelled, refund 100 * 0.40 = 40.
        vm.expectEmit(address(market));
        emit IBinaryMarket.OrderCancelled(id, alice, 40);
        vm.prank(carol);
        (uint256 filled,) = market.buyDown(400_000, 200);
        assertEq(filled, 200);
        assertEq(usd.balanceOf(alice) - before, 40);
        assertEq(market.bestBid(), 0);
        _assertConserved();
    }

    function test_buyUp_returnsZeroWithoutPullWhenLimitBelowBestAsk() public {
        _ask(bob, 450_000, 300);
        vm.prank(carol);
        usd.approve(address(market), 0); // a pull would revert
        uint256 before = usd.balanceOf(carol);
        (uint256 filled, uint256 spent) = _buyUp(carol, 440_000, 300);
        assertEq(filled, 0);
        assertEq(spent, 0);
        assertEq(usd.balanceOf(carol), before);
        assertEq(market.bestAsk(), 450_000);
    }

    function test_buyUp_returnsZeroWhenBookEmpty() public {
        _bid(alice, 420_000, 300); // the wrong side
        (uint256 filled, uint256 spent) = _buyUp(carol, 990_000, 300);
        assertEq(filled, 0);
        assertEq(spent, 0);
        assertEq(market.outstanding(), 0);
    }

    function test_buyUp_revertsWhenLimitOffGrid() public {
        _ask(bob, 450_000, 300);
        vm.expectRevert(abi.encodeWithSelector(IBinaryMarket.PriceOffGrid.selector, 455_000, TICK));
        vm.prank(carol);
        market.buyUp(455_000, 300);
    }

    function test_buyUp_revertsWhenLimitOutOfRange() public {
        vm.expectRevert(abi.encodeWithSelector(IBinaryMarket.PriceOutOfRange.selector, ONE));
        vm.prank(carol);
        market.buyUp(ONE, 300);
        vm.expectRevert(abi.encodeWithSelector(IBinaryMarket.PriceOutOfRange.selector, 0));
        vm.prank(carol);
        market.buyUp(0, 300);
    }

    function test_buyUp_revertsWhenQuantityOffGridOrUndersized() public {
        vm.expectRevert(abi.encodeWithSelector(IBinaryMarket.QuantityOffGrid.selector, 301, LOT));
        vm.prank(carol);
        market.buyUp(450_000, 301);
        vm.expectRevert(
            abi.encodeWithSelector(IBinaryMarket.QuantityBelowMinimum.selector, 100, MIN_QTY)
        );
        vm.prank(carol);
        market.buyUp(450_000, 100);
    }

    function test_buyUp_revertsWhenAtExpiry() public {
        _ask(bob, 450_000, 300);
        vm.warp(EXPIRY);
        vm.expectRevert(
            abi.encodeWithSelector(IBinaryMarket.TradingClosed.selector, uint256(EXPIRY), EXPIRY)
        );
        vm.prank(carol);
        market.buyUp(450_000, 300);
    }

    function test_buyUp_revertsAndKeepsBookWhenTakerAllowanceShort() public {
        _ask(bob, 450_000, 300);
        vm.prank(carol);
        usd.approve(address(market), 134); // needs 135
        vm.expectRevert(
            abi.encodeWithSelector(
                IERC20Errors.ERC20InsufficientAllowance.selector, address(market), 134, 135
            )
        );
        vm.prank(carol);
        market.buyUp(450_000, 300);
        _assertConserved();
        assertEq(market.bestAsk(), 450_000);
        assertEq(market.upBalanceOf(carol), 0);
    }

    // --- buyDown

    function test_buyDown_fillsOneLevelWhenQuantityMatches() public {
        uint256 id = _bid(alice, 420_000, 300); // alice escrows 126
        uint256 before = usd.balanceOf(carol);
        vm.expectEmit(true, true, true, true, address(market));
        emit IBinaryMarket.Fill(id, alice, carol, 420_000, 300);
        (uint256 filled, uint256 spent) = _buyDown(carol, 420_000, 300);
        // carol pays 300 * (1e6 - 420_000) / 1e6 = 174; 126 + 174 = 300
        assertEq(filled, 300);
        assertEq(spent, 174);
        assertEq(before - usd.balanceOf(carol), 174);
        assertEq(market.upBalanceOf(alice), 300);
        assertEq(market.downBalanceOf(carol), 300);
        assertEq(market.escrowTotal(), 0);
        assertEq(market.outstanding(), 300);
        assertEq(market.bestBid(), 0);
    }

    function test_buyDown_walksLevelsBestFirstWhenQuantityLarge() public {
        _bid(alice, 420_000, 300);
        _bid(bob, 410_000, 200);
        _bid(alice, 400_000, 100 + 100);
        (uint256 filled, uint256 spent) = _buyDown(carol, 410_000, 1_000);
        // 300 @ (1 - 0.42) = 174, then 200 @ (1 - 0.41) = 118; 400_000 is below the UP limit.
        // filled 500, spent 292
        assertEq(filled, 500);
        assertEq(spent, 292);
        assertEq(market.bestBid(), 400_000);
        assertEq(market.upBalanceOf(alice), 300);
        assertEq(market.upBalanceOf(bob), 200);
        // escrow left: 200 * 0.40 = 80
        assertEq(market.escrowTotal(), 80);
    }

    function test_buyDown_leavesMakerRemainderWhenPartial() public {
        _bid(alice, 420_000, 500); // 500 * 0.42 = 210
        (uint256 filled, uint256 spent) = _buyDown(carol, 420_000, 300);
        // 300 * 0.58 = 174; alice's released leg 300 * 0.42 = 126; escrow 210 - 126 = 84
        assertEq(filled, 300);
        assertEq(spent, 174);
        assertEq(market.escrowTotal(), 84);
        _assertLevel(market.getBookLevels(true, 1)[0], 420_000, 200);
    }

    function test_buyDown_returnsZeroWhenLimitAboveBestBid() public {
        _bid(alice, 420_000, 300);
        (uint256 filled, uint256 spent) = _buyDown(carol, 430_000, 300);
        assertEq(filled, 0);
        assertEq(spent, 0);
        assertEq(market.bestBid(), 420_000);
    }

    function test_buyDown_revertsWhenLimitOffGrid() public {
        vm.expectRevert(abi.encodeWithSelector(IBinaryMarket.PriceOffGrid.selector, 1, TICK));
        vm.prank(carol);
        market.buyDown(1, 300);
    }

    function test_buyDown_revertsWhenAfterExpiry() public {
        _bid(alice, 420_000, 300);
        vm.warp(EXPIRY + 1);
        vm.expectRevert(
            abi.encodeWithSelector(
                IBinaryMarket.TradingClosed.selector, uint256(EXPIRY) + 1, EXPIRY
            )
        );
        vm.prank(carol);
        market.buyDown(420_000, 300);
    }

    function test_buyDown_mintsBothLegsWhenSelfTrade() public {
        _bid(alice, 420_000, 300);
        (uint256 filled, uint256 spent) = _buyDown(alice, 420_000, 300);
        // alice paid 126 as maker and 174 as taker: 300 for one UP and one DOWN per unit.
        assertEq(filled, 300);
        assertEq(spent, 174);
        assertEq(market.upBalanceOf(alice), 300);
        assertEq(market.downBalanceOf(alice), 300);
    }

    function test_buyDown_stopsAtMatchCapWhenOrdersSpanLevels() public {
        assertEq(market.MAX_MATCHES_PER_TAKE(), 64);
        for (uint256 i; i < 40; ++i) {
            _bid(alice, 420_000, 200);
        }
        for (uint256 i; i < 40; ++i) {
            _bid(bob, 410_000, 200);
        }
        // Escrow 40 * 200 * 0.42 = 3_360 plus 40 * 200 * 0.41 = 3_280.
        assertEq(market.escrowTotal(), 6_640);
        vm.recordLogs();
        (uint256 filled, uint256 spent) = _buyDown(carol, 410_000, 80 * 200);
        // 64 matches: all 40 at 0.42, then 24 at 0.41; the other 16 * 200 stay unfilled.
        // filled 64 * 200 = 12_800; spent 40 * 200 * 0.58 + 24 * 200 * 0.59 = 4_640 + 2_832
        assertEq(_recordedFillIds().length, 64, "fills");
        assertEq(filled, 12_800);
        assertEq(spent, 7_472);
        assertEq(market.upBalanceOf(alice), 8_000);
        assertEq(market.upBalanceOf(bob), 4_800);
        assertEq(market.bestBid(), 410_000);
        _assertLevel(market.getBookLevels(true, 1)[0], 410_000, 3_200);
        // Escrow left: 16 * 200 * 0.41 = 1_312
        assertEq(market.escrowTotal(), 1_312);
        assertEq(market.outstanding(), 12_800);
    }

    // --- resolve

    function test_resolve_revertsWhenCallerNotResolver() public {
        vm.warp(EXPIRY);
        vm.expectRevert(abi.encodeWithSelector(IBinaryMarket.NotResolver.selector, carol, resolver));
        vm.prank(carol);
        market.resolve(true);
    }

    function test_resolve_revertsWhenBeforeExpiry() public {
        vm.warp(EXPIRY - 1);
        vm.expectRevert(
            abi.encodeWithSelector(
                IBinaryMarket.NotYetExpired.selector, uint256(EXPIRY) - 1, EXPIRY
            )
        );
        vm.prank(resolver);
        market.resolve(true);
    }

    function test_resolve_finalizesWhenExactlyAtExpiry() public {
        vm.warp(EXPIRY);
        vm.expectEmit(false, false, false, true, address(market));
        emit IBinaryMarket.Resolved(false, EXPIRY);
        vm.prank(resolver);
        market.resolve(false);
        assertTrue(market.finalized());
        assertFalse(market.upWins());
        assertTrue(market.gateQuote().finalized);
    }

    function test_resolve_revertsWhenAlreadyFinalized() public {
        vm.warp(EXPIRY);
        vm.prank(resolver);
        market.resolve(true);
        vm.expectRevert(abi.encodeWithSelector(IBinaryMarket.AlreadyFinalized.selector));
        vm.prank(resolver);
        market.resolve(false);
    }

    // --- redeem

    function test_redeem_revertsWhenNotFinalized() public {
        vm.expectRevert(abi.encodeWithSelector(IBinaryMarket.NotFinalized.selector));
        vm.prank(carol);
        market.redeem();
    }

    function test_redeem_paysWinnerAndZeroToLoserWhenUpWins() public {
        _ask(bob, 450_000, 300);
        _buyUp(carol, 450_000, 300); // carol 300 UP, bob 300 DOWN; market holds 300
        vm.warp(EXPIRY);
        vm.prank(resolver);
        market.resolve(true);
        _assertConserved();

        uint256 carolBefore = usd.balanceOf(carol);
        vm.expectEmit(true, false, false, true, address(market));
        emit IBinaryMarket.Redeemed(carol, 300, 300);
        vm.prank(carol);
        assertEq(market.redeem(), 300);
        _assertConserved();
        assertEq(usd.balanceOf(carol) - carolBefore, 300);
        assertEq(market.upBalanceOf(carol), 0);

        uint256 bobBefore = usd.balanceOf(bob);
        vm.prank(bob);
        assertEq(market.redeem(), 0, "loser gets 0, no revert");
        _assertConserved();
        assertEq(usd.balanceOf(bob), bobBefore);
        assertEq(market.downBalanceOf(bob), 0, "losing units burned");
        assertEq(market.outstanding(), 0);
        assertEq(usd.balanceOf(address(market)), 0);
    }

    function test_redeem_paysDownHolderWhenDownWins() public {
        _bid(alice, 420_000, 300);
        _buyDown(carol, 420_000, 300); // alice 300 UP, carol 300 DOWN
        vm.warp(EXPIRY + 100);
        vm.prank(resolver);
        market.resolve(false);
        vm.prank(carol);
        assertEq(market.redeem(), 300);
        vm.prank(alice);
        assertEq(market.redeem(), 0);
        _assertConserved();
        assertEq(usd.balanceOf(address(market)), 0);
    }

    function test_redeem_returnsZeroWhenCalledTwiceOrHoldingNothing() public {
        _ask(bob, 450_000, 300);
        _buyUp(carol, 450_000, 300);
        vm.warp(EXPIRY);
        vm.prank(resolver);
        market.resolve(true);
        vm.prank(carol);
        market.redeem();
        vm.prank(carol);
        assertEq(market.redeem(), 0, "second redeem");
        vm.prank(makeAddr("stranger"));
        assertEq(market.redeem(), 0, "stranger");
        _assertConserved();
    }

    function test_redeem_burnsBothLegsWhenHolderHasBoth() public {
        _bid(alice, 420_000, 300);
        _buyDown(alice, 420_000, 300); // alice holds 300 UP and 300 DOWN
        vm.warp(EXPIRY);
        vm.prank(resolver);
        market.resolve(true);
        vm.expectEmit(true, false, false, true, address(market));
        // units = 300 UP + 300 DOWN burned, payout = the 300 winning UP
        emit IBinaryMarket.Redeemed(alice, 600, 300);
        vm.prank(alice);
        assertEq(market.redeem(), 300);
        assertEq(market.downBalanceOf(alice), 0);
        _assertConserved();
    }

    function test_redeem_leavesRestingEscrowWhenOrdersStillOpen() public {
        _ask(bob, 450_000, 500);
        _buyUp(carol, 450_000, 200);
        _bid(alice, 400_000, 200); // 80 escrow
        vm.warp(EXPIRY);
        vm.prank(resolver);
        market.resolve(true);
        vm.prank(carol);
        assertEq(market.redeem(), 200);
        _assertConserved();
        // Left: bob's 300 @ 0.55 = 165 and alice's 80, both still cancellable.
        assertEq(market.escrowTotal(), 245);
        assertEq(usd.balanceOf(address(market)), 245);
    }

    // ---

    /// Asks at 0.45 from a (alice 200), b (bob 300), c (alice 400), queued in that order.
    function _threeAsks() private returns (uint256 a, uint256 b, uint256 c) {
        a = _ask(alice, 450_000, 200);
        b = _ask(bob, 450_000, 300);
        c = _ask(alice, 450_000, 400);
    }

    function _ids(uint256 x) private pure returns (uint256[] memory ids) {
        ids = new uint256[](1);
        ids[0] = x;
    }

    function _ids(uint256 x, uint256 y) private pure returns (uint256[] memory ids) {
        ids = new uint256[](2);
        (ids[0], ids[1]) = (x, y);
    }

    function _ids(uint256 x, uint256 y, uint256 z) private pure returns (uint256[] memory ids) {
        ids = new uint256[](3);
        (ids[0], ids[1], ids[2]) = (x, y, z);
    }
}
