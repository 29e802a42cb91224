// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {Test, console} from "../utils/Test.sol";
import {RiskGate} from "../../src/RiskGate.sol";
import {IRiskGate} from "../../src/interfaces/IRiskGate.sol";
import {BinaryMarket} from "../../src/venue/BinaryMarket.sol";
import {MarketFactory} from "../../src/venue/MarketFactory.sol";
import {TestCollateral} from "../../src/venue/TestCollateral.sol";
import {GateHandler} from "./handlers/GateHandler.sol";

/// @notice Gate and venue under random answers, quotes (honest, compromised, stale),
/// sandwiches, time (past the write-off grace too), honest and hostile trusted resolvers,
/// untrusted resolvers, funding, withdrawals, redemption and write-off. The bounds are tight
/// (orders of at most 500 units, 3 positions, 1_000 notional, 1_200 drawdown on 3_000 of funds)
/// so that every limit binds within a run.
contract RiskGateInvariantTest is Test {
    uint8 internal constant MAX_CONCURRENT = 3;
    uint256 internal constant MAX_NOTIONAL = 1_000;
    uint256 internal constant MAX_DRAWDOWN = 1_200;
    uint32 internal constant GRACE = 3_600;

    RiskGate internal gate;
    GateHandler internal handler;
    TestCollateral internal token;
    bytes32 internal initialParamsHash;

    function setUp() public {
        vm.warp(1_000_000);
        token = new TestCollateral();
        MarketFactory venue = new MarketFactory(address(token));
        address keeper = makeAddr("keeper");
        address honest = makeAddr("honest-resolver");
        address hostile = makeAddr("hostile-resolver");
        IRiskGate.Params memory p = IRiskGate.Params({
            minPrice: 100_000,
            maxPrice: 900_000,
            maxSize: 500,
            minHeadroom: 300,
            maxConcurrent: MAX_CONCURRENT,
            maxNotional: MAX_NOTIONAL,
            maxHorizon: 2 days,
            maxDrawdown: MAX_DRAWDOWN,
            writeOffGrace: GRACE,
            minFillBps: 2_500
        });
        address[] memory trusted = new address[](2);
        (trusted[0], trusted[1]) = honest < hostile ? (honest, hostile) : (hostile, honest);
        gate = new RiskGate(p, trusted, address(token), address(venue), keeper);
        token.mint(address(gate), 3_000);
        initialParamsHash = keccak256(abi.encode(p, trusted));
        handler = new GateHandler(
            gate,
            venue,
            token,
            keeper,
            address(this),
            honest,
            hostile,
            makeAddr("untrusted-resolver")
        );

        targetContract(address(handler));
        bytes4[] memory selectors = new bytes4[](13);
        selectors[0] = GateHandler.createMarket.selector;
        selectors[1] = GateHandler.quote.selector;
        selectors[2] = GateHandler.submit.selector;
        selectors[3] = GateHandler.passTime.selector;
        selectors[4] = GateHandler.resolve.selector;
        selectors[5] = GateHandler.resolveAgainstGate.selector;
        selectors[6] = GateHandler.redeem.selector;
        selectors[7] = GateHandler.housekeeping.selector;
        selectors[8] = GateHandler.fund.selector;
        selectors[9] = GateHandler.withdraw.selector;
        // Submissions are the point of the exercise: weight them four times.
        selectors[10] = GateHandler.submit.selector;
        selectors[11] = GateHandler.submit.selector;
        selectors[12] = GateHandler.submit.selector;
        targetSelector(FuzzSelector({addr: address(handler), selectors: selectors}));
    }

    /// Open positions never exceed maxConcurrent.
    function invariant_openPositionsWithinCap() public view {
        assertLe(uint256(gate.openPositions()), MAX_CONCURRENT);
    }

    /// Open notional never exceeds maxNotional, nor maxDrawdown.
    function invariant_openNotionalWithinCap() public view {
        assertLe(gate.openNotional(), MAX_NOTIONAL);
        assertLe(gate.openNotional(), MAX_DRAWDOWN);
    }

    /// The bounds, the trusted resolvers and their hash are the ones fixed at deploy.
    function invariant_boundsNeverChange() public view {
        assertEq(keccak256(abi.encode(gate.bounds(), gate.trustedResolvers())), initialParamsHash);
        assertEq(gate.paramsHash(), initialParamsHash);
    }

    /// The collateral balance never falls more than maxDrawdown below the high-water mark.
    function invariant_balanceAtLeastHighWaterMarkMinusDrawdown() public view {
        uint256 h = gate.highWaterMark();
        uint256 balance = token.balanceOf(address(gate));
        assertGe(balance + MAX_DRAWDOWN, h, "balance >= H - maxDrawdown");
    }

    /// No position holds a slot in a market that is still unresolved after expiry +
    /// writeOffGrace: every such slot has been freed by a third party's writeOff.
    function invariant_noSlotHeldPastGrace() public view {
        assertEq(handler.ghost_housekeepingFailures(), 0, "every eligible call went through");
        for (uint256 i; i < handler.marketCount(); ++i) {
            BinaryMarket m = handler.markets(i);
            IRiskGate.Position memory p = gate.positionOf(address(m));
            bool holdsSlot = (p.upUnits != 0 || p.downUnits != 0) && !p.writtenOff;
            if (!holdsSlot || m.finalized()) continue;
            assertLe(block.timestamp, uint256(m.expiry()) + GRACE, "slot held past the grace");
        }
    }

    /// The gate never holds anything in a market whose resolver it does not trust.
    function invariant_nothingHeldUnderUntrustedResolver() public view {
        for (uint256 i; i < handler.marketCount(); ++i) {
            BinaryMarket m = handler.markets(i);
            if (handler.kindOf(address(m)) != GateHandler.Kind.Untrusted) continue;
            IRiskGate.Position memory p = gate.positionOf(address(m));
            assertEq(p.upUnits + p.downUnits + p.notional, 0, "position under untrusted resolver");
        }
    }

    /// The gate's books agree with themselves: the position count and the notional are the
    /// sums over markets of what holds a slot, what it holds is what the markets say it holds,
    /// and it never holds both sides of one market.
    function invariant_gateAccountingMatchesPositions() public view {
        uint256 open;
        uint256 notional;
        for (uint256 i; i < handler.marketCount(); ++i) {
            BinaryMarket m = handler.markets(i);
            IRiskGate.Position memory p = gate.positionOf(address(m));
            if ((p.upUnits != 0 || p.downUnits != 0) && !p.writtenOff) {
                open += 1;
                notional += p.notional;
            }
            assertEq(m.upBalanceOf(address(gate)), p.upUnits, "UP units held");
            assertEq(m.downBalanceOf(address(gate)), p.downUnits, "DOWN units held");
            assertTrue(p.upUnits == 0 || p.downUnits == 0, "both sides held");
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
        console.log("written off", handler.ghost_writtenOff());
        console.log("sandwiches", handler.ghost_sandwiches());
        console.log("funded", handler.ghost_funded());
        console.log("withdrawn", handler.ghost_withdrawn());
        for (uint8 r = 1; r < 19; ++r) {
            console.log(string.concat("reason ", vm.toString(uint256(r))), handler.ghost_reasons(r));
        }
    }
}
