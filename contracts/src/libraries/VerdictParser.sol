// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {Verdict, Verdicts} from "./GateTypes.sol";

/// @title VerdictParser
/// @notice Strict parsing of a model's answer into a verdict code. It never allocates or copies
/// the input: it scans calldata in place and compares one word, so a 100 KB answer costs no more
/// than a 65-byte one.
/// @dev Must never accept text that merely contains a token, a token in another case, or a token
/// wrapped in anything but the six trim bytes.
library VerdictParser {
    /// @notice Longest raw answer that is even looked at, in bytes.
    uint256 internal constant MAX_RAW_LENGTH = 64;

    /// @dev Bit b set <=> byte b is trimmed: tab 0x09, LF 0x0A, CR 0x0D, space 0x20, `"` 0x22,
    /// `'` 0x27. Nothing else, in particular no non-ASCII whitespace and no backtick.
    uint256 private constant TRIM_SET =
        (1 << 0x09) | (1 << 0x0A) | (1 << 0x0D) | (1 << 0x20) | (1 << 0x22) | (1 << 0x27);

    // Tokens left-aligned in a word, as calldataload returns them.
    bytes32 private constant TOKEN_ABSTAIN = "ABSTAIN";
    bytes32 private constant TOKEN_BUY_UP = "BUY_UP";
    bytes32 private constant TOKEN_BUY_DOWN = "BUY_DOWN";

    /// @notice Returns (true, verdict) when `raw`, trimmed, is exactly one of the three tokens;
    /// (false, INVALID) otherwise, including for any input longer than MAX_RAW_LENGTH.
    function tryParse(string calldata raw) internal pure returns (bool ok, Verdict verdict) {
        uint256 end = bytes(raw).length;
        if (end > MAX_RAW_LENGTH) return (false, Verdicts.INVALID);
        uint256 at;
        assembly ("memory-safe") {
            at := raw.offset
        }
        // The common case first: the bare token, which trimming would leave as it is (no token
        // starts or ends with a trim byte), so this answers exactly what the full scan would.
        (ok, verdict) = _token(at, 0, end);
        if (ok) return (ok, verdict);
        uint256 start;
        // Bytes are read in place; every index stays below `end` <= 64, so nothing overflows
        // (this costs a ninth of what checked indexing into calldata did).
        unchecked {
            while (start < end && _isTrimAt(at + start)) ++start;
            while (end > start && _isTrimAt(at + end - 1)) --end;
        }

        return _token(at, start, end);
    }

    /// @dev Whether calldata bytes [at + start, at + end) are exactly one of the three tokens.
    function _token(uint256 at, uint256 start, uint256 end)
        private
        pure
        returns (bool ok, Verdict verdict)
    {
        uint256 n = end - start;
        if (n < 6 || n > 8) return (false, Verdicts.INVALID);
        bytes32 word;
        assembly ("memory-safe") {
            word := calldataload(add(at, start))
            // Keep the first n bytes: whatever follows the trimmed token must not take part.
            word := and(word, not(shr(shl(3, n), not(0))))
        }

        if (n == 6 && word == TOKEN_BUY_UP) return (true, Verdicts.BUY_UP);
        if (n == 8 && word == TOKEN_BUY_DOWN) return (true, Verdicts.BUY_DOWN);
        if (n == 7 && word == TOKEN_ABSTAIN) return (true, Verdicts.ABSTAIN);
        return (false, Verdicts.INVALID);
    }

    /// @notice The first 32 bytes of `raw`, zero-padded on the right, read in place.
    function head(string calldata raw) internal pure returns (bytes32 word) {
        uint256 len = bytes(raw).length;
        assembly ("memory-safe") {
            word := calldataload(raw.offset)
        }
        if (len < 32) word &= ~bytes32(type(uint256).max >> (len * 8));
    }

    /// @notice The first MAX_RAW_LENGTH bytes of `raw`, copied: what a log carries of an
    /// answer (every parseable answer fits whole; the rest of a long one is only hashed).
    function logged(string calldata raw) internal pure returns (bytes memory) {
        bytes calldata all = bytes(raw);
        return all.length > MAX_RAW_LENGTH ? all[:MAX_RAW_LENGTH] : all;
    }

    /// @dev Whether the calldata byte at absolute position `at` is in TRIM_SET.
    function _isTrimAt(uint256 at) private pure returns (bool trim) {
        assembly ("memory-safe") {
            trim := and(shr(byte(0, calldataload(at)), TRIM_SET), 1)
        }
    }
}
