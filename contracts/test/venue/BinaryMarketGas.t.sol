// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {VenueFixture} from "./VenueFixture.sol";
import {console} from "../utils/Test.sol";

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
