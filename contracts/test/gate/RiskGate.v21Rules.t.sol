// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {GateTestBase} from "./GateTestBase.sol";
import {IRiskGate} from "../../src/interfaces/IRiskGate.sol";

/// @notice Rules 19 (market creator not trusted) and 20 (minimum fill beyond the venue's match
/// cap), from their specification, on the fixture's bounds: maxSize 1_000, minFillBps 3_000, so
/// the minimum fill of a 1_000 order is ceil(1_000 * 3_000 / 10_000) = 300 units.
contract RiskGateV21RulesTest is GateTestBase {
    function test_rule19_untrustedCreatorFailsWhateverElseHolds() public view {
        IRiskGate.Snapshot memory s = _s();
        s.creatorTrusted = false;
        // Both directions: BUY_UP and BUY_DOWN fail 19 alone.
        assertRejected(s, BUY_UP, 19, bit(19));
        assertRejected(s, BUY_DOWN, 19, bit(19));
        // With an untrusted resolver too, 12 is the lowest and both bits are set.
        s.resolverTrusted = false;
        assertRejected(s, BUY_UP, 12, bit(12) | bit(19));
        // ABSTAIN evaluates nothing else.
        assertRejected(s, ABSTAIN, 1, bit(1));
    }

    function test_rule20_matchCapBoundary() public view {
        IRiskGate.Snapshot memory s = _s();
        // Lot 1, so the minimum alone sets m. 64 * m >= 300 <=> m >= 5 (64 * 4 = 256 < 300).
        s.lotSize = 1;
        s.minQuantity = 5; // 64 * 5 = 320 >= 300: passes
        assertPass(s, BUY_UP, 420_000, 1_000, 950);
        s.minQuantity = 4; // 64 * 4 = 256 < 300: fails 20 alone
        assertRejected(s, BUY_UP, 20, bit(20));
        assertRejected(s, BUY_DOWN, 20, bit(20));
        // The lot counts as the smallest order when it is above the minimum: lot 5, minimum 0
        // (quantity 1_000 is on the 5-lot grid): 64 * 5 = 320 >= 300.
        s.lotSize = 5;
        s.minQuantity = 0;
        assertPass(s, BUY_UP, 420_000, 1_000, 950);
        // No grid and no minimum: m = 1, 64 < 300.
        s.lotSize = 0;
        assertRejected(s, BUY_UP, 20, bit(20));
    }

    function test_rule20_withAnotherFailureReportsBoth() public view {
        IRiskGate.Snapshot memory s = _s();
        s.lotSize = 1;
        s.minQuantity = 1;
        s.openPositions = MAX_CONCURRENT; // rule 8
        assertRejected(s, BUY_UP, 8, bit(8) | bit(20));
    }

    // ---

    function _s() internal pure returns (IRiskGate.Snapshot memory) {
        return baseSnapshot();
    }
}
