// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

/// @title console
/// @notice A few `console.log` overloads. forge (tests and scripts) intercepts static calls to
/// the console address and prints them; on a real chain nothing exists there, so a call is a
/// no-op. The selectors are forge's (`log(string)`, `log(string,uint256)`, ...); forge has no
/// `log(string,bytes32)`: format a bytes32 with `vm.toString` first.
library console {
    address internal constant CONSOLE = 0x000000000000000000636F6e736F6c652e6c6f67;

    function log(string memory message) internal view {
        _send(abi.encodeWithSignature("log(string)", message));
    }

    function log(string memory message, uint256 value) internal view {
        _send(abi.encodeWithSignature("log(string,uint256)", message, value));
    }

    function log(string memory message, int256 value) internal view {
        _send(abi.encodeWithSignature("log(string,int256)", message, value));
    }

    function log(string memory message, address value) internal view {
        _send(abi.encodeWithSignature("log(string,address)", message, value));
    }

    function log(string memory message, bool value) internal view {
        _send(abi.encodeWithSignature("log(string,bool)", message, value));
    }

    function log(string memory message, string memory value) internal view {
        _send(abi.encodeWithSignature("log(string,string)", message, value));
    }

    // ---

    function _send(bytes memory payload) private view {
        // The result is irrelevant: logging must never make a test or script fail.
        (bool ok,) = CONSOLE.staticcall(payload);
        ok;
    }
}
