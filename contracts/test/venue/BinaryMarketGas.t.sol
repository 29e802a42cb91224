// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {VenueFixture} from "./VenueFixture.sol";
import {console} from "../utils/Test.sol";
import {BinaryMarket} from "../../src/venue/BinaryMarket.sol";

/// @notice Gas of the gate's PASS path on the venue side: one taker buy against one resting
/// level, with every slot cold (set-up ran in an earlier transaction) and first-time balances.
contract BinaryMarketGasTest is VenueFixture {
    function setUp() public override {
        super.setUp();
        _ask(bob, 450_000, 300);
        _bid(alice, 420_000, 300);
        usd.mint(address(this), 1_000e6);
        usd.approve(address(market), type(uint256).max);
    }

    function test_buyUp_gasAgainstOneLevelIsBounded() public {
        uint256 before = gasleft();
        (uint256 filled,) = market.buyUp(450_000, 300);
        uint256 used = before - gasleft();
        console.log("buyUp against one level, gas", used);
        assertEq(filled, 300);
        assertLt(used, 120_000, "venue share of the gate's PASS budget");
    }

    function test_buyDown_gasAgainstOneLevelIsBounded() public {
        uint256 before = gasleft();
        (uint256 filled,) = market.buyDown(420_000, 300);
        uint256 used = before - gasleft();
        console.log("buyDown against one level, gas", used);
        assertEq(filled, 300);
        assertLt(used, 120_000, "venue share of the gate's PASS budget");
    }

    function test_gateQuote_gasReadsOneSlot() public view {
        uint256 before = gasleft();
        market.gateQuote();
        uint256 used = before - gasleft();
        console.log("gateQuote, gas", used);
        // Cold market account 2_600 + one cold slot 2_100 + call and ABI encoding of the
        // seven-word struct (~4k): a second storage slot read would add 2_100.
        assertLt(used, 9_000, "gateQuote is on the gate's hot path");
    }
}

/// @notice A buy costs the same whether or not thousands of cancelled orders went through its
/// level, so nobody can push a taker past the 16,777,216-gas transaction cap by placing and
/// cancelling. Two markets get the same live book: asks a (alice 300) and b (bob 300) at 0.45,
/// c (alice 300) at 0.46. On `_griefed`, mallory also placed 3,000 asks of 200 at 0.45 and
/// cancelled them all: 2,000 queued ahead of a, 1,000 between a and b. Cancelling is O(1) too:
/// the middle of a 1,001-order queue costs what the middle of a 3-order queue costs.
contract BinaryMarketCancelGasTest is VenueFixture {
    uint256 private constant CANCELLED_AHEAD = 2_000;
    uint256 private constant CANCELLED_BETWEEN = 1_000;
    /// Visiting even one cancelled order would cost two cold slot reads (4,200 gas).
    uint256 private constant TOLERANCE = 1_000;

    BinaryMarket private _griefed;
    BinaryMarket private _clean;
    address private _dave;
    uint256 private _longQueueMiddle;
    uint256 private _shortQueueMiddle;

    function setUp() public override {
        super.setUp();
        address mallory = makeAddr("mallory");
        _fund(mallory);
        _griefed = market;
        uint256[] memory spam = new uint256[](CANCELLED_AHEAD + CANCELLED_BETWEEN);
        _placeAsks(mallory, spam, 0, CANCELLED_AHEAD);
        _ask(alice, 450_000, 300);
        _placeAsks(mallory, spam, CANCELLED_AHEAD, spam.length);
        _ask(bob, 450_000, 300);
        _ask(alice, 460_000, 300);
        vm.startPrank(mallory);
        for (uint256 i; i < spam.length; ++i) {
            _griefed.cancel(spam[i]);
        }
        vm.stopPrank();
        // For the cancel test: bob queues 1,001 asks of 200 at 0.47 here, alice 3 on `_clean`.
        uint256[] memory queue = new uint256[](1_001);
        vm.startPrank(bob);
        for (uint256 i; i < queue.length; ++i) {
            queue[i] = _griefed.placeAsk(470_000, 200);
        }
        vm.stopPrank();
        _longQueueMiddle = queue[500];
        _assertConserved();

        // The same live book on a second market; dave is its taker, carol is `_griefed`'s.
        market = BinaryMarket(factory.createMarket(QUESTION, TICK, LOT, MIN_QTY, EXPIRY, resolver));
        _clean = market;
        _dave = makeAddr("dave");
        _fund(alice);
        _fund(bob);
        _fund(_dave);
        _ask(alice, 450_000, 300);
        _ask(bob, 450_000, 300);
        _ask(alice, 460_000, 300);
        _ask(alice, 470_000, 200);
        _shortQueueMiddle = _ask(alice, 470_000, 200);
        _ask(alice, 470_000, 200);
    }

    function test_buyUp_gasIndependentOfCancelledOrders() public {
        // Warm the shared collateral token and both takers' balances, so the two buys meet the
        // same warm and cold slots (each market's own state is cold for its buy).
        usd.balanceOf(carol);
        usd.balanceOf(_dave);

        vm.prank(carol);
        uint256 before = gasleft();
        (uint256 griefedFilled, uint256 griefedSpent) = _griefed.buyUp(460_000, 700);
        uint256 griefedGas = before - gasleft();

        vm.prank(_dave);
        before = gasleft();
        (uint256 cleanFilled, uint256 cleanSpent) = _clean.buyUp(460_000, 700);
        uint256 cleanGas = before - gasleft();

        console.log("buyUp, book with 3,000 cancelled orders, gas", griefedGas);
        console.log("buyUp, same book never griefed, gas", cleanGas);
        // a 300 @ 0.45 + b 300 @ 0.45 + 100 of c @ 0.46: filled 700, spent 135 + 135 + 46 = 316;
        // c keeps 200, the venue minimum, so it rests (no remainder is cancelled in either).
        assertEq(griefedFilled, 700);
        assertEq(griefedSpent, 316);
        assertEq(cleanFilled, 700);
        assertEq(cleanSpent, 316);
        uint256 gap = griefedGas > cleanGas ? griefedGas - cleanGas : cleanGas - griefedGas;
        assertLe(gap, TOLERANCE, "cancelled orders changed a buy's gas");
        _assertLevel(_griefed.getBookLevels(false, 2)[0], 460_000, 200);
    }

    function test_cancel_gasIndependentOfQueueLength() public {
        // Warm the shared token and both owners' balances, which the refunds credit.
        usd.balanceOf(bob);
        usd.balanceOf(alice);

        vm.prank(bob);
        uint256 before = gasleft();
        uint256 longRefund = _griefed.cancel(_longQueueMiddle);
        uint256 longGas = before - gasleft();

        vm.prank(alice);
        before = gasleft();
        uint256 shortRefund = _clean.cancel(_shortQueueMiddle);
        uint256 shortGas = before - gasleft();

        console.log("cancel, middle of 1,001 orders, gas", longGas);
        console.log("cancel, middle of 3 orders, gas", shortGas);
        // 200 * (1 - 0.47) = 106 each
        assertEq(longRefund, 106);
        assertEq(shortRefund, 106);
        uint256 gap = longGas > shortGas ? longGas - shortGas : shortGas - longGas;
        assertLe(gap, TOLERANCE, "cancel walked the queue");
        // 1,000 * 200 and 2 * 200 left at 0.47
        _assertLevel(_griefed.getBookLevels(false, 3)[2], 470_000, 200_000);
        _assertLevel(_clean.getBookLevels(false, 3)[2], 470_000, 400);
    }

    /// Places asks of 200 at 0.45 for `who`, ids into `ids[from..to)`.
    function _placeAsks(address who, uint256[] memory ids, uint256 from, uint256 to) private {
        vm.startPrank(who);
        for (uint256 i = from; i < to; ++i) {
            ids[i] = market.placeAsk(450_000, 200);
        }
        vm.stopPrank();
    }
}

