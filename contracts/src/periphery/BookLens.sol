// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {IBinaryMarket} from "../interfaces/IBinaryMarket.sol";

/// @title BookLens
/// @notice A deployless, read-only lens: the keeper sends this contract's creation code with its
/// constructor arguments in one `eth_call` that has no `to`, and the constructor reads every
/// listed market the way the keeper's per-market reader does (`gateQuote`, then
/// `getBookLevels` for each side) and hands all of it back. Nothing is ever deployed, so it
/// works on any chain with no set-up and holds no state, funds or privileges.
/// @dev The result leaves the constructor as the revert data `Books(books)`, not as returned
/// code: returned code would pay 200 gas per byte and stop at the 24,576-byte code-size limit
/// (EIP-170), about 36 markets. A revert costs neither, so a call is bounded only by its gas.
/// The reader tells the result from a real failure by the `Books` selector.
contract BookLens {
    /// @notice One market's read. `ok` is false when the address holds no code or one of the
    /// three reads reverted; the other fields are then meaningless and the keeper reads that
    /// market on its own.
    struct Book {
        bool ok;
        uint256 bestBid;
        uint256 bestAsk;
        bool finalized;
        IBinaryMarket.Level[] bids;
        IBinaryMarket.Level[] asks;
    }

    /// @notice The lens's only outcome: every market's read, in the order given.
    error Books(Book[] books);

    /// @param markets The markets to read, in the order the result lists them.
    /// @param depth The most levels read per side (the keeper's `BOOK_DEPTH`).
    constructor(address[] memory markets, uint256 depth) {
        Book[] memory books = new Book[](markets.length);
        for (uint256 i = 0; i < markets.length; ++i) {
            books[i] = _read(IBinaryMarket(markets[i]), depth);
        }
        revert Books(books);
    }

    /// @notice Reads one market; a market that cannot be read comes back with `ok` false
    /// instead of failing the others.
    function _read(IBinaryMarket market, uint256 depth) private view returns (Book memory book) {
        // A high-level call to an address without code would revert the whole lens.
        if (address(market).code.length == 0) return book;
        // slither-disable-next-line calls-loop
        try market.gateQuote() returns (IBinaryMarket.GateQuote memory q) {
            book.bestBid = q.bestBid;
            book.bestAsk = q.bestAsk;
            book.finalized = q.finalized;
        } catch {
            return book;
        }
        // slither-disable-next-line calls-loop
        try market.getBookLevels(true, depth) returns (IBinaryMarket.Level[] memory levels) {
            book.bids = levels;
        } catch {
            return book;
        }
        // slither-disable-next-line calls-loop
        try market.getBookLevels(false, depth) returns (IBinaryMarket.Level[] memory levels) {
            book.asks = levels;
        } catch {
            return book;
        }
        book.ok = true;
    }
}
