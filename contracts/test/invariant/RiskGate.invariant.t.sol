// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {Test, console} from "../utils/Test.sol";
import {RiskGate} from "../../src/RiskGate.sol";
import {paramsHashOf, relayed} from "../utils/Modes.sol";
import {IRiskGate} from "../../src/interfaces/IRiskGate.sol";
import {BinaryMarket} from "../../src/venue/BinaryMarket.sol";
import {MarketFactory} from "../../src/venue/MarketFactory.sol";
import {TestCollateral} from "../../src/venue/TestCollateral.sol";
import {FeeCollateral} from "../utils/FeeCollateral.sol";
import {GateHandler, IFaucetToken} from "./handlers/GateHandler.sol";
import {AttestedGateHandler} from "./handlers/AttestedGateHandler.sol";

/// @notice Gate and venue under random answers, quotes (honest, compromised, stale),
/// sandwiches, time (past the write-off grace too), honest and hostile trusted resolvers,
/// untrusted resolvers, funding, withdrawals, redemption and write-off. The bounds are tight
/// (orders of at most 500 units, 3 positions, 1_000 notional, 1_200 drawdown on 3_000 of funds)
/// so that every limit binds within a run.
contract RiskGateInvariantTest is Test {
    /// @dev Overridden by the fee-on-transfer variant below.
    function _feeToken() internal virtual returns (bool) {
        return false;
    }

    uint8 internal constant MAX_CONCURRENT = 3;
    uint256 internal constant MAX_NOTIONAL = 1_000;
    uint256 internal constant MAX_DRAWDOWN = 1_200;
    uint32 internal constant GRACE = 3_600;

    RiskGate internal gate;
    GateHandler internal handler;
    IFaucetToken internal token;
    bytes32 internal initialParamsHash;

    function setUp() public {
        vm.warp(1_000_000);
        token = _feeToken()
            ? IFaucetToken(address(new FeeCollateral()))
            : IFaucetToken(address(new TestCollateral()));
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
        // The handler creates the trusted markets; a stranger creates hostile ones (rule 19).
        address[] memory creators = new address[](1);
        creators[0] = makeAddr("trusted-creator");
        IRiskGate.Attestors memory mode = _mode();
        gate = new RiskGate(
            p, trusted, creators, address(token), address(venue), keeper, mode, address(0)
        );
        token.mint(address(gate), 3_000);
        initialParamsHash = keccak256(abi.encode(p, trusted, creators, mode, address(0)));
        handler = _newHandler(venue, keeper, honest, hostile, makeAddr("untrusted-resolver"));
        targetContract(address(handler));
        targetSelector(FuzzSelector({addr: address(handler), selectors: _selectors()}));
    }

    /// @dev The gate's mode: relayed here; the attested variant below overrides it.
    function _mode() internal virtual returns (IRiskGate.Attestors memory) {
        return relayed();
    }

    function _newHandler(
        MarketFactory venue,
        address keeper,
        address honest,
        address hostile,
        address untrusted
    ) internal virtual returns (GateHandler) {
        return new GateHandler(
            gate, venue, token, keeper, address(this), honest, hostile, untrusted, _feeToken()
        );
    }

    /// @dev What the fuzzer calls on the handler, weighted by repetition.
    function _selectors() internal pure virtual returns (bytes4[] memory selectors) {
        selectors = new bytes4[](18);
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
        selectors[13] = GateHandler.deposit.selector;
        selectors[14] = GateHandler.roundTrip.selector;
        selectors[15] = GateHandler.switchFee.selector;
        // Batches, twice: each is also held to the same decisions sent one by one.
        selectors[16] = GateHandler.submitBatch.selector;
        selectors[17] = GateHandler.submitBatch.selector;
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

    /// The bounds, the trusted resolvers and creators and their hash are the ones fixed at deploy.
    function invariant_boundsNeverChange() public view {
        assertEq(paramsHashOf(gate), initialParamsHash);
        assertEq(gate.paramsHash(), initialParamsHash);
    }

    /// The collateral balance never falls more than maxDrawdown below the high-water mark, as
    /// stored and as the gate would settle it now (a donation counted). With a token that takes
    /// fees the token itself can take more than the gate ever spends, so the fee variant checks
    /// only what the gate controls (below).
    function invariant_balanceAtLeastHighWaterMarkMinusDrawdown() public view {
        if (_feeTokenView()) return;
        uint256 balance = token.balanceOf(address(gate));
        assertGe(balance + MAX_DRAWDOWN, gate.highWaterMark(), "balance >= H - maxDrawdown");
        assertLe(handler.drawdownUsed(), int256(MAX_DRAWDOWN), "H - equity <= maxDrawdown");
    }

    /// Every deposit, withdrawal, donation and round trip left `H - equity` exactly as it was:
    /// no money movement refills (or uses) the drawdown budget, fee token or not.
    function invariant_moneyMovementsLeaveDrawdownUnchanged() public view {
        assertEq(handler.ghost_moneyMovementDrift(), 0, "H - equity moved with money");
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
            GateHandler.Kind kind = handler.kindOf(address(m));
            if (kind != GateHandler.Kind.Untrusted && kind != GateHandler.Kind.UntrustedCreator) {
                continue;
            }
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

    /// Collateral is conserved: every market holds exactly its escrow plus its outstanding units
    /// (not with a token that burns a fee from what the market receives).
    function invariant_collateralConserved() public view {
        if (_feeTokenView()) return;
        for (uint256 i; i < handler.marketCount(); ++i) {
            BinaryMarket m = handler.markets(i);
            assertEq(token.balanceOf(address(m)), m.escrowTotal() + m.outstanding());
        }
    }

    function _feeTokenView() internal view returns (bool) {
        return handler.feeToken();
    }

    /// A gate that has never been seen rejecting is a gate nobody should trust: the run must
    /// have produced both passes and refusals (checked once the run is long enough).
    function invariant_decisionsAreBothPassesAndRefusals() public view {
        if (handler.ghost_decisions() < 40) return;
        assertGt(handler.ghost_decisions(), handler.ghost_passes(), "some refusals");
    }

    /// A batch publishes and leaves exactly what the same decisions sent one by one do.
    function invariant_batchEqualsOneByOne() public view {
        assertEq(handler.ghost_batchMismatches(), 0);
    }

    /// Run summary, for reading with -vv: how often each path was taken.
    function afterInvariant() public view virtual {
        console.log("decisions", handler.ghost_decisions());
        console.log("passes", handler.ghost_passes());
        console.log("settled", handler.ghost_settled());
        console.log("written off", handler.ghost_writtenOff());
        console.log("sandwiches", handler.ghost_sandwiches());
        console.log("funded", handler.ghost_funded());
        console.log("withdrawn", handler.ghost_withdrawn());
        console.log("deposited", handler.ghost_deposited());
        console.log("round trips", handler.ghost_roundTrips());
        console.log("worst H - equity after a money movement", handler.ghost_worstDrawdown());
        console.log("batches", handler.ghost_batches());
        console.log(
            "batches not compared (a single call reverted)", handler.ghost_batchesUncompared()
        );
        for (uint8 r = 1; r < 25; ++r) {
            console.log(string.concat("reason ", vm.toString(uint256(r))), handler.ghost_reasons(r));
        }
    }
}

/// @notice The same runs over a collateral that starts and stops taking a fee on transfers:
/// deposits raise H only by what arrived, fees are losses, and a market the fee left short is
/// written off after the grace. What must still hold: the bounds, the caps, the books, nothing
/// held under an untrusted resolver or creator, and no money movement changing `H - equity`.
contract RiskGateFeeInvariantTest is RiskGateInvariantTest {
    function _feeToken() internal pure override returns (bool) {
        return true;
    }
}

/// @notice The same world around an attested gate (three attestors, k = 2, reads at most five
/// blocks old, 2 % slippage): the keeper sends what the attestors signed, alone or in
/// `submitAttestedVerdicts` batches, each batch held to the same calls sent one at a time
/// (`invariant_batchEqualsOneByOne`). Every bound, cap and book invariant above must hold for
/// it too. Fewer runs than the relayed suites in the ci profile: each call signs up to three
/// answers per element and each batch runs twice.
/// forge-config: ci.invariant.runs = 48
/// forge-config: ci.invariant.depth = 64
contract RiskGateAttestedInvariantTest is RiskGateInvariantTest {
    uint256[3] internal attestorKeys;

    function _mode() internal override returns (IRiskGate.Attestors memory a) {
        uint256[3] memory k = [
            uint256(keccak256("invariant attestor 0")),
            uint256(keccak256("invariant attestor 1")),
            uint256(keccak256("invariant attestor 2"))
        ];
        // Insertion sort of three keys by address: the set takes its signers ascending.
        for (uint256 i = 1; i < 3; ++i) {
            for (uint256 j = i; j > 0 && vm.addr(k[j - 1]) > vm.addr(k[j]); --j) {
                (k[j - 1], k[j]) = (k[j], k[j - 1]);
            }
        }
        attestorKeys = k;
        a.signers = new address[](3);
        for (uint256 i; i < 3; ++i) {
            a.signers[i] = vm.addr(k[i]);
        }
        a.threshold = 2;
        a.maxReadAge = 5;
        a.maxSlippageBps = 200;
    }

    function _newHandler(
        MarketFactory venue,
        address keeper,
        address honest,
        address hostile,
        address untrusted
    ) internal override returns (GateHandler) {
        return new AttestedGateHandler(
            gate, venue, token, keeper, address(this), honest, hostile, untrusted, attestorKeys
        );
    }

    function _selectors() internal pure override returns (bytes4[] memory selectors) {
        selectors = new bytes4[](18);
        selectors[0] = GateHandler.createMarket.selector;
        selectors[1] = GateHandler.quote.selector;
        selectors[2] = GateHandler.passTime.selector;
        selectors[3] = GateHandler.resolve.selector;
        selectors[4] = GateHandler.resolveAgainstGate.selector;
        selectors[5] = GateHandler.redeem.selector;
        selectors[6] = GateHandler.housekeeping.selector;
        selectors[7] = GateHandler.fund.selector;
        selectors[8] = GateHandler.withdraw.selector;
        selectors[9] = GateHandler.deposit.selector;
        selectors[10] = GateHandler.roundTrip.selector;
        // Attested calls are the point of the exercise: alone four times, batches three times.
        selectors[11] = AttestedGateHandler.submitAttested.selector;
        selectors[12] = AttestedGateHandler.submitAttested.selector;
        selectors[13] = AttestedGateHandler.submitAttested.selector;
        selectors[14] = AttestedGateHandler.submitAttested.selector;
        selectors[15] = AttestedGateHandler.submitAttestedBatch.selector;
        selectors[16] = AttestedGateHandler.submitAttestedBatch.selector;
        // Markets twice as often as the relayed suites: an attested market decides once per
        // read, and a run's first market is often one no order fits (rules 6 and 7).
        selectors[17] = GateHandler.createMarket.selector;
    }

    /// Run summary: the attested paths too.
    function afterInvariant() public view override {
        super.afterInvariant();
        AttestedGateHandler h = AttestedGateHandler(address(handler));
        console.log("attested calls alone", h.ghost_attestedSingles());
        console.log("answers signed by a key outside the set", h.ghost_forgedAnswers());
    }
}