/// @notice Many tiny resting orders cannot make one taker order unbounded: on a market whose
/// minimum is one lot (100), 100 one-lot asks at 0.45 from 100 first-time makers, a buy of all
/// 10,000 units matches `MAX_MATCHES_PER_TAKE` (64) of them and stops.
contract BinaryMarketMatchCapGasTest is VenueFixture {
    uint256 private constant MAKERS = 100;

    address[] private _makers;

    function setUp() public override {
        super.setUp();
        market = BinaryMarket(factory.createMarket(QUESTION, TICK, LOT, LOT, EXPIRY, resolver));
        _fund(carol);
        for (uint256 i; i < MAKERS; ++i) {
            address maker = makeAddr(string.concat("maker", vm.toString(i)));
            _fund(maker);
            _ask(maker, 450_000, LOT);
            _makers.push(maker);
        }
    }

    function test_buyUp_fillsMatchCapWhenManyOneLotOrders() public {
        assertEq(market.MAX_MATCHES_PER_TAKE(), 64);
        vm.prank(carol);
        uint256 before = gasleft();
        (uint256 filled, uint256 spent) = market.buyUp(450_000, MAKERS * LOT);
        uint256 used = before - gasleft();
        console.log("buyUp matching 64 one-lot orders, gas", used);
        // 64 orders of 100: filled 6_400, spent 6_400 * 0.45 = 2_880. 36 * 100 = 3_600 rest.
        assertEq(filled, 6_400);
        assertEq(spent, 2_880);
        assertEq(market.downBalanceOf(_makers[63]), LOT, "64th maker filled");
        assertEq(market.downBalanceOf(_makers[64]), 0, "65th maker not reached");
        _assertLevel(market.getBookLevels(false, 1)[0], 450_000, 3_600);
        _assertConserved();
        // Per match, worst case: two cold order slots read (4_200), the maker's first DOWN
        // balance written cold (22_100), the Fill log (375 + 4 * 375 + 64 * 8 = 2_387), two
        // order slots cleared (5_800): ~34.5k before call and loop overhead, so 64 matches
        // come to ~2.2M plus the ~0.1M of a one-level buy (measured: 2.38M). Without the cap
        // these 100 orders took 3.69M, and every further order ~36k more.
        assertLt(used, 2_500_000, "64 matches, far below the 16.78M transaction cap");
    }

    function test_buyUp_resumesFifoWhenCapLeftOrders() public {
        _buyUp(carol, 450_000, MAKERS * LOT);
        (uint256 filled, uint256 spent) = _buyUp(carol, 450_000, MAKERS * LOT);
        // The other 36 orders, oldest first: filled 3_600, spent 3_600 * 0.45 = 1_620.
        assertEq(filled, 3_600);
        assertEq(spent, 1_620);
        assertEq(market.downBalanceOf(_makers[64]), LOT);
        assertEq(market.downBalanceOf(_makers[99]), LOT);
        assertEq(market.bestAsk(), 0);
        assertEq(market.outstanding(), 10_000);
    }
}
