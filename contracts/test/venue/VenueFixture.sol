// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {Test, Vm} from "../utils/Test.sol";
import {TEST_QUESTION} from "../utils/Question.sol";
import {TestCollateral} from "../../src/venue/TestCollateral.sol";
import {MarketFactory} from "../../src/venue/MarketFactory.sol";
import {BinaryMarket} from "../../src/venue/BinaryMarket.sol";
import {IBinaryMarket} from "../../src/interfaces/IBinaryMarket.sol";

/// @notice Shared venue set-up: one market on a 0.01 tick (10_000) and a 100-unit lot
/// (10_000 * 100 = 1e6, so every on-grid amount is exact), minimum 200, one hour to expiry.
/// Makers alice and bob, taker carol, all funded and approved. Every market asks `QUESTION`.
abstract contract VenueFixture is Test {
    string internal constant QUESTION = TEST_QUESTION;
    uint256 internal constant ONE = 1_000_000;
    uint256 internal constant TICK = 10_000;
    uint256 internal constant LOT = 100;
    uint256 internal constant MIN_QTY = 200;
    uint64 internal constant T0_64 = 1_700_000_000;
    uint256 internal constant T0 = T0_64;
    uint64 internal constant EXPIRY = T0_64 + 3600;
    uint256 internal constant FUNDS = 1_000_000e6;

    TestCollateral internal usd;
    MarketFactory internal factory;
    BinaryMarket internal market;

    address internal resolver;
    address internal alice;
    address internal bob;
    address internal carol;

    function setUp() public virtual {
        vm.warp(T0);
        resolver = makeAddr("resolver");
        alice = makeAddr("alice");
        bob = makeAddr("bob");
        carol = makeAddr("carol");
        usd = new TestCollateral();
        factory = new MarketFactory(address(usd));
        market = BinaryMarket(factory.createMarket(QUESTION, TICK, LOT, MIN_QTY, EXPIRY, resolver));
        _fund(alice);
        _fund(bob);
        _fund(carol);
    }

    function _fund(address who) internal {
        usd.mint(who, FUNDS);
        vm.prank(who);
        usd.approve(address(market), type(uint256).max);
    }

    function _bid(address who, uint256 price, uint256 quantity) internal returns (uint256 id) {
        vm.prank(who);
        id = market.placeBid(price, quantity);
        _assertConserved();
    }

    function _ask(address who, uint256 price, uint256 quantity) internal returns (uint256 id) {
        vm.prank(who);
        id = market.placeAsk(price, quantity);
        _assertConserved();
    }

    function _buyUp(address who, uint256 limit, uint256 quantity)
        internal
        returns (uint256 filled, uint256 spent)
    {
        vm.prank(who);
        (filled, spent) = market.buyUp(limit, quantity);
        _assertConserved();
    }

    function _buyDown(address who, uint256 limit, uint256 quantity)
        internal
        returns (uint256 filled, uint256 spent)
    {
        vm.prank(who);
        (filled, spent) = market.buyDown(limit, quantity);
        _assertConserved();
    }

    /// The market holds exactly the escrow of resting orders plus one unit per claimable unit.
    function _assertConserved() internal view {
        assertEq(
            usd.balanceOf(address(market)),
            market.escrowTotal() + market.outstanding(),
            "collateral != escrowTotal + outstanding"
        );
    }

    /// The maker order ids of the market's `Fill` events since `vm.recordLogs()`, in order.
    function _recordedFillIds() internal returns (uint256[] memory ids) {
        Vm.Log[] memory logs = vm.getRecordedLogs();
        uint256 count;
        for (uint256 i; i < logs.length; ++i) {
            if (_isFill(logs[i])) ++count;
        }
        ids = new uint256[](count);
        count = 0;
        for (uint256 i; i < logs.length; ++i) {
            if (_isFill(logs[i])) ids[count++] = uint256(logs[i].topics[1]);
        }
    }

    function _isFill(Vm.Log memory log) private view returns (bool) {
        return log.emitter == address(market) && log.topics[0] == IBinaryMarket.Fill.selector;
    }

    function _assertIds(uint256[] memory actual, uint256[] memory expected, string memory what)
        internal
        pure
    {
        assertEq(actual.length, expected.length, string.concat(what, ": count"));
        for (uint256 i; i < expected.length; ++i) {
            assertEq(actual[i], expected[i], what);
        }
    }

    function _assertLevel(IBinaryMarket.Level memory level, uint256 price, uint256 quantity)
        internal
        pure
    {
        assertEq(level.price, price, "level price");
        assertEq(level.quantity, quantity, "level quantity");
    }
}
