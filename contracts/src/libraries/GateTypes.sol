// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @notice A model's answer as the gate reads it (see `Verdicts`). Every external signature
/// carries it as its underlying `uint8`, so the ABI does not change with the type.
type Verdict is uint8;

/// @notice A rule code (see `Reasons`): 0 is PASS, any other is the rule that failed, and rule
/// `r` is bit `r` of a `failedMask`. The ABI carries it as `uint8`.
type Reason is uint8;

using {verdictEq as ==, verdictNe as !=} for Verdict global;
using {reasonEq as ==, reasonNe as !=, bit} for Reason global;

function verdictEq(Verdict a, Verdict b) pure returns (bool) {
    return Verdict.unwrap(a) == Verdict.unwrap(b);
}

function verdictNe(Verdict a, Verdict b) pure returns (bool) {
    return Verdict.unwrap(a) != Verdict.unwrap(b);
}

function reasonEq(Reason a, Reason b) pure returns (bool) {
    return Reason.unwrap(a) == Reason.unwrap(b);
}

function reasonNe(Reason a, Reason b) pure returns (bool) {
    return Reason.unwrap(a) != Reason.unwrap(b);
}

/// @notice The `failedMask` bit of rule `r`: `1 << r`.
function bit(Reason r) pure returns (uint256) {
    return 1 << Reason.unwrap(r);
}

/// @title Verdicts
/// @notice The verdict codes. A position's held side is the verdict of the buys that made it:
/// BUY_UP or BUY_DOWN, and ABSTAIN (0) when the gate holds nothing in that market.
library Verdicts {
    Verdict internal constant ABSTAIN = Verdict.wrap(0);
    Verdict internal constant BUY_UP = Verdict.wrap(1);
    Verdict internal constant BUY_DOWN = Verdict.wrap(2);
    /// @notice The verdict of an answer that did not parse; every code above BUY_DOWN is invalid.
    Verdict internal constant INVALID = Verdict.wrap(type(uint8).max);
}

/// @title Reasons
/// @notice The reason codes, stable across versions; labels are in `GateRules.label`.
library Reasons {
    Reason internal constant PASS = Reason.wrap(0);
    Reason internal constant ABSTAINED = Reason.wrap(1);
    Reason internal constant FINALIZED = Reason.wrap(2);
    Reason internal constant HEADROOM = Reason.wrap(3);
    Reason internal constant NO_LIQUIDITY = Reason.wrap(4);
    Reason internal constant PRICE_BAND = Reason.wrap(5);
    Reason internal constant SIZE_ZERO = Reason.wrap(6);
    Reason internal constant SIZE_BELOW_MIN = Reason.wrap(7);
    Reason internal constant MAX_CONCURRENT = Reason.wrap(8);
    Reason internal constant MAX_NOTIONAL = Reason.wrap(9);
    Reason internal constant COLLATERAL = Reason.wrap(10);
    Reason internal constant INVALID_VERDICT = Reason.wrap(11);
    Reason internal constant RESOLVER_UNTRUSTED = Reason.wrap(12);
    Reason internal constant HORIZON = Reason.wrap(13);
    Reason internal constant DRAWDOWN = Reason.wrap(14);
    Reason internal constant QUOTE_LIMIT = Reason.wrap(15);
    Reason internal constant EXPIRED = Reason.wrap(16);
    Reason internal constant OPPOSITE_SIDE = Reason.wrap(17);
    Reason internal constant FILL_BELOW_MIN = Reason.wrap(18);
    Reason internal constant CREATOR_UNTRUSTED = Reason.wrap(19);
    Reason internal constant MATCH_CAP = Reason.wrap(20);
    Reason internal constant NOT_ATTESTED = Reason.wrap(21);
    Reason internal constant ATTESTORS_DISAGREE = Reason.wrap(22);
    Reason internal constant NO_CONSENSUS_IN_TIME = Reason.wrap(23);
    /// @notice A batch element's order reverted at the market or ran past ORDER_GAS.
    Reason internal constant ORDER_FAILED = Reason.wrap(24);
}
