// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {GateVenueBase} from "./GateVenueBase.sol";
import {IRiskGate} from "../../src/interfaces/IRiskGate.sol";
import {IBinaryMarket} from "../../src/interfaces/IBinaryMarket.sol";
import {IERC20} from "@openzeppelin/contracts/token/ERC20/IERC20.sol";
import {IERC20Errors} from "@openzeppelin/contracts/interfaces/draft-IERC6093.sol";

/// @notice A market whose code lies. Installed with vm.etch at an address the factory really
/// created, it stands for a venue bug: the gate must still never spend more than the worst case
/// it approved, nor book more than it asked for. Its resolver is the test contract (trusted).
contract LyingMarket {
    enum Mode {
        OverFill,
        OverPull,
        OverSpend,
        Reenter,
        ReenterExecute
    }

    Mode public mode;
    IERC20 public token;
    address public gate;
    address public resolver;

    function configure(Mode mode_, IERC20 token_, address gate_, address resolver_) external {
        mode = mode_;
        token = token_;
        gate = gate_;
        resolver = resolver_;
    }

    function gateQuote() external view returns (IBinaryMarket.GateQuote memory q) {
        q = IBinaryMarket.GateQuote({
            bestBid: 400_000,
            bestAsk: 420_000,
            tickSize: 10_000,
            lotSize: 100,
            minQuantity: 100,
            expiry: uint64(block.timestamp + 1 days),
            finalized: false
        });
    }

    function buyUp(uint256, uint256 quantity) external returns (uint256, uint256) {
        if (mode == Mode.OverFill) return (quantity + 1, 0);
        if (mode == Mode.OverPull) {
            // Try to take one unit more than the gate approved (420 for 1_000 at 0.42).
            if (!token.transferFrom(gate, address(this), 421)) revert();
            return (quantity, 421);
        }
        // Claims to have spent one unit more than the worst case, without taking it.
        if (mode == Mode.OverSpend) return (quantity, 421);
        if (mode == Mode.Reenter) {
            // Call back into the gate as if it were the keeper.
            IRiskGate(gate)
                .submitVerdict(address(this), "BUY_UP", bytes32(0), uint64(block.number), quote());
            return (0, 0);
        }
        // ReenterExecute: book a fill of its own through the gate's self-call.
        return IRiskGate(gate).executeOrder(address(this), 1, 420_000, quantity, 0);
    }

    function quote() public view returns (IRiskGate.Quote memory) {
        return IRiskGate.Quote(420_000, uint64(block.timestamp));
    }
}

contract RiskGateHostileMarketTest is GateVenueBase {
    /// @dev The keeper's quote for the lying book (ask 0.42): limit 420_000, cost 420.
    IRiskGate.Quote internal q;

    function _lie(LyingMarket.Mode mode) internal {
        // Keep the factory's registration, swap the code.
        vm.etch(address(market), type(LyingMarket).runtimeCode);
        LyingMarket(address(market)).configure(mode, token, address(gate), address(this));
        q = LyingMarket(address(market)).quote();
    }

    function test_submitVerdict_revertsWhenMarketReportsOverFill() public {
        _lie(LyingMarket.Mode.OverFill);
        // quantity 1_000, cost 420; the market claims 1_001 filled for 0 spent.
        vm.prank(keeperAddr);
        vm.expectRevert(
            abi.encodeWithSelector(IRiskGate.FillOutOfBounds.selector, 1_001, 1_000, 0, 420)
        );
        gate.submitVerdict(address(market), "BUY_UP", bytes32(0), readBlockNow(), q);
    }

    function test_submitVerdict_neverSpendsMoreThanApproved() public {
        _lie(LyingMarket.Mode.OverPull);
        vm.prank(keeperAddr);
        // The allowance is exactly the worst case, 420: the 421st unit cannot be taken.
        vm.expectRevert(
            abi.encodeWithSelector(
                IERC20Errors.ERC20InsufficientAllowance.selector, address(market), 420, 421
            )
        );
        gate.submitVerdict(address(market), "BUY_UP", bytes32(0), readBlockNow(), q);
        assertEq(token.balanceOf(address(gate)), GATE_FUNDS);
        assertEq(gate.openNotional(), 0);
    }

    function test_submitVerdict_revertsWhenMarketReportsOverSpend() public {
        _lie(LyingMarket.Mode.OverSpend);
        vm.prank(keeperAddr);
        vm.expectRevert(
            abi.encodeWithSelector(IRiskGate.FillOutOfBounds.selector, 1_000, 1_000, 421, 420)
        );
        gate.submitVerdict(address(market), "BUY_UP", bytes32(0), readBlockNow(), q);
    }

    function test_submitVerdict_refusesSelfCallFromMarket() public {
        // executeOrder is the gate's own frame: a market calling it is refused by name.
        _lie(LyingMarket.Mode.ReenterExecute);
        vm.prank(keeperAddr);
        vm.expectRevert(abi.encodeWithSelector(IRiskGate.OnlySelf.selector, address(market)));
        gate.submitVerdict(address(market), "BUY_UP", bytes32(0), readBlockNow(), q);
        assertEq(gate.openNotional(), 0);
        assertEq(uint256(gate.openPositions()), 0);
    }

    function test_submitVerdict_refusesReentryFromMarket() public {
        _lie(LyingMarket.Mode.Reenter);
        vm.prank(keeperAddr);
        // v2.1: the reentrancy lock refuses it before the keeper check would.
        vm.expectRevert(abi.encodeWithSignature("ReentrancyGuardReentrantCall()"));
        gate.submitVerdict(address(market), "BUY_UP", bytes32(0), readBlockNow(), q);
    }
}
