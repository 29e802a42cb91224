// SPDX-License-Identifier: MIT
pragma solidity 0.8.30;

import {Test} from "../utils/Test.sol";
import {Deploy} from "../../../script/Deploy.s.sol";
import {IRiskGate} from "../../src/interfaces/IRiskGate.sol";

/// @notice The deploy script's reading of the mode (issue 35) from `GATE_ATTESTORS` and its
/// settings. One test function: the variables are the process's, shared by every test thread.
contract DeployScriptAttestorsTest is Test {
    function test_readAttestors_fromTheEnvironment() public {
        Deploy script = new Deploy();
        address keeper = address(0xBEEF);

        // Unset: a relayed gate, every setting 0.
        IRiskGate.Attestors memory a = script.readAttestors(keeper);
        assertEq(a.signers.length, 0, "relayed");
        assertEq(uint256(a.threshold) + a.maxReadAge + a.maxSlippageBps, 0, "no settings");

        // A setting without attestors is refused: a forgotten list must not deploy relayed.
        vm.setEnv("GATE_MAX_READ_AGE", "7");
        vm.expectRevert(
            abi.encodeWithSelector(
                Deploy.AttestorSettingWithoutAttestors.selector, "GATE_MAX_READ_AGE"
            )
        );
        script.readAttestors(keeper);

        // Three given out of order: sorted, majority threshold 2, the read age given, 200 bps.
        vm.setEnv(
            "GATE_ATTESTORS",
            "0x0000000000000000000000000000000000000A03,0x0000000000000000000000000000000000000a01,0x0000000000000000000000000000000000000A02"
        );
        a = script.readAttestors(keeper);
        assertEq(a.signers.length, 3);
        assertEq(a.signers[0], address(0xA01));
        assertEq(a.signers[1], address(0xA02));
        assertEq(a.signers[2], address(0xA03));
        assertEq(uint256(a.threshold), 2, "3 / 2 + 1");
        assertEq(uint256(a.maxReadAge), 7);
        assertEq(uint256(a.maxSlippageBps), 200);

        // The keeper among them is refused before anything is deployed.
        vm.setEnv(
            "GATE_ATTESTORS",
            "0x0000000000000000000000000000000000000A01,0x000000000000000000000000000000000000BEEF"
        );
        vm.expectRevert(
            abi.encodeWithSelector(Deploy.TrustedListHasKeeper.selector, "GATE_ATTESTORS", keeper)
        );
        script.readAttestors(keeper);
    }
}
