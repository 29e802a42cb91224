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
        factory.createMarket(QUESTION, 0, 100, 0, EXPIRY, resolver);
    }

    function test_createMarket_revertsWhenTickAtCertainty() public {
        // 1e6 * 1 is a multiple of 1e6, but a tick of 1.0 leaves no price strictly inside (0, 1).
        vm.expectRevert(abi.encodeWithSelector(IMarketFactory.InvalidGrid.selector, ONE, 1));
        factory.createMarket(QUESTION, ONE, 1, 0, EXPIRY, resolver);
    }

    function test_createMarket_revertsWhenLotZero() public {
        vm.expectRevert(abi.encodeWithSelector(IMarketFactory.InvalidGrid.selector, TICK, 0));
        factory.createMarket(QUESTION, TICK, 0, 0, EXPIRY, resolver);
    }

    function test_createMarket_revertsWhenTickTimesLotNotMultipleOfOne() public {
        // 10_000 * 50 = 500_000, not a multiple of 1e6: a fill of 50 at 0.01 would cost 0.5.
        vm.expectRevert(abi.encodeWithSelector(IMarketFactory.InvalidGrid.selector, TICK, 50));
        factory.createMarket(QUESTION, TICK, 50, 0, EXPIRY, resolver);
        // 3 * 333_334 = 1_000_002, one part in a million off.
        vm.expectRevert(abi.encodeWithSelector(IMarketFactory.InvalidGrid.selector, 3, 333_334));
        factory.createMarket(QUESTION, 3, 333_334, 0, EXPIRY, resolver);
    }

    function test_createMarket_revertsWithoutOverflowWhenLotHuge() public {
        // (2^256 - 1) mod 1e6 = 639_935 (2^256 ends in ...639_936);
        // 10_000 * 639_935 mod 1e6 = 350_000 != 0. The product itself would overflow.
        uint256 lot = type(uint256).max;
        vm.expectRevert(abi.encodeWithSelector(IMarketFactory.InvalidGrid.selector, TICK, lot));
        factory.createMarket(QUESTION, TICK, lot, 0, EXPIRY, resolver);
    }

    function test_createMarket_acceptsGridWhenProductIsExactMultiple() public {
        // 1 * 1e6, 250_000 * 4, 999_999 * 1e6: all multiples of 1e6.
        factory.createMarket(QUESTION, 1, ONE, 0, EXPIRY, resolver);
        factory.createMarket(QUESTION, 250_000, 4, 0, EXPIRY, resolver);
        factory.createMarket(QUESTION, 999_999, ONE, 0, EXPIRY, resolver);
        assertEq(factory.marketCount(), 4); // plus the fixture's market
    }

    function test_createMarket_revertsWhenExpiryNow() public {
        vm.expectRevert(abi.encodeWithSelector(IMarketFactory.InvalidExpiry.selector, T0_64, T0));
        factory.createMarket(QUESTION, TICK, LOT, 0, T0_64, resolver);
    }

    function test_createMarket_revertsWhenExpiryPast() public {
        vm.expectRevert(
            abi.encodeWithSelector(IMarketFactory.InvalidExpiry.selector, T0_64 - 1, T0)
        );
        factory.createMarket(QUESTION, TICK, LOT, 0, T0_64 - 1, resolver);
    }

    function test_createMarket_revertsWhenResolverZero() public {
        vm.expectRevert(abi.encodeWithSelector(IMarketFactory.ZeroResolver.selector));
        factory.createMarket(QUESTION, TICK, LOT, 0, EXPIRY, address(0));
    }

    function test_createMarket_registersAndConfiguresWhenValid() public {
        address expected = _nextAddress(address(factory));
        vm.expectEmit(true, true, true, true, address(factory));
        emit IMarketFactory.MarketCreated(
            expected, 1, 20_000, 50, 500, EXPIRY + 60, bob, address(this), QUESTION
        );
        address created = factory.createMarket(QUESTION, 20_000, 50, 500, EXPIRY + 60, bob);
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
        assertEq(m.questionHash(), keccak256(bytes(QUESTION)), "question hash");
        assertEq(factory.collateral(), address(usd));
    }

    // --- the question: 1 to 280 bytes, hashed into the market, published whole

    function test_createMarket_acceptsQuestionOfExactly280Bytes() public {
        string memory q = string(_bytesOf("a", 280));
        BinaryMarket m = BinaryMarket(factory.createMarket(q, TICK, LOT, 0, EXPIRY, resolver));
        assertTrue(factory.isMarket(address(m)));
        assertEq(m.questionHash(), keccak256(_bytesOf("a", 280)), "hash of the 280 bytes");
    }

    function test_createMarket_revertsWhenQuestion281Bytes() public {
        string memory q = string(_bytesOf("a", 281));
        vm.expectRevert(abi.encodeWithSelector(IMarketFactory.QuestionTooLong.selector, 281, 280));
        factory.createMarket(q, TICK, LOT, 0, EXPIRY, resolver);
    }

    function test_createMarket_revertsWhenQuestionEmpty() public {
        vm.expectRevert(abi.encodeWithSelector(IMarketFactory.QuestionEmpty.selector));
        factory.createMarket("", TICK, LOT, 0, EXPIRY, resolver);
    }

    function test_createMarket_measuresQuestionInBytesNotCharacters() public {
        // U+20AC (euro sign) is 3 bytes in UTF-8: E2 82 AC.
        bytes memory euro = bytes(unicode"€");
        assertEq(euro.length, 3, "the euro sign is 3 bytes");
        // 93 euros and a "?": 94 characters, 93 * 3 + 1 = 280 bytes: accepted.
        bytes memory fits = bytes.concat(_repeat(euro, 93), "?");
        assertEq(fits.length, 280);
        BinaryMarket m =
            BinaryMarket(factory.createMarket(string(fits), TICK, LOT, 0, EXPIRY, resolver));
        assertEq(m.questionHash(), keccak256(fits), "hash over the UTF-8 bytes");
        // 94 euros: also 94 characters (far below 280), but 94 * 3 = 282 bytes: refused.
        bytes memory over = _repeat(euro, 94);
        vm.expectRevert(abi.encodeWithSelector(IMarketFactory.QuestionTooLong.selector, 282, 280));
        factory.createMarket(string(over), TICK, LOT, 0, EXPIRY, resolver);
    }

    function test_createMarket_storesKeccakOfTheQuestion() public {
        // The fixture's market and one with another question: each stores the hash of its text.
        assertEq(market.questionHash(), keccak256(bytes(QUESTION)), "fixture market");
        string memory other = unicode"Will BTC trade above 100 000 € on 2027-06-30?";
        BinaryMarket m = BinaryMarket(factory.createMarket(other, TICK, LOT, 0, EXPIRY, resolver));
        assertEq(m.questionHash(), keccak256(bytes(other)), "second market");
        assertNotEq(
            m.questionHash(), market.questionHash(), "different questions, different hashes"
        );
    }

    function test_createMarket_emitsTheExactQuestionText() public {
        // Non-ASCII and punctuation, published byte for byte (checked with every field).
        string memory q =
            unicode"Will the ECB cut its deposit rate to ≤ 1.50 % by 2027-03-31? (“yes” = UP)";
        address expected = _nextAddress(address(factory));
        vm.expectEmit(true, true, true, true, address(factory));
        emit IMarketFactory.MarketCreated(
            expected, 1, TICK, LOT, MIN_QTY, EXPIRY, resolver, address(this), q
        );
        assertEq(factory.createMarket(q, TICK, LOT, MIN_QTY, EXPIRY, resolver), expected);
    }

    /// Lengths 0..600: empty refused, 1..280 accepted and hashed, 281..600 refused with the
    /// length. The bytes vary with the seed, so the hash is over real content.
    function testFuzz_createMarket_questionLength(uint256 lengthSeed, bytes32 fill) public {
        uint256 length = bound(lengthSeed, 0, 600);
        bytes memory q = new bytes(length);
        for (uint256 i; i < length; ++i) {
            q[i] = fill[i % 32];
        }
        if (length == 0) {
            vm.expectRevert(abi.encodeWithSelector(IMarketFactory.QuestionEmpty.selector));
            factory.createMarket(string(q), TICK, LOT, 0, EXPIRY, resolver);
        } else if (length > 280) {
            vm.expectRevert(
                abi.encodeWithSelector(IMarketFactory.QuestionTooLong.selector, length, 280)
            );
            factory.createMarket(string(q), TICK, LOT, 0, EXPIRY, resolver);
        } else {
            BinaryMarket m =
                BinaryMarket(factory.createMarket(string(q), TICK, LOT, 0, EXPIRY, resolver));
            assertTrue(factory.isMarket(address(m)));
            assertEq(m.questionHash(), keccak256(q), "hash of the question");
        }
        assertEq(factory.marketCount(), length >= 1 && length <= 280 ? 2 : 1, "markets made");
    }

    function test_isMarket_falseWhenLookAlikeDeployedDirectly() public {
        // Same code, same parameters, not created by the factory: not trusted.
        BinaryMarket lookAlike = new BinaryMarket(
            address(usd), TICK, LOT, MIN_QTY, EXPIRY, resolver, keccak256(bytes(QUESTION))
        );
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

    function _bytesOf(bytes1 c, uint256 n) private pure returns (bytes memory out) {
        out = new bytes(n);
        for (uint256 i; i < n; ++i) {
            out[i] = c;
        }
    }

    function _repeat(bytes memory unit, uint256 n) private pure returns (bytes memory out) {
        for (uint256 i; i < n; ++i) {
            out = bytes.concat(out, unit);
        }
    }

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
