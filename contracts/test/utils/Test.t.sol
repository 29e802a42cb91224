// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {Test} from "./Test.sol";

/// @notice Checks of the hand-written test base itself: `bound` keeps edges reachable and the
/// invariant getters return what was registered.
contract TestBaseTest is Test {
    function test_bound_keepsValuesInsideRange() public pure {
        assertEq(bound(5, 1, 10), 5);
        assertEq(bound(1, 1, 10), 1);
        assertEq(bound(10, 1, 10), 10);
    }

    function test_bound_mapsSmallInputsOntoLowerEdge() public pure {
        // 0..3 below the range map to min + x: 0 -> 100, 3 -> 103.
        assertEq(bound(0, 100, 200), 100);
        assertEq(bound(3, 100, 200), 103);
    }

    function test_bound_mapsLargestInputsOntoUpperEdge() public pure {
        // MAX maps to max, MAX - 1 to max - 1.
        assertEq(bound(type(uint256).max, 100, 200), 200);
        assertEq(bound(type(uint256).max - 1, 100, 200), 199);
    }

    function test_bound_wrapsOtherValuesByModulo() public pure {
        // size = 101; 1_000 % 101 = 91 -> 100 + 91 = 191.
        assertEq(bound(1_000, 100, 200), 191);
    }

    function test_bound_handlesSinglePointAndFullRange() public pure {
        assertEq(bound(12_345, 7, 7), 7);
        assertEq(bound(type(uint256).max, 0, type(uint256).max), type(uint256).max);
    }

    function test_boundInt_mapsIntoSignedRange() public pure {
        assertEq(boundInt(-5, -10, 10), -5);
        assertEq(boundInt(type(int256).min, -10, 10), -10);
        assertEq(boundInt(type(int256).max, -10, 10), 10);
    }

    function testFuzz_bound_alwaysInRange(uint256 x, uint256 lo, uint256 hi) public pure {
        if (lo > hi) (lo, hi) = (hi, lo);
        uint256 y = bound(x, lo, hi);
        assertGe(y, lo, "below min");
        assertLe(y, hi, "above max");
    }

    function test_targetGetters_returnRegisteredEntries() public {
        address a = makeAddr("a");
        targetContract(a);
        excludeSender(address(0xBEEF));
        bytes4[] memory sels = new bytes4[](1);
        sels[0] = this.test_targetGetters_returnRegisteredEntries.selector;
        targetSelector(FuzzSelector({addr: a, selectors: sels}));
        assertEq(targetContracts().length, 1);
        assertEq(targetContracts()[0], a);
        assertEq(excludeSenders()[0], address(0xBEEF));
        assertEq(targetSelectors()[0].addr, a);
        assertEq(bytes32(targetSelectors()[0].selectors[0]), bytes32(sels[0]));
        // keccak256("a") truncated to 20 bytes, as makeAddr documents.
        assertEq(a, address(uint160(uint256(keccak256("a")))));
    }

    function test_expectRevert_catchesCustomErrorData() public {
        Reverter r = new Reverter();
        vm.expectRevert(abi.encodeWithSelector(Reverter.Boom.selector, uint256(7)));
        r.boom(7);
    }

    function test_warp_movesTimestamp() public {
        vm.warp(1_000);
        skip(5);
        assertEq(block.timestamp, 1_005);
    }
}

contract Reverter {
    error Boom(uint256 value);

    function boom(uint256 value) external pure {
        revert Boom(value);
    }
}
