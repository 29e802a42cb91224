// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {VenueFixture} from "./VenueFixture.sol";
import {IMarketFactory} from "../../src/interfaces/IMarketFactory.sol";
import {BinaryMarket} from "../../src/venue/BinaryMarket.sol";
import {TestCollateral} from "../../src/venue/TestCollateral.sol";

/// @notice The factory: grid rule, expiry and resolver checks, and the `isMarket` registry that
/// RiskGate relies on to refuse look-alike markets.
contract MarketFactoryTest is VenueFixture {
    function test_createMarket_revertsWhenTickZero() public {
        vm.expectRevert(abi.encodeWithSelector(IMarketFactory.InvalidGrid.selector, 0, 100));
        factory.createMarket(0, 100, 0, EXPIRY, resolver);
    }

    function test_createMarket_revertsWhenTickAtCertainty() public {
        // 1e6 * 1 is a multiple of 1e6, but a tick of 1.0 leaves no price strictly inside (0, 1).
        vm.expectRevert(abi.encodeWithSelector(IMarketFactory.InvalidGrid.selector, ONE, 1));
        factory.createMarket(ONE, 1, 0, EXPIRY, resolver);
    }

    function test_createMarket_revertsWhenLotZero() public {
        vm.expectRevert(abi.encodeWithSelector(IMarketFactory.InvalidGrid.selector, TICK, 0));
        factory.createMarket(TICK, 0, 0, EXPIRY, resolver);
    }

    function test_createMarket_revertsWhenTickTimesLotNotMultipleOfOne() public {
        // 10_000 * 50 = 500_000, not a multiple of 1e6: a fill of 50 at 0.01 would cost 0.5.
        vm.expectRevert(abi.encodeWithSelector(IMarketFactory.InvalidGrid.selector, TICK, 50));
        factory.createMarket(TICK, 50, 0, EXPIRY, resolver);
        // 3 * 333_334 = 1_000_002, one part in a million off.
        vm.expectRevert(abi.encodeWithSelector(IMarketFactory.InvalidGrid.selector, 3, 333_334));
        factory.createMarket(3, 333_334, 0, EXPIRY, resolver);
    }

    function test_createMarket_revertsWithoutOverflowWhenLotHuge() public {
        // (2^256 - 1) mod 1e6 = 639_935 (2^256 ends in ...639_936);
        // 10_000 * 639_935 mod 1e6 = 350_000 != 0. The product itself would overflow.
        uint256 lot = type(uint256).max;
        vm.expectRevert(abi.encodeWithSelector(IMarketFactory.InvalidGrid.selector, TICK, lot));
        factory.createMarket(TICK, lot, 0, EXPIRY, resolver);
    }

    function test_createMarket_acceptsGridWhenProductIsExactMultiple() public {
        // 1 * 1e6, 250_000 * 4, 999_999 * 1e6: all multiples of 1e6.
        factory.createMarket(1, ONE, 0, EXPIRY, resolver);
        factory.createMarket(250_000, 4, 0, EXPIRY, resolver);
        factory.createMarket(999_999, ONE, 0, EXPIRY, resolver);
        assertEq(factory.marketCount(), 4); // plus the fixture's market
    }

    function test_createMarket_revertsWhenExpiryNow() public {
        vm.expectRevert(abi.encodeWithSelector(IMarketFactory.InvalidExpiry.selector, T0_64, T0));
        factory.createMarket(TICK, LOT, 0, T0_64, resolver);
    }

    function test_createMarket_revertsWhenExpiryPast() public {
        vm.expectRevert(
            abi.encodeWithSelector(IMarketFactory.InvalidExpiry.selector, T0_64 - 1, T0)
        );
        factory.createMarket(TICK, LOT, 0, T0_64 - 1, resolver);
    }

    function test_createMarket_revertsWhenResolverZero() public {
        vm.expectRevert(abi.encodeWithSelector(IMarketFactory.ZeroResolver.selector));
        factory.createMarket(TICK, LOT, 0, EXPIRY, address(0));
    }

    function test_createMarket_registersAndConfiguresWhenValid() public {
        address expected = _nextAddress(address(factory));
        vm.expectEmit(true, true, true, true, address(factory));
        emit IMarketFactory.MarketCreated(
            expected, 1, 20_000, 50, 500, EXPIRY + 60, bob, address(this)
        );
        address created = factory.createMarket(20_000, 50, 500, EXPIRY + 60, bob);
        assertEq(created, expected);
        assertTrue(factory.isMarket(created));
        // The creator is whoever called createMarket, and only factory markets have one.
        assertEq(factory.creatorOf(created), address(this), "creator recorded");
        assertEq(factory.creatorOf(bob), address(0), "not a market: no creator");
        assertFalse(factory.isMarket(bob));
        assertEq(factory.marketCount(), 2);
        assertEq(factory.marketAt(0), address(market));
        assertEq(factory.marketAt(1), created);

        BinaryMarket m = BinaryMarket(created);
        assertEq(m.tickSize(), 20_000);
        assertEq(m.lotSize(), 50);
        assertEq(m.minQuantity(), 500);
        assertEq(uint256(m.expiry()), uint256(EXPIRY) + 60);
        assertEq(m.resolver(), bob);
        assertEq(m.collateral(), address(usd));
        assertEq(factory.collateral(), address(usd));
    }

    function test_isMarket_falseWhenLookAlikeDeployedDirectly() public {
        // Same code, same parameters, not created by the factory: not trusted.
        BinaryMarket lookAlike =
            new BinaryMarket(address(usd), TICK, LOT, MIN_QTY, EXPIRY, resolver);
        assertFalse(factory.isMarket(address(lookAlike)));
        assertFalse(factory.isMarket(address(0)));
        assertFalse(factory.isMarket(alice));
        assertTrue(factory.isMarket(address(market)));
    }

    function test_marketAt_revertsWhenIndexOutOfRange() public {
        vm.expectRevert();
        factory.marketAt(1);
    }

    // ---

    /// CREATE address of `deployer`'s next contract: keccak256(rlp([deployer, nonce]))[12:].
    function _nextAddress(address deployer) private view returns (address) {
        uint64 nonce = vm.getNonce(deployer);
        require(nonce > 0 && nonce < 0x80, "nonce outside the one-byte RLP case");
        // casting to 'uint8' is safe because the nonce was just checked to be below 0x80.
        // forge-lint: disable-next-line(unsafe-typecast)
        uint8 nonce8 = uint8(nonce);
        return address(
            uint160(
                uint256(keccak256(abi.encodePacked(bytes1(0xd6), bytes1(0x94), deployer, nonce8)))
            )
        );
    }
}

contract TestCollateralTest is VenueFixture {
    function test_metadata_isTestUsdWithSixDecimals() public {
        TestCollateral token = new TestCollateral();
        assertEq(token.name(), "Test USD");
        assertEq(token.symbol(), "tUSD");
        assertEq(uint256(token.decimals()), 6);
        assertEq(token.totalSupply(), 0);
    }

    function test_mint_succeedsWhenCalledByAnyone() public {
        TestCollateral token = new TestCollateral();
        vm.prank(makeAddr("anyone"));
        token.mint(carol, 5e6);
        assertEq(token.balanceOf(carol), 5e6);
        assertEq(token.totalSupply(), 5e6);
    }
}
