// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {GateTestBase} from "./GateTestBase.sol";
import {RiskGate} from "../../src/RiskGate.sol";
import {IRiskGate} from "../../src/interfaces/IRiskGate.sol";
import {Vm} from "../utils/Test.sol";

/// @notice Constructor validation: each bad bound reverts naming the field and the value.
contract RiskGateConstructorTest is GateTestBase {
    function _deploy(IRiskGate.Params memory p) internal returns (RiskGate) {
        return new RiskGate(p, collateral, factory, keeperAddr);
    }

    function test_constructor_revertsWhenMinPriceZero() public {
        IRiskGate.Params memory p = defaultParams();
        p.minPrice = 0;
        vm.expectRevert(abi.encodeWithSelector(IRiskGate.MinPriceZero.selector));
        _deploy(p);
    }

    function test_constructor_revertsWhenBandInvertedOrEmpty() public {
        IRiskGate.Params memory p = defaultParams();
        p.minPrice = 500_000;
        p.maxPrice = 500_000; // empty
        vm.expectRevert(abi.encodeWithSelector(IRiskGate.PriceBandEmpty.selector, 500_000, 500_000));
        _deploy(p);
        p.maxPrice = 499_999; // inverted
        vm.expectRevert(abi.encodeWithSelector(IRiskGate.PriceBandEmpty.selector, 500_000, 499_999));
        _deploy(p);
    }

    function test_constructor_revertsWhenMaxPriceAtCertainty() public {
        IRiskGate.Params memory p = defaultParams();
        p.maxPrice = 1_000_000;
        vm.expectRevert(
            abi.encodeWithSelector(IRiskGate.MaxPriceAtCertainty.selector, 1_000_000, 1_000_000)
        );
        _deploy(p);
        p.maxPrice = 999_999; // just below certainty: accepted
        _deploy(p);
    }

    function test_constructor_revertsWhenMaxSizeZero() public {
        IRiskGate.Params memory p = defaultParams();
        p.maxSize = 0;
        vm.expectRevert(abi.encodeWithSelector(IRiskGate.MaxSizeZero.selector));
        _deploy(p);
    }

    function test_constructor_revertsWhenHeadroomBelowFloor() public {
        IRiskGate.Params memory p = defaultParams();
        p.minHeadroom = 119;
        vm.expectRevert(
            abi.encodeWithSelector(
                IRiskGate.MinHeadroomBelowFloor.selector, uint32(119), uint32(120)
            )
        );
        _deploy(p);
        p.minHeadroom = 120; // at the floor: accepted
        assertEq(_deploy(p).bounds().minHeadroom, 120);
    }

    function test_constructor_revertsWhenMaxConcurrentZero() public {
        IRiskGate.Params memory p = defaultParams();
        p.maxConcurrent = 0;
        vm.expectRevert(abi.encodeWithSelector(IRiskGate.MaxConcurrentZero.selector));
        _deploy(p);
    }

    function test_constructor_revertsWhenMaxNotionalZero() public {
        IRiskGate.Params memory p = defaultParams();
        p.maxNotional = 0;
        vm.expectRevert(abi.encodeWithSelector(IRiskGate.MaxNotionalZero.selector));
        _deploy(p);
    }

    function test_constructor_revertsWhenAddressZero() public {
        vm.expectRevert(abi.encodeWithSelector(IRiskGate.ZeroAddress.selector, "collateral"));
        new RiskGate(defaultParams(), address(0), factory, keeperAddr);
        vm.expectRevert(abi.encodeWithSelector(IRiskGate.ZeroAddress.selector, "marketFactory"));
        new RiskGate(defaultParams(), collateral, address(0), keeperAddr);
        vm.expectRevert(abi.encodeWithSelector(IRiskGate.ZeroAddress.selector, "keeper"));
        new RiskGate(defaultParams(), collateral, factory, address(0));
    }

    function test_constructor_fixesBoundsAndEmitsParamsHash() public {
        IRiskGate.Params memory p = defaultParams();
        bytes32 expected = keccak256(abi.encode(p));
        vm.recordLogs();
        RiskGate g = _deploy(p);
        Vm.Log[] memory logs = vm.getRecordedLogs();
        bool seen;
        for (uint256 i; i < logs.length; ++i) {
            if (logs[i].topics[0] == IRiskGate.GateDeployed.selector) {
                assertEq(logs[i].topics[1], expected, "paramsHash topic");
                seen = true;
            }
        }
        assertTrue(seen, "GateDeployed emitted");
        assertEq(g.paramsHash(), expected);
        IRiskGate.Params memory b = g.bounds();
        assertEq(keccak256(abi.encode(b)), expected, "bounds read back field for field");
        assertEq(g.owner(), address(this));
        assertEq(g.keeper(), keeperAddr);
        assertEq(g.collateral(), collateral);
        assertEq(g.marketFactory(), factory);
    }
}
