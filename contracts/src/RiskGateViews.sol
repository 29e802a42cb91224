// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {IRiskGate} from "./interfaces/IRiskGate.sol";
import {GateRules} from "./libraries/GateRules.sol";
import {Reason} from "./libraries/GateTypes.sol";

/// @title RiskGateViews
/// @notice The RiskGate views that no rule reads: the reason labels, the bounds and the trusted
/// lists as deployed. Each gate's constructor deploys its own, with the arguments it validated,
/// and forwards these four calls to it, so a caller sees them on the gate as before. Its own
/// contract so that the gate stays under the code size limit. Nothing here can change: it has
/// no function that writes, and its storage is written once, by its constructor.
contract RiskGateViews {
    /// @notice The gate that deployed this.
    address public immutable gate;

    IRiskGate.Params internal _bounds;
    address[] internal _resolvers;
    address[] internal _creators;

    constructor(
        IRiskGate.Params memory bounds_,
        address[] memory trustedResolvers_,
        address[] memory trustedCreators_
    ) {
        gate = msg.sender;
        _bounds = bounds_;
        _resolvers = trustedResolvers_;
        _creators = trustedCreators_;
    }

    /// @notice See `IRiskGate.reasonLabel`.
    function reasonLabel(uint8 reason) external pure returns (string memory) {
        return GateRules.label(Reason.wrap(reason));
    }

    /// @notice See `IRiskGate.bounds`.
    function bounds() external view returns (IRiskGate.Params memory) {
        return _bounds;
    }

    /// @notice See `IRiskGate.trustedResolvers`.
    function trustedResolvers() external view returns (address[] memory) {
        return _resolvers;
    }

    /// @notice See `IRiskGate.trustedCreators`.
    function trustedCreators() external view returns (address[] memory) {
        return _creators;
    }
}
