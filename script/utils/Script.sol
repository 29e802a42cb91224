// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {Vm} from "../../contracts/test/utils/Vm.sol";
import {console} from "../../contracts/test/utils/console.sol";

/// @title Script
/// @notice A minimal base for `forge script` (forge-std is not available here): the cheatcode
/// handle and the flag forge looks for. Re-exports `Vm` and `console`.
abstract contract Script {
    /// @notice forge recognises this flag on script contracts.
    bool public constant IS_SCRIPT = true;

    /// @dev address(uint160(uint256(keccak256("hevm cheat code")))).
    Vm internal constant vm = Vm(0x7109709ECfa91a80626fF3989D68f67F5b1DD12D);
}
