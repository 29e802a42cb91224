// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {IRiskGate} from "../../src/interfaces/IRiskGate.sol";
import {IAttestorSet} from "../../src/interfaces/IAttestorSet.sol";

/// @notice The relayed mode's setting: no attestors, every field 0.
function relayed() pure returns (IRiskGate.Attestors memory none) {
    none.signers = new address[](0);
}

/// @notice The mode setting `gate` was deployed with, read back from the chain: its attestor
/// set's, or the relayed setting when it has none.
function modeOf(IRiskGate gate) view returns (IRiskGate.Attestors memory) {
    address set = gate.attestorSet();
    return set == address(0) ? relayed() : IAttestorSet(set).attestors();
}

/// @notice `paramsHash` as the specification defines it, from what `gate` reports.
function paramsHashOf(IRiskGate gate) view returns (bytes32) {
    return keccak256(
        abi.encode(
            gate.bounds(),
            gate.trustedResolvers(),
            gate.trustedCreators(),
            modeOf(gate),
            gate.verdictSource()
        )
    );
}
