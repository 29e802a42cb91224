// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {IBinaryMarket} from "../interfaces/IBinaryMarket.sol";

/// @title PromptText
/// @notice The user part of the keeper's prompt, rendered on chain byte for byte as the keeper
/// renders it (`Prompt::render` in keeper/src/inference/prompt.rs, format in docs/prompts.md),
/// and the prompt's hash. A contract that states a market to a model itself, instead of trusting
/// an off-chain `promptHash`, needs exactly the bytes the keeper would have sent: one byte off
/// and the hash matches nothing anyone can re-derive.
/// @dev It runs inside a transaction on every ask, so it is written for gas (about 10k for a
/// typical market): the output goes into one buffer reserved up front, with no per-piece
/// allocation, and memory reserved past its end is given back once the length is known. The
/// question is escaped 32 bytes at a time (a word holding no byte that needs an escape is copied
/// whole, only a word that does is walked byte by byte), the address is hex-encoded and
/// checksummed a word at a time, and a number is written two digits a step into one word.
library PromptText {
    /// @notice The best levels of each side shown (the keeper's BOOK_DEPTH): levels past it are
    /// not part of the prompt, so a book with more levels renders as its best three.
    uint256 internal constant BOOK_DEPTH = 3;
    /// @notice Between the system part and the user part in the hashed bytes (`Prompt::bytes`).
    bytes internal constant SEPARATOR = "\n---\n";

    /// @notice The question is not valid UTF-8; `at` is the byte index where the first invalid
    /// sequence starts (Rust's `Utf8Error::valid_up_to`). The keeper reads the question as a Rust
    /// `String`, so it never renders such a question and no prompt of it can be re-derived.
    error QuestionNotUtf8(uint256 at);

    /// @notice What the prompt states about one market at one block.
    struct Read {
        /// The market, shown EIP-55 checksummed.
        address market;
        /// The market's question; checked against the market's `questionHash()` by the caller.
        string question;
        /// Best bid and ask (0 for an empty side), the grids, the expiry and `finalized`. The
        /// keeper takes the grids and expiry from `MarketCreated`; they are the market's
        /// immutables, so `gateQuote()` returns the same values.
        IBinaryMarket.GateQuote quote;
        /// Bid levels, best first; more than BOOK_DEPTH allowed, only the first BOOK_DEPTH shown.
        IBinaryMarket.Level[] bids;
        /// Ask levels, best first; same rule.
        IBinaryMarket.Level[] asks;
        /// The block the book was read at (`readBlock`).
        uint64 readBlock;
        /// That block's timestamp.
        uint64 blockTime;
    }

    uint256 private constant HIGHS =
        0x8080808080808080808080808080808080808080808080808080808080808080;
    /// @dev The most bytes one uint256 takes in decimal.
    uint256 private constant MAX_DIGITS = 78;
    /// @dev Room for the literal text of a render (277 bytes without the level lines) and for
    /// the 32-byte stores that may run up to 32 bytes past the last byte written.
    uint256 private constant FIXED_BYTES = 400;

    /// @notice The user part of the prompt for `r`, byte for byte as `Prompt::render` writes it.
    /// @dev Reverts QuestionNotUtf8 when the question is not valid UTF-8: the keeper cannot hold
    /// such a question, so a prompt rendered from it would be one it never sends.
    function user(Read memory r) internal pure returns (string memory out) {
        bytes memory question = bytes(r.question);
        requireUtf8(question);

        uint256 bids = r.bids.length < BOOK_DEPTH ? r.bids.length : BOOK_DEPTH;
        uint256 asks = r.asks.length < BOOK_DEPTH ? r.asks.length : BOOK_DEPTH;
        // Every piece bounded: 5 uint256 and 4 uint64 header numbers, 2 numbers a level, the
        // question escaped at most 6 bytes a byte plus its quotes.
        uint256 cap = FIXED_BYTES + 42 + 2 + 6 * question.length + 9 * MAX_DIGITS + (bids + asks)
            * (2 * MAX_DIGITS + 6);
        uint256 p;
        assembly ("memory-safe") {
            out := mload(0x40)
            mstore(0x40, add(add(out, 0x20), cap))
            p := add(out, 0x20)
        }

        IBinaryMarket.GateQuote memory q = r.quote;
        p = _text(p, "market: ", 8);
        p = _checksummed(p, r.market);
        p = _text(p, "\nquestion: ", 11);
        p = _quoted(p, question);
        p = _text(p, "\ntick_size: ", 12);
        p = _decimal(p, q.tickSize);
        p = _text(p, "\nlot_size: ", 11);
        p = _decimal(p, q.lotSize);
        p = _text(p, "\nmin_quantity: ", 15);
        p = _decimal(p, q.minQuantity);
        p = _text(p, "\nexpiry_unix: ", 14);
        p = _decimal(p, q.expiry);
        p = _text(p, "\nread_block: ", 13);
        p = _decimal(p, r.readBlock);
        p = _text(p, "\nblock_time_unix: ", 18);
        p = _decimal(p, r.blockTime);
        p = _text(p, "\nseconds_to_expiry: ", 20);
        // u64::saturating_sub: a market past expiry shows 0, not a wrapped number.
        p = _decimal(p, q.expiry > r.blockTime ? q.expiry - r.blockTime : 0);
        p = q.finalized
            ? _text(p, "\nfinalized: true\nbest_bid: ", 27)
            : _text(p, "\nfinalized: false\nbest_bid: ", 28);
        p = _decimal(p, q.bestBid);
        p = _text(p, "\nbest_ask: ", 11);
        p = _decimal(p, q.bestAsk);
        p = _text(p, "\nbids (UP price, quantity), best", 32);
        p = _text(p, " first:\n", 8);
        p = _levels(p, r.bids, bids);
        p = _text(p, "asks (UP price, quantity), best ", 32);
        p = _text(p, "first:\n", 7);
        p = _levels(p, r.asks, asks);
        p = _text(p, "Answer BUY_UP, BUY_DOWN or ABSTA", 32);
        p = _text(p, "IN.", 3);

        assembly ("memory-safe") {
            mstore(out, sub(p, add(out, 0x20)))
            // Give back what the bound reserved beyond the last byte.
            mstore(0x40, and(add(p, 31), not(31)))
        }
    }

    /// @notice keccak256 of the bytes the keeper hashes: `system`, SEPARATOR, `userPart`
    /// (`Prompt::bytes`): the `promptHash` the gate publishes.
    function hash(string memory system, string memory userPart) internal pure returns (bytes32) {
        return keccak256(abi.encodePacked(system, SEPARATOR, userPart));
    }

    /// @notice `text` as a JSON string literal, exactly as `serde_json::to_string` writes a
    /// `String`: quoted; `"` and `\` backslash-escaped; 0x08, 0x09, 0x0A, 0x0C, 0x0D as `\b`,
    /// `\t`, `\n`, `\f`, `\r`; every other byte below 0x20 as `\u00XX`, hex in lowercase; every
    /// other byte (0x7F, `/`, multi-byte UTF-8) as it is. The result is one line whatever
    /// `text` holds, so a question cannot forge the prompt lines after it.
    /// @dev Copies bytes; does not check UTF-8 (see requireUtf8).
    function jsonQuoted(bytes memory text) internal pure returns (bytes memory out) {
        uint256 cap = 2 + 6 * text.length + 32;
        uint256 p;
        assembly ("memory-safe") {
            out := mload(0x40)
            mstore(0x40, add(add(out, 0x20), cap))
            p := add(out, 0x20)
        }
        p = _quoted(p, text);
        assembly ("memory-safe") {
            mstore(out, sub(p, add(out, 0x20)))
            mstore(0x40, and(add(p, 31), not(31)))
        }
    }

    /// @notice Reverts QuestionNotUtf8 at the first invalid sequence unless `text` is valid
    /// UTF-8 as Rust's `std::str::from_utf8` defines it.
    function requireUtf8(bytes memory text) internal pure {
        (bool valid, uint256 at) = utf8Error(text);
        if (!valid) revert QuestionNotUtf8(at);
    }

    /// @notice Whether `text` is valid UTF-8 as Rust's `std::str::from_utf8` defines it, and if
    /// not, the byte index where the first invalid sequence starts (`valid_up_to`); `at` is
    /// `text.length` when valid. Rejected, as Rust rejects them: a stray continuation byte,
    /// 0xC0, 0xC1 and 0xF5..0xFF anywhere, overlong forms (E0 below A0, F0 below 90 as second
    /// byte), surrogates U+D800..U+DFFF (ED above 9F), code points above U+10FFFF (F4 above 8F)
    /// and a sequence cut short, by the end of `text` or by a byte that does not continue it.
    function utf8Error(bytes memory text) internal pure returns (bool valid, uint256 at) {
        assembly ("memory-safe") {
            let len := mload(text)
            let base := add(text, 0x20)
            valid := 1
            for { let i := 0 } lt(i, len) {} {
                let w := mload(add(base, i))
                // Bytes past the end read as 0: never a continuation byte, so a sequence cut
                // short by the end fails its continuation check below, at its first byte.
                let left := sub(len, i)
                if lt(left, 32) { w := and(w, not(shr(mul(left, 8), not(0)))) }
                // A word of ASCII only is valid as a whole.
                if iszero(and(w, HIGHS)) {
                    i := add(i, 32)
                    continue
                }
                let b := byte(0, w)
                if lt(b, 0x80) {
                    i := add(i, 1)
                    continue
                }
                // Continuation bytes after the first and the bounds of the first of them.
                let more := 0
                let lo := 0x80
                let hi := 0xbf
                if and(gt(b, 0xc1), lt(b, 0xe0)) { more := 1 }
                if and(gt(b, 0xdf), lt(b, 0xf0)) {
                    more := 2
                    if eq(b, 0xe0) { lo := 0xa0 } // overlong below U+0800
                    if eq(b, 0xed) { hi := 0x9f } // surrogates U+D800..U+DFFF
                }
                if and(gt(b, 0xef), lt(b, 0xf5)) {
                    more := 3
                    if eq(b, 0xf0) { lo := 0x90 } // overlong below U+10000
                    if eq(b, 0xf4) { hi := 0x8f } // above U+10FFFF
                }
                let c := byte(1, w)
                let ok := and(gt(more, 0), and(iszero(lt(c, lo)), iszero(gt(c, hi))))
                if gt(more, 1) { ok := and(ok, eq(and(byte(2, w), 0xc0), 0x80)) }
                if gt(more, 2) { ok := and(ok, eq(and(byte(3, w), 0xc0), 0x80)) }
                if iszero(ok) {
                    valid := 0
                    at := i
                    break
                }
                i := add(i, add(more, 1))
            }
            if valid { at := len }
        }
    }

    // --- writers: each writes at `p` into the reserved buffer and returns the end

    /// @dev The first `n` bytes of `word` (n <= 32); the store may run past them, into the room
    /// the buffer reserves, and the next piece overwrites that.
    function _text(uint256 p, bytes32 word, uint256 n) private pure returns (uint256 end) {
        assembly ("memory-safe") {
            mstore(p, word)
            end := add(p, n)
        }
    }

    /// @dev `a` as EIP-55 writes it: `0x`, 40 lower-case hex digits, then each letter made upper
    /// case when the same nibble of keccak256(those 40 digits) is 8 or more. Done a word at a
    /// time (nibbles spread one to a byte), not a digit at a time: OpenZeppelin's
    /// `Strings.toChecksumHexString` writes the same text for some 18k gas more, a digit loop
    /// for some 7k more.
    function _checksummed(uint256 p, address a) private pure returns (uint256 end) {
        assembly ("memory-safe") {
            // The 32 nibbles of a 128-bit x, most significant first, one to a byte (low half).
            function nibbles(x) -> y {
                y := and(
                    or(x, shl(64, x)),
                    0x0000000000000000ffffffffffffffff0000000000000000ffffffffffffffff
                )
                y := and(
                    or(y, shl(32, y)),
                    0x00000000ffffffff00000000ffffffff00000000ffffffff00000000ffffffff
                )
                y := and(
                    or(y, shl(16, y)),
                    0x0000ffff0000ffff0000ffff0000ffff0000ffff0000ffff0000ffff0000ffff
                )
                y := and(
                    or(y, shl(8, y)),
                    0x00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff00ff
                )
                y := and(
                    or(y, shl(4, y)),
                    0x0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f0f
                )
            }
            let ones := 0x0101010101010101010101010101010101010101010101010101010101010101
            // An address's upper 96 bits are not guaranteed clean in assembly.
            a := and(a, 0xffffffffffffffffffffffffffffffffffffffff)
            // Digits 0..31 (the top 128 bits), then digits 32..39 (the low 32 bits) at the top of
            // a second word, whose other 24 bytes stay 0.
            let head := nibbles(shr(32, a))
            let tail := shl(192, nibbles(and(a, 0xffffffff)))
            // Nibble v (0..15) to its lower-case digit: 0x30 + v, and 0x27 more for a letter
            // (v + 6 carries into bit 4 exactly when v >= 10). No byte carries into the next.
            let headLetters := and(shr(4, add(head, mul(6, ones))), ones)
            let tailLetters := shl(192, shr(192, and(shr(4, add(tail, mul(6, ones))), ones)))
            head := add(head, add(mul(0x30, ones), mul(0x27, headLetters)))
            tail := add(tail, shl(192, shr(192, add(mul(0x30, ones), mul(0x27, tailLetters)))))
            mstore(p, shl(240, 0x3078)) // "0x"
            mstore(add(p, 2), head)
            mstore(add(p, 34), tail)
            let h := keccak256(add(p, 2), 40)
            // Bit 3 of each spread hash nibble, moved to 0x20 and kept at letters: the case bit.
            let headCase := shl(2, and(nibbles(shr(128, h)), mul(8, ones)))
            let tailCase := shl(194, and(nibbles(and(shr(96, h), 0xffffffff)), mul(8, ones)))
            mstore(add(p, 2), xor(head, and(headCase, shl(5, headLetters))))
            mstore(add(p, 34), xor(tail, and(tailCase, shl(5, tailLetters))))
            end := add(p, 42)
        }
    }

    /// @dev `v` in decimal, as Rust's Display writes U256 and u64: no sign, no leading zeros.
    /// Below 1e32 (every price, quantity and u64) the digits are built two at a time in one
    /// word, stored once; above, digit by digit after counting them.
    function _decimal(uint256 p, uint256 v) private pure returns (uint256 end) {
        assembly ("memory-safe") {
            switch lt(v, 100000000000000000000000000000000)
            case 1 {
                let w := 0
                let n := 0
                for {} 1 {} {
                    let d := mod(v, 100)
                    w := or(shr(16, w), shl(240, add(0x3030, or(shl(8, div(d, 10)), mod(d, 10)))))
                    n := add(n, 2)
                    v := div(v, 100)
                    if iszero(v) { break }
                }
                // An odd count of digits wrote a leading 0 (v = 0 wrote "00"): drop it.
                if eq(byte(0, w), 0x30) {
                    w := shl(8, w)
                    n := sub(n, 1)
                }
                mstore(p, w)
                end := add(p, n)
            }
            default {
                // 33 to 78 digits.
                let n := 33
                for { let t := div(v, 1000000000000000000000000000000000) } t { t := div(t, 10) } {
                    n := add(n, 1)
                }
                end := add(p, n)
                let q := end
                for {} v {} {
                    q := sub(q, 1)
                    mstore8(q, add(48, mod(v, 10)))
                    v := div(v, 10)
                }
            }
        }
    }

    /// @dev The first `shown` levels, one line each: two spaces, price, ` x `, quantity.
    function _levels(uint256 p, IBinaryMarket.Level[] memory levels, uint256 shown)
        private
        pure
        returns (uint256)
    {
        for (uint256 k; k < shown; ++k) {
            p = _text(p, "  ", 2);
            p = _decimal(p, levels[k].price);
            p = _text(p, " x ", 3);
            p = _decimal(p, levels[k].quantity);
            p = _text(p, "\n", 1);
        }
        return p;
    }

    /// @dev `text` as serde_json quotes it (see jsonQuoted). A word is tested for a byte below
    /// 0x20, a `"` or a `\` with the exact SWAR tests `(x - 0x01..*n) & ~x & 0x80..` ("a byte
    /// below n", n <= 128) and the same on `x ^ c` with n = 1 ("a byte equal to c"): a clean
    /// word is stored whole, the rest go byte by byte. Bytes past the end of `text` are read as
    /// `a`, which needs no escape, and the cursor only moves by the bytes that are `text`.
    function _quoted(uint256 p, bytes memory text) private pure returns (uint256 end) {
        assembly ("memory-safe") {
            // Nonzero iff a byte of x is below n (n <= 128).
            function anyBelow(x, n) -> r {
                let ones := 0x0101010101010101010101010101010101010101010101010101010101010101
                r := and(and(sub(x, mul(ones, n)), not(x)), shl(7, ones))
            }
            // Nonzero iff a byte of x needs an escape: below 0x20, `"` or `\`.
            function dirty(x) -> r {
                let ones := 0x0101010101010101010101010101010101010101010101010101010101010101
                r := or(
                    anyBelow(x, 0x20),
                    or(anyBelow(xor(x, mul(ones, 0x22)), 1), anyBelow(xor(x, mul(ones, 0x5c)), 1))
                )
            }
            // Writes byte b at q as serde_json does; returns the end.
            function escaped(q, b) -> r {
                switch or(lt(b, 0x20), or(eq(b, 0x22), eq(b, 0x5c)))
                case 0 {
                    mstore8(q, b)
                    r := add(q, 1)
                }
                default {
                    mstore8(q, 0x5c)
                    // serde_json's short escapes: byte b (b < 0x20) of this word is 0x08 `b`,
                    // 0x09 `t`, 0x0A `n`, 0x0C `f`, 0x0D `r`, and 0 for the rest, written `\u00XX`.
                    let e :=
                        byte(b, 0x000000000000000062746e006672000000000000000000000000000000000000)
                    if iszero(lt(b, 0x20)) { e := b } // `\"` or `\\`
                    switch e
                    case 0 {
                        // `\u00` then two lowercase hex digits (b < 0x20).
                        mstore8(add(q, 1), 0x75)
                        mstore8(add(q, 2), 0x30)
                        mstore8(add(q, 3), 0x30)
                        mstore8(add(q, 4), add(0x30, shr(4, b)))
                        mstore8(add(q, 5), byte(and(b, 0x0f), "0123456789abcdef"))
                        r := add(q, 6)
                    }
                    default {
                        mstore8(add(q, 1), e)
                        r := add(q, 2)
                    }
                }
            }

            mstore8(p, 0x22)
            end := add(p, 1)
            let src := add(text, 0x20)
            let limit := add(src, mload(text))
            for {} lt(src, limit) { src := add(src, 32) } {
                let w := mload(src)
                let n := sub(limit, src)
                switch lt(n, 32)
                case 1 {
                    let keep := not(shr(mul(n, 8), not(0)))
                    w := or(
                        and(w, keep),
                        and(
                            0x6161616161616161616161616161616161616161616161616161616161616161,
                            not(keep)
                        )
                    )
                }
                default { n := 32 }
                switch dirty(w)
                case 0 {
                    mstore(end, w)
                    end := add(end, n)
                }
                default {
                    for { let i := 0 } lt(i, n) { i := add(i, 1) } {
                        end := escaped(end, byte(i, w))
                    }
                }
            }
            mstore8(end, 0x22)
            end := add(end, 1)
        }
    }
}
