// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {Test, console} from "../utils/Test.sol";
import {RiskGate} from "../../src/RiskGate.sol";
import {IRiskGate} from "../../src/interfaces/IRiskGate.sol";
import {BinaryMarket} from "../../src/venue/BinaryMarket.sol";
import {MarketFactory} from "../../src/venue/MarketFactory.sol";
import {TestCollateral} from "../../src/venue/TestCollateral.sol";
import {GateHandler} from "./handlers/GateHandler.sol";

/// @notice Gate and venue under random answers, quotes, time, resolution and redemption. The
/// bounds are tight (2 positions, 1_500 notional) so that the limits actually bind.
contract RiskGateInvariantTest is Test {
    RiskGate internal gate;
    GateHandler internal handler;
    TestCollateral internal token;
    bytes32 internal initialBoundsHash;

    function setUp() public {
        vm.warp(1_000_000);
        token = new TestCollateral();
        MarketFactory venue = new MarketFactory(address(token));
        address keeper = makeAddr("keeper");
        IRiskGate.Params memory p = IRiskGate.Params({
            minPrice: 100_000,
            maxPrice: 900_000,
            maxSize: 1_000,
            minHeadroom: 300,
            maxConcurrent: 2,
            maxNotional: 1_500
        });
        gate = new RiskGate(p, address(token), address(venue), keeper);
        token.mint(address(gate), 3_000);
        initialBoundsHash = keccak256(abi.encode(p));
        handler = new GateHandler(gate, venue, token, keeper);

        targetContract(address(handler));
        bytes4[] memory selectors = new bytes4[](7);
        selectors[0] = GateHandler.createMarket.selector;
        selectors[1] = GateHandler.quote.selector;
        selectors[2] = GateHandler.submit.selector;
        selectors[3] = GateHandler.passTime.selector;
        selectors[4] = GateHandler.resolve.selector;
        selectors[5] = GateHandler.redeem.selector;
        selectors[6] = GateHandler.fund.selector;
        targetSelector(FuzzSelector({addr: address(handler), selectors: selectors}));
    }

    /// Open positions never exceed maxConcurrent.
    function invariant_openPositionsWithinCap() public view {
        assertLe(uint256(gate.openPositions()), 2);
    }

    /// Open notional never exceeds maxNotional.
    function invariant_openNotionalWithinCap() public view {
        assertLe(gate.openNotional(), 1_500);
    }

    /// The bounds and their hash are the ones fixed at deploy.
    function invariant_boundsNeverChange() public view {
        assertEq(keccak256(abi.encode(gate.bounds())), initialBoundsHash);
        assertEq(gate.paramsHash(), initialBoundsHash);
    }

    /// The gate's books agree with themselves: the position count and the notional are the
    /// sums over markets of what it holds, and what it holds is what the markets say it holds.
    function invariant_gateAccountingMatchesPositions() public view {
        uint256 open;
        uint256 notional;
        for (uint256 i; i < handler.marketCount(); ++i) {
            BinaryMarket m = handler.markets(i);
            IRiskGate.Position memory p = gate.positionOf(address(m));
            if (p.upUnits != 0 || p.downUnits != 0) open += 1;
            notional += p.notional;
            assertEq(m.upBalanceOf(address(gate)), p.upUnits, "UP units held");
            assertEq(m.downBalanceOf(address(gate)), p.downUnits, "DOWN units held");
        }
        assertEq(uint256(gate.openPositions()), open, "position count");
        assertEq(gate.openNotional(), notional, "open notional");
    }

    /// Collateral is conserved: every market holds exactly its escrow plus its outstanding units.
    function invariant_collateralConserved() public view {
        for (uint256 i; i < handler.marketCount(); ++i) {
            BinaryMarket m = handler.markets(i);
            assertEq(token.balanceOf(address(m)), m.escrowTotal() + m.outstanding());
        }
    }

    /// A gate that has never been seen rejecting is a gate nobody should trust: the run must
    /// have produced both passes and refusals (checked once the run is long enough).
    function invariant_decisionsAreBothPassesAndRefusals() public view {
        if (handler.ghost_decisions() < 40) return;
        assertGt(handler.ghost_decisions(), handler.ghost_passes(), "some refusals");
    }

    /// Run summary, for reading with -vv: how often each path was taken.
    function afterInvariant() public view {
        console.log("decisions", handler.ghost_decisions());
        console.log("passes", handler.ghost_passes());
        console.log("settled", handler.ghost_settled());
        for (uint8 r = 1; r < 12; ++r) {
            console.log(string.concat("reason ", vm.toString(uint256(r))), handler.ghost_reasons(r));
        }
    }
}
