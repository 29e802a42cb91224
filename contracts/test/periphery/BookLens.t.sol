// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {VenueFixture} from "../venue/VenueFixture.sol";
import {BookLens} from "../../src/periphery/BookLens.sol";
import {BinaryMarket} from "../../src/venue/BinaryMarket.sol";
import {IBinaryMarket} from "../../src/interfaces/IBinaryMarket.sol";

/// @notice The deployless lens: every market's read comes back, in order, as `Books(...)`
/// revert data, and a market it cannot read is flagged instead of failing the others.
contract BookLensTest is VenueFixture {
    /// The keeper's book depth (keeper/src/chain/reads.rs `BOOK_DEPTH`).
    uint256 internal constant DEPTH = 3;

    /// Runs the lens over `markets` and decodes its `Books` outcome.
    function _lens(address[] memory markets) internal returns (BookLens.Book[] memory) {
        try new BookLens(markets, DEPTH) {
            revert("the lens must never deploy");
        } catch (bytes memory err) {
            assertGe(err.length, 4, "revert data holds a selector");
            // Checked just above to hold at least the four selector bytes.
            // forge-lint: disable-next-line(unsafe-typecast)
            assertEq(bytes4(err), BookLens.Books.selector, "outcome is Books");
            bytes memory args = new bytes(err.length - 4);
            for (uint256 i = 0; i < args.length; ++i) {
                args[i] = err[i + 4];
            }
            return abi.decode(args, (BookLens.Book[]));
        }
    }

    function test_readsBooksInOrder_andFlagsWhatItCannotRead() public {
        // Market 0: bids at 0.40 (300) and 0.38 (200); asks at 0.45 (300), 0.47 (200),
        // 0.50 (400) and 0.52 (200): four ask levels, of which DEPTH = 3 come back.
        _bid(alice, 400_000, 300);
        _bid(bob, 380_000, 200);
        _ask(alice, 450_000, 300);
        _ask(bob, 470_000, 200);
        _ask(bob, 500_000, 400);
        _ask(alice, 520_000, 200);
        // Market 1: a fresh market with an empty book.
        BinaryMarket empty =
            BinaryMarket(factory.createMarket(QUESTION, TICK, LOT, MIN_QTY, EXPIRY, resolver));

        address[] memory list = new address[](4);
        list[0] = address(market);
        list[1] = address(empty);
        list[2] = makeAddr("no code"); // no code: flagged
        list[3] = address(usd); // code, but no gateQuote: the call reverts, flagged
        BookLens.Book[] memory books = _lens(list);

        assertEq(books.length, 4, "one result per market");
        assertTrue(books[0].ok, "market read");
        assertEq(books[0].bestBid, 400_000, "best bid");
        assertEq(books[0].bestAsk, 450_000, "best ask");
        assertFalse(books[0].finalized, "open");
        assertEq(books[0].bids.length, 2, "two bid levels");
        _assertLevel(books[0].bids[0], 400_000, 300);
        _assertLevel(books[0].bids[1], 380_000, 200);
        assertEq(books[0].asks.length, DEPTH, "ask levels capped at DEPTH");
        _assertLevel(books[0].asks[0], 450_000, 300);
        _assertLevel(books[0].asks[1], 470_000, 200);
        _assertLevel(books[0].asks[2], 500_000, 400);

        assertTrue(books[1].ok, "empty market read");
        assertEq(books[1].bestBid, 0, "no bid");
        assertEq(books[1].bestAsk, 0, "no ask");
        assertEq(books[1].bids.length, 0, "no bid level");
        assertEq(books[1].asks.length, 0, "no ask level");

        assertFalse(books[2].ok, "no code: not read");
        assertFalse(books[3].ok, "not a market: not read");
    }

    function test_readsFinality() public {
        _ask(alice, 450_000, 200);
        vm.warp(EXPIRY);
        vm.prank(resolver);
        market.resolve(true);
        address[] memory list = new address[](1);
        list[0] = address(market);
        BookLens.Book[] memory books = _lens(list);
        assertTrue(books[0].ok, "read");
        assertTrue(books[0].finalized, "final");
        assertEq(books[0].bestAsk, market.bestAsk(), "book as the market reports it");
    }

    function test_emptyList() public {
        assertEq(_lens(new address[](0)).length, 0, "nothing asked, nothing read");
    }
}
