// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {IRiskGate} from "./IRiskGate.sol";

/// @title IAttestorSet
/// @notice An attested gate's signers and the check of their signed answers. The gate deploys
/// its set in its own constructor, so the set's signers and settings are fixed for the gate's
/// whole life like every other bound; the set holds no state and moves no money.
interface IAttestorSet {
    /// @notice The gate whose answers this set checks: the EIP-712 `verifyingContract`.
    function gate() external view returns (address);

    /// @notice The signers and settings, as deployed.
    function attestors() external view returns (IRiskGate.Attestors memory);

    function isAttestor(address who) external view returns (bool);

    /// @notice The EIP-712 domain separator attestors sign under: name "RiskGate", version "2",
    /// the current chain id and the gate.
    function domainSeparator() external view returns (bytes32);

    /// @notice Judges one attested call: it takes `IRiskGate.submitAttested`'s call data as
    /// sent, the `AttestedRead` appended (the gate forwards it with only the selector changed).
    /// `reason` is 21 (not attested: a signature that does not recover to an attestor, signers
    /// not strictly ascending, fewer than `threshold` answers, `readBlock` more than
    /// `maxReadAge` blocks old), 22 (no verdict, or more than one, reached `threshold`), or 0
    /// with the `verdict` taken and `limit`, the attested best price of the side bought plus
    /// `maxSlippageBps` of it. Whether `readBlock` was used before is the gate's to check.
    /// The answer shown (`head`, `length`, `hash`: the Decision's raw fields) is the first giving
    /// the verdict taken, else the first sent (empty when none was).
    /// Reverts `AttestationShape` unless there is one signature per answer and at most
    /// MAX_ATTESTORS, and `AttestedReadMissing` without the read.
    function tally(
        address market,
        uint64 readBlock,
        string[] calldata raws,
        bytes[] calldata sigs,
        IRiskGate.Quote calldata quote
    ) external view returns (IRiskGate.Judgment memory);
}
