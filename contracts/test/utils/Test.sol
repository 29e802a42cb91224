// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {Vm} from "./Vm.sol";
import {console} from "./console.sol";

/// @title Test
/// @notice A minimal test base (forge-std is not available here): the cheatcode handle, the
/// assertion helpers (delegating to forge's native `vm.assert*`, which revert with a readable
/// message), `bound`, `makeAddr`, and the target/exclude getters forge's invariant runner reads.
/// @dev Re-exports `Vm` and `console`, so a test needs one import:
/// `import {Test, Vm, console} from "../utils/Test.sol";`.
abstract contract Test {
    /// @notice A selector allow-list for one target contract; forge reads it via
    /// `targetSelectors()` / `excludeSelectors()`. Field order is forge's ABI.
    struct FuzzSelector {
        address addr;
        bytes4[] selectors;
    }

    /// @notice forge recognises this flag on test contracts (ds-test heritage).
    bool public constant IS_TEST = true;

    /// @dev address(uint160(uint256(keccak256("hevm cheat code")))).
    Vm internal constant vm = Vm(0x7109709ECfa91a80626fF3989D68f67F5b1DD12D);

    uint256 private constant UINT256_MAX = type(uint256).max;
    uint256 private constant SIGN_BIT = 1 << 255;

    address[] private _targetedContracts;
    address[] private _excludedContracts;
    address[] private _targetedSenders;
    address[] private _excludedSenders;
    FuzzSelector[] private _targetedSelectors;
    FuzzSelector[] private _excludedSelectors;

    // --- invariant configuration (call from setUp)

    function targetContract(address target) internal {
        _targetedContracts.push(target);
    }

    function excludeContract(address target) internal {
        _excludedContracts.push(target);
    }

    function targetSender(address sender) internal {
        _targetedSenders.push(sender);
    }

    function excludeSender(address sender) internal {
        _excludedSenders.push(sender);
    }

    function targetSelector(FuzzSelector memory selector) internal {
        _targetedSelectors.push(selector);
    }

    function excludeSelector(FuzzSelector memory selector) internal {
        _excludedSelectors.push(selector);
    }

    // --- getters forge's invariant runner calls on the test contract

    function targetContracts() public view returns (address[] memory) {
        return _targetedContracts;
    }

    function excludeContracts() public view returns (address[] memory) {
        return _excludedContracts;
    }

    function targetSenders() public view returns (address[] memory) {
        return _targetedSenders;
    }

    function excludeSenders() public view returns (address[] memory) {
        return _excludedSenders;
    }

    function targetSelectors() public view returns (FuzzSelector[] memory) {
        return _targetedSelectors;
    }

    function excludeSelectors() public view returns (FuzzSelector[] memory) {
        return _excludedSelectors;
    }

    // --- helpers

    /// @notice Maps any `x` into `[min, max]` deterministically. Values already inside are kept;
    /// the smallest inputs (0..3) map to `min + x` and the largest (MAX-3..MAX) to
    /// `max - (MAX - x)`, so the fuzzer's favourite edge values land on the range's edges;
    /// anything else wraps around by modulo (bias is irrelevant here).
    function bound(uint256 x, uint256 min, uint256 max) internal pure returns (uint256) {
        require(min <= max, "bound: min > max");
        if (x >= min && x <= max) return x;
        // Here [min, max] is not the full uint256 range (x would be inside), so size fits.
        uint256 size = max - min + 1;
        if (x <= 3 && x < size) return min + x;
        if (x >= UINT256_MAX - 3 && UINT256_MAX - x < size) return max - (UINT256_MAX - x);
        return min + (x % size);
    }

    /// @notice Signed variant of `bound`, by shifting into the unsigned domain.
    function boundInt(int256 x, int256 min, int256 max) internal pure returns (int256) {
        require(min <= max, "bound: min > max");
        uint256 ux = _flipSign(x);
        uint256 umin = _flipSign(min);
        uint256 umax = _flipSign(max);
        return _unflipSign(bound(ux, umin, umax));
    }

    /// @notice A labelled address derived from `name` (no key; use for passive actors).
    function makeAddr(string memory name) internal returns (address account) {
        account = address(uint160(uint256(keccak256(abi.encodePacked(name)))));
        vm.label(account, name);
    }

    /// @notice A labelled address and its private key (for actors that must sign).
    function makeAddrAndKey(string memory name)
        internal
        returns (address account, uint256 privateKey)
    {
        privateKey = uint256(keccak256(abi.encodePacked(name)));
        account = vm.addr(privateKey);
        vm.label(account, name);
    }

    /// @notice Advances block.timestamp by `secs`.
    function skip(uint256 secs) internal {
        vm.warp(block.timestamp + secs);
    }

    // --- assertions

    function assertTrue(bool condition) internal pure {
        vm.assertTrue(condition);
    }

    function assertTrue(bool condition, string memory err) internal pure {
        vm.assertTrue(condition, err);
    }

    function assertFalse(bool condition) internal pure {
        vm.assertFalse(condition);
    }

    function assertFalse(bool condition, string memory err) internal pure {
        vm.assertFalse(condition, err);
    }

    function assertEq(bool left, bool right) internal pure {
        vm.assertEq(left, right);
    }

    function assertEq(bool left, bool right, string memory err) internal pure {
        vm.assertEq(left, right, err);
    }

    function assertEq(uint256 left, uint256 right) internal pure {
        vm.assertEq(left, right);
    }

    function assertEq(uint256 left, uint256 right, string memory err) internal pure {
        vm.assertEq(left, right, err);
    }

    function assertEq(int256 left, int256 right) internal pure {
        vm.assertEq(left, right);
    }

    function assertEq(int256 left, int256 right, string memory err) internal pure {
        vm.assertEq(left, right, err);
    }

    function assertEq(address left, address right) internal pure {
        vm.assertEq(left, right);
    }

    function assertEq(address left, address right, string memory err) internal pure {
        vm.assertEq(left, right, err);
    }

    function assertEq(bytes32 left, bytes32 right) internal pure {
        vm.assertEq(left, right);
    }

    function assertEq(bytes32 left, bytes32 right, string memory err) internal pure {
        vm.assertEq(left, right, err);
    }

    function assertEq(string memory left, string memory right) internal pure {
        vm.assertEq(left, right);
    }

    function assertEq(string memory left, string memory right, string memory err) internal pure {
        vm.assertEq(left, right, err);
    }

    function assertEq(bytes memory left, bytes memory right) internal pure {
        vm.assertEq(left, right);
    }

    function assertEq(bytes memory left, bytes memory right, string memory err) internal pure {
        vm.assertEq(left, right, err);
    }

    function assertNotEq(uint256 left, uint256 right) internal pure {
        vm.assertNotEq(left, right);
    }

    function assertNotEq(uint256 left, uint256 right, string memory err) internal pure {
        vm.assertNotEq(left, right, err);
    }

    function assertNotEq(address left, address right) internal pure {
        vm.assertNotEq(left, right);
    }

    function assertNotEq(address left, address right, string memory err) internal pure {
        vm.assertNotEq(left, right, err);
    }

    function assertNotEq(bytes32 left, bytes32 right) internal pure {
        vm.assertNotEq(left, right);
    }

    function assertNotEq(bytes32 left, bytes32 right, string memory err) internal pure {
        vm.assertNotEq(left, right, err);
    }

    function assertLt(uint256 left, uint256 right) internal pure {
        vm.assertLt(left, right);
    }

    function assertLt(uint256 left, uint256 right, string memory err) internal pure {
        vm.assertLt(left, right, err);
    }

    function assertLt(int256 left, int256 right) internal pure {
        vm.assertLt(left, right);
    }

    function assertLt(int256 left, int256 right, string memory err) internal pure {
        vm.assertLt(left, right, err);
    }

    function assertGt(uint256 left, uint256 right) internal pure {
        vm.assertGt(left, right);
    }

    function assertGt(uint256 left, uint256 right, string memory err) internal pure {
        vm.assertGt(left, right, err);
    }

    function assertGt(int256 left, int256 right) internal pure {
        vm.assertGt(left, right);
    }

    function assertGt(int256 left, int256 right, string memory err) internal pure {
        vm.assertGt(left, right, err);
    }

    function assertLe(uint256 left, uint256 right) internal pure {
        vm.assertLe(left, right);
    }

    function assertLe(uint256 left, uint256 right, string memory err) internal pure {
        vm.assertLe(left, right, err);
    }

    function assertLe(int256 left, int256 right) internal pure {
        vm.assertLe(left, right);
    }

    function assertLe(int256 left, int256 right, string memory err) internal pure {
        vm.assertLe(left, right, err);
    }

    function assertGe(uint256 left, uint256 right) internal pure {
        vm.assertGe(left, right);
    }

    function assertGe(uint256 left, uint256 right, string memory err) internal pure {
        vm.assertGe(left, right, err);
    }

    function assertGe(int256 left, int256 right) internal pure {
        vm.assertGe(left, right);
    }

    function assertGe(int256 left, int256 right, string memory err) internal pure {
        vm.assertGe(left, right, err);
    }

    // ---

    /// @dev Order-preserving map int256 -> uint256 (flip the sign bit).
    function _flipSign(int256 x) private pure returns (uint256) {
        // casting to 'uint256' is safe because it reinterprets all 256 bits, then flips the top.
        // forge-lint: disable-next-line(unsafe-typecast)
        return uint256(x) ^ SIGN_BIT;
    }

    function _unflipSign(uint256 x) private pure returns (int256) {
        // casting to 'int256' is safe because it is the exact inverse of _flipSign.
        // forge-lint: disable-next-line(unsafe-typecast)
        return int256(x ^ SIGN_BIT);
    }
}
